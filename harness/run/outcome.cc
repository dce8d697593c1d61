#include "synk/harness/run/outcome.h"

#include <optional>

#include "synk/core/byte_io.h"
#include "synk/core/error.h"
#include "synk/harness/base/errors.h"

namespace synk::harness {
namespace {

constexpr uint32_t kMagic = 0x53594e4b;  // "SYNK"

void putOptional(ByteWriter& w, const std::optional<double>& v) {
  w.put<uint8_t>(v ? 1 : 0);
  w.put<double>(v.value_or(0));
}

std::optional<double> getOptional(ByteReader& r) {
  const bool present = r.get<uint8_t>() != 0;
  const double v = r.get<double>();
  return present ? std::optional<double>(v) : std::nullopt;
}

void putGpu(ByteWriter& w, const GpuReading& g) {
  w(g.gpu, g.seconds);
  for (const std::optional<double>& v :
       {g.sm_mhz, g.memory_mhz, g.power_w, g.energy_j, g.temperature_c, g.throttled_s})
    putOptional(w, v);
  w.put<uint64_t>(g.throttle_reasons);
}

GpuReading getGpu(ByteReader& r) {
  GpuReading g;
  r(g.gpu, g.seconds);
  for (std::optional<double>* v :
       {&g.sm_mhz, &g.memory_mhz, &g.power_w, &g.energy_j, &g.temperature_c, &g.throttled_s})
    *v = getOptional(r);
  g.throttle_reasons = r.get<uint64_t>();
  return g;
}

// The status travels as its stored text (toString) and is parsed once here.
PointStatus getStatus(ByteReader& r) {
  std::string text;
  r(text);
  const auto status = parsePointStatus(text);
  if (!status) throw RunFailed("a repetition's report is garbled (status '" + text + "')");
  return *status;
}

}  // namespace

// core's ByteWriter and ByteReader (core/byte_io.h): a count past the bytes left is refused
// before anything is allocated for it, a read past the end throws.
std::string encodeOutcome(const JobOutcome& outcome) {
  ByteWriter w;
  w.put(kMagic);
  w(toString(outcome.status), outcome.message, outcome.startup_ns);
  w.put<uint64_t>(outcome.points.size());
  for (const PointOutcome& p : outcome.points) {
    w(p.point, toString(p.status), p.message, p.wrong, p.steps, p.samples);
    w.put<uint64_t>(p.gpus.size());
    for (const GpuReading& g : p.gpus)
      putGpu(w, g);
    w(p.rank_times);
  }
  w.put(kMagic);
  return std::string(reinterpret_cast<const char*>(w.data()), w.size());
}

JobOutcome decodeOutcome(std::string_view bytes) {
  if (bytes.empty()) throw RunFailed("the repetition's process reported nothing");
  ByteReader r(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size());
  JobOutcome outcome;
  try {
    if (r.get<uint32_t>() != kMagic) throw RunFailed("a repetition's report is garbled");
    outcome.status = getStatus(r);
    r(outcome.message, outcome.startup_ns);
    const auto points = r.get<uint64_t>();
    r.checkCount(points, 1);
    for (uint64_t i = 0; i < points; ++i) {
      PointOutcome p;
      r(p.point);
      p.status = getStatus(r);
      r(p.message, p.wrong, p.steps, p.samples);
      const auto gpus = r.get<uint64_t>();
      r.checkCount(gpus, sizeof(int32_t) + sizeof(double));
      for (uint64_t k = 0; k < gpus; ++k)
        p.gpus.push_back(getGpu(r));
      r(p.rank_times);
      outcome.points.push_back(std::move(p));
    }
    if (r.get<uint32_t>() != kMagic || r.remaining() != 0) {
      throw RunFailed("a repetition's report is garbled");
    }
  } catch (const InternalError&) {  // a read or a count past the end
    throw RunFailed("a repetition's report ended early (its process died while writing it)");
  }
  return outcome;
}

}  // namespace synk::harness

#include "synk/harness/run/outcome.h"

#include <optional>
#include <type_traits>

#include "synk/core/byte_io.h"
#include "synk/core/error.h"
#include "synk/harness/base/errors.h"

namespace synk::harness {
namespace {

constexpr uint32_t kMagic = 0x53594e4b;  // "SYNK"

// What the pipe carries in a form of its own is written and read by one function each: Io is
// ByteWriter or ByteReader, and the value const when writing. As with byte_io.h's fields(), the
// one list serves both directions, so what is written and what is read cannot drift apart.
template <typename Io>
constexpr bool kWriting = std::is_same_v<Io, ByteWriter>;

// An optional: a presence byte, then the value (0 when absent, so no indeterminate bytes go).
template <typename Io, typename Optional>
void optionalIo(Io& io, Optional& v) {
  uint8_t present = v ? 1 : 0;
  double value = v.value_or(0);
  io(present, value);
  if constexpr (!kWriting<Io>) v = present ? std::optional<double>(value) : std::nullopt;
}

// A status travels as its stored word (toString) and is parsed once, on reading.
template <typename Io, typename Status>
void statusIo(Io& io, Status& status) {
  std::string word = toString(status);
  io(word);
  if constexpr (!kWriting<Io>) {
    const std::optional<PointStatus> parsed = parsePointStatus(word);
    if (!parsed) throw RunFailed("a repetition's report is garbled (status '" + word + "')");
    status = *parsed;
  }
}

template <typename Io, typename Gpu>
void gpuIo(Io& io, Gpu& g) {
  io(g.gpu, g.seconds);
  for (auto* v :
       {&g.sm_mhz, &g.memory_mhz, &g.power_w, &g.energy_j, &g.temperature_c, &g.throttled_s})
    optionalIo(io, *v);
  io(g.throttle_reasons);
}

// A list: its count, then every element through `each`. On reading, the count is checked against
// the bytes left (`min_bytes` an element at least) and the elements are appended one by one, so
// a garbled count allocates nothing.
template <typename Io, typename List, typename Each>
void listIo(Io& io, List& list, size_t min_bytes, Each each) {
  uint64_t n = list.size();
  io(n);
  if constexpr (kWriting<Io>) {
    for (auto& element : list)
      each(io, element);
  } else {
    io.checkCount(n, min_bytes);
    for (uint64_t i = 0; i < n; ++i)
      each(io, list.emplace_back());
  }
}

template <typename Io, typename Point>
void pointIo(Io& io, Point& p) {
  io(p.point);
  statusIo(io, p.status);
  io(p.message, p.wrong, p.steps, p.samples);
  listIo(io, p.gpus, sizeof(int32_t) + sizeof(double),
         [](Io& each_io, auto& g) { gpuIo(each_io, g); });
  io(p.rank_times);
}

template <typename Io, typename Job>
void jobIo(Io& io, Job& job) {
  statusIo(io, job.status);
  io(job.message, job.startup_ns);
  listIo(io, job.points, 1, [](Io& each_io, auto& p) { pointIo(each_io, p); });
}

}  // namespace

// core's ByteWriter and ByteReader (core/byte_io.h): a count past the bytes left is refused
// before anything is allocated for it, a read past the end throws.
std::string encodeOutcome(const JobOutcome& outcome) {
  ByteWriter w;
  w.put(kMagic);
  jobIo(w, outcome);
  w.put(kMagic);
  return std::string(reinterpret_cast<const char*>(w.data()), w.size());
}

JobOutcome decodeOutcome(std::string_view bytes) {
  if (bytes.empty()) throw RunFailed("the repetition's process reported nothing");
  ByteReader r(reinterpret_cast<const std::byte*>(bytes.data()), bytes.size());
  JobOutcome outcome;
  try {
    if (r.get<uint32_t>() != kMagic) throw RunFailed("a repetition's report is garbled");
    jobIo(r, outcome);
    if (r.get<uint32_t>() != kMagic || r.remaining() != 0) {
      throw RunFailed("a repetition's report is garbled");
    }
  } catch (const InternalError&) {  // a read or a count past the end
    throw RunFailed("a repetition's report ended early (its process died while writing it)");
  }
  return outcome;
}

}  // namespace synk::harness

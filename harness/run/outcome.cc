#include "synk/harness/run/outcome.h"

#include <cstring>
#include <optional>

#include "synk/harness/base/errors.h"

namespace synk::harness {
namespace {

constexpr uint32_t kMagic = 0x53594e4b;  // "SYNK"

class Writer {
 public:
  template <typename T>
  void put(T value) {
    out_.append(reinterpret_cast<const char*>(&value), sizeof value);
  }
  void put(const std::string& s) {
    put<uint64_t>(s.size());
    out_ += s;
  }
  void put(const std::optional<double>& v) {
    put<uint8_t>(v ? 1 : 0);
    put<double>(v.value_or(0));
  }
  std::string& bytes() { return out_; }

 private:
  std::string out_;
};

class Reader {
 public:
  explicit Reader(std::string_view in) : in_(in) {}
  template <typename T>
  T get() {
    need(sizeof(T));
    T value;
    std::memcpy(&value, in_.data() + at_, sizeof value);
    at_ += sizeof value;
    return value;
  }
  std::string text() {
    const uint64_t n = get<uint64_t>();
    need(n);
    std::string s(in_.substr(at_, n));
    at_ += n;
    return s;
  }
  std::optional<double> maybe() {
    const bool present = get<uint8_t>() != 0;
    const double v = get<double>();
    return present ? std::optional<double>(v) : std::nullopt;
  }
  bool done() const { return at_ == in_.size(); }
  void need(uint64_t n) const {
    if (n > in_.size() - at_)
      throw RunFailed("a repetition's report ended early (its process died while writing it)");
  }

 private:
  std::string_view in_;
  size_t at_ = 0;
};

}  // namespace

std::string encodeOutcome(const JobOutcome& outcome) {
  Writer w;
  w.put(kMagic);
  w.put(outcome.status);
  w.put(outcome.message);
  w.put(outcome.startup_ns);
  w.put<uint64_t>(outcome.points.size());
  for (const PointOutcome& p : outcome.points) {
    w.put<int32_t>(p.point);
    w.put(p.status);
    w.put(p.message);
    w.put(p.wrong);
    w.put(p.steps);
    w.put<uint64_t>(p.samples.size());
    w.bytes().append(reinterpret_cast<const char*>(p.samples.data()),
                     p.samples.size() * sizeof(SampleRecord));
    w.put<uint64_t>(p.gpus.size());
    for (const GpuReading& g : p.gpus) {
      w.put<int32_t>(g.gpu);
      w.put<double>(g.seconds);
      for (const std::optional<double>& v :
           {g.sm_mhz, g.memory_mhz, g.power_w, g.energy_j, g.temperature_c, g.throttled_s})
        w.put(v);
      w.put<uint64_t>(g.throttle_reasons);
    }
    w.put<uint64_t>(p.rank_times.size());
    w.bytes().append(reinterpret_cast<const char*>(p.rank_times.data()),
                     p.rank_times.size() * sizeof(RankTimesRecord));
  }
  w.put(kMagic);
  return std::move(w.bytes());
}

JobOutcome decodeOutcome(std::string_view bytes) {
  if (bytes.empty()) throw RunFailed("the repetition's process reported nothing");
  Reader r(bytes);
  if (r.get<uint32_t>() != kMagic) throw RunFailed("a repetition's report is garbled");
  JobOutcome outcome;
  outcome.status = r.text();
  outcome.message = r.text();
  outcome.startup_ns = r.get<int64_t>();
  const uint64_t points = r.get<uint64_t>();
  for (uint64_t i = 0; i < points; ++i) {
    PointOutcome p;
    p.point = r.get<int32_t>();
    p.status = r.text();
    p.message = r.text();
    p.wrong = r.get<int64_t>();
    p.steps = r.get<int64_t>();
    const uint64_t n = r.get<uint64_t>();
    if (n > bytes.size() / sizeof(SampleRecord))
      throw RunFailed("a repetition's report is garbled");
    p.samples.resize(n);
    for (SampleRecord& s : p.samples)
      s = r.get<SampleRecord>();
    const uint64_t gpus = r.get<uint64_t>();
    if (gpus > 4096) throw RunFailed("a repetition's report is garbled");
    for (uint64_t k = 0; k < gpus; ++k) {
      GpuReading g;
      g.gpu = r.get<int32_t>();
      g.seconds = r.get<double>();
      for (std::optional<double>* v :
           {&g.sm_mhz, &g.memory_mhz, &g.power_w, &g.energy_j, &g.temperature_c, &g.throttled_s})
        *v = r.maybe();
      g.throttle_reasons = r.get<uint64_t>();
      p.gpus.push_back(g);
    }
    const uint64_t times = r.get<uint64_t>();
    if (times > bytes.size() / sizeof(RankTimesRecord))
      throw RunFailed("a repetition's report is garbled");
    p.rank_times.resize(times);
    for (RankTimesRecord& t : p.rank_times)
      t = r.get<RankTimesRecord>();
    outcome.points.push_back(std::move(p));
  }
  if (r.get<uint32_t>() != kMagic || !r.done()) throw RunFailed("a repetition's report is garbled");
  return outcome;
}

}  // namespace synk::harness

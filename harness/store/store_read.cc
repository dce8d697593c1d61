// The Store's queries (store.h); writes are in store.cc.
#include <sqlite3.h>

#include "synk/harness/base/errors.h"
#include "synk/harness/base/json.h"
#include "synk/harness/store/store.h"
#include "synk/harness/store/store_sql.h"

namespace synk::harness {
namespace {

// A status column's text, parsed once here; anything else is a database this build cannot read.
PointStatus readStatus(const sql::Statement& s, int column, const char* what, int64_t id) {
  const std::string text = s.text(column);
  if (const auto status = parsePointStatus(text)) return *status;
  throw BadInput(std::string("the database's ") + what + " " + std::to_string(id) +
                 " has the status '" + text + "'; a status is one of " + pointStatusNames());
}

constexpr const char* kRunColumns =
    "id, experiment, kind, tag, config_file, config_text, config_resolved, command_line, "
    "commit_hash, dirty, build_type, host, cpu_model, cpu_cores, memory_bytes, gpu_model, "
    "gpu_count, gpu_topology, driver_version, cuda_version, nccl_version, machine_key, "
    "started_at, ended_at, status, message, process_id, boot_id, process_start, conditions, "
    "telemetry";

RunRecord readRun(const sql::Statement& s) {
  RunRecord r;
  int c = 0;
  r.id = s.integer(c++);
  r.experiment = s.text(c++);
  r.kind = s.text(c++);
  r.tag = s.text(c++);
  r.config_file = s.text(c++);
  r.config_text = s.text(c++);
  r.config_resolved = s.text(c++);
  r.command_line = s.text(c++);
  r.commit = s.text(c++);
  r.dirty = s.integer(c++) != 0;
  r.build_type = s.text(c++);
  r.host = s.text(c++);
  r.cpu_model = s.text(c++);
  r.cpu_cores = static_cast<int>(s.integer(c++));
  r.memory_bytes = s.integer(c++);
  r.gpu_model = s.text(c++);
  r.gpu_count = static_cast<int>(s.integer(c++));
  r.gpu_topology = s.text(c++);
  r.driver_version = s.text(c++);
  r.cuda_version = s.text(c++);
  r.nccl_version = s.text(c++);
  r.machine_key = s.text(c++);
  r.started_at = s.text(c++);
  r.ended_at = s.text(c++);
  r.status = s.text(c++);
  r.message = s.text(c++);
  r.process_id = s.integer(c++);
  r.boot_id = s.text(c++);
  r.process_start = s.integer(c++);
  r.conditions = s.text(c++);
  r.telemetry = s.text(c++);
  return r;
}

constexpr const char* kPointColumns =
    "id, run_id, seq, key, axes, status, reason, wrong, started_at, ended_at, nodes, "
    "ranks_per_node, hosts";

PointRecord readPoint(const sql::Statement& s) {
  PointRecord p;
  p.id = s.integer(0);
  p.run_id = s.integer(1);
  p.seq = static_cast<int>(s.integer(2));
  p.key = s.text(3);
  p.axes = parseFlatJson(s.text(4));
  p.status = readStatus(s, 5, "point", p.id);
  p.reason = s.text(6);
  p.wrong = s.integer(7);
  p.started_at = s.text(8);
  p.ended_at = s.text(9);
  p.nodes = s.isNull(10) ? 0 : static_cast<int>(s.integer(10));
  p.ranks_per_node = s.isNull(11) ? 0 : static_cast<int>(s.integer(11));
  p.hosts = s.isNull(12) ? "" : s.text(12);
  return p;
}

// Points matching `where` ("column = ?1 ORDER BY ..."), with `bind` supplying ?1.
template <typename Bind>
std::vector<PointRecord> queryPoints(sqlite3* db, const char* where, Bind bind) {
  const std::string query = std::string("SELECT ") + kPointColumns + " FROM point WHERE " + where;
  sql::Statement s(db, query.c_str());
  bind(s);
  std::vector<PointRecord> out;
  while (s.step())
    out.push_back(readPoint(s));
  return out;
}

}  // namespace

std::vector<RunRecord> Store::runs() const {
  const std::string query = std::string("SELECT ") + kRunColumns + " FROM run ORDER BY id DESC";
  sql::Statement s(db_, query.c_str());
  std::vector<RunRecord> out;
  while (s.step())
    out.push_back(readRun(s));
  return out;
}

std::optional<RunRecord> Store::run(int64_t id) const {
  const std::string query = std::string("SELECT ") + kRunColumns + " FROM run WHERE id = ?1";
  sql::Statement s(db_, query.c_str());
  s.bind(1, id);
  if (!s.step()) return std::nullopt;
  RunRecord run = readRun(s);
  sql::Statement env(db_, "SELECT name, value FROM run_env WHERE run_id = ?1");
  env.bind(1, id);
  while (env.step())
    run.env[env.text(0)] = env.text(1);
  return run;
}

std::vector<PointRecord> Store::points(int64_t run_id) const {
  return queryPoints(db_, "run_id = ?1 ORDER BY seq, id",
                     [&](sql::Statement& s) { s.bind(1, run_id); });
}

std::vector<PointRecord> Store::pointsWithKey(const std::string& key) const {
  return queryPoints(db_, "key = ?1 ORDER BY run_id, id",
                     [&](sql::Statement& s) { s.bind(1, key); });
}

std::vector<RepetitionRecord> Store::repetitions(int64_t point_id) const {
  auto real = [](const sql::Statement& s, int column) {
    return s.isNull(column) ? std::nullopt : std::optional<double>(s.real(column));
  };
  sql::Statement s(db_,
                   "SELECT repetition, startup_ns, steps, status, message, value, other_cpu, "
                   "hosts FROM repetition WHERE point_id = ?1 ORDER BY repetition");
  s.bind(1, point_id);
  std::vector<RepetitionRecord> out;
  std::map<int, size_t> at;  // repetition -> position
  while (s.step()) {
    RepetitionRecord r;
    r.repetition = static_cast<int>(s.integer(0));
    r.startup_ns = s.integer(1);
    r.steps = s.integer(2);
    r.status = readStatus(s, 3, "repetition of point", point_id);
    r.message = s.text(4);
    r.value = real(s, 5);
    r.other_cpu = real(s, 6);
    r.hosts = s.isNull(7) ? "" : s.text(7);
    at[r.repetition] = out.size();
    out.push_back(std::move(r));
  }
  sql::Statement gpus(db_,
                      "SELECT repetition, gpu, seconds, sm_mhz, memory_mhz, power_w, energy_j, "
                      "temperature_c, throttle_reasons, throttled_s FROM repetition_gpu "
                      "WHERE point_id = ?1 ORDER BY repetition, gpu");
  gpus.bind(1, point_id);
  while (gpus.step()) {
    const auto found = at.find(static_cast<int>(gpus.integer(0)));
    if (found == at.end()) continue;
    GpuReading g;
    g.gpu = static_cast<int>(gpus.integer(1));
    g.seconds = gpus.real(2);
    g.sm_mhz = real(gpus, 3);
    g.memory_mhz = real(gpus, 4);
    g.power_w = real(gpus, 5);
    g.energy_j = real(gpus, 6);
    g.temperature_c = real(gpus, 7);
    g.throttle_reasons = static_cast<uint64_t>(gpus.integer(8));
    g.throttled_s = real(gpus, 9);
    out[found->second].gpus.push_back(g);
  }
  return out;
}

std::optional<int64_t> Store::baseline(const std::string& name) const {
  sql::Statement s(db_, "SELECT run_id FROM baseline WHERE name = ?1");
  s.bind(1, name);
  if (!s.step()) return std::nullopt;
  return s.integer(0);
}

std::map<std::string, int64_t> Store::baselines() const {
  sql::Statement s(db_, "SELECT name, run_id FROM baseline ORDER BY name");
  std::map<std::string, int64_t> out;
  while (s.step())
    out[s.text(0)] = s.integer(1);
  return out;
}

std::vector<SampleRecord> Store::samples(int64_t point_id) const {
  sql::Statement range(db_, "SELECT first_sample, sample_count FROM point WHERE id = ?1");
  range.bind(1, point_id);
  if (!range.step() || range.integer(1) == 0) return {};
  const int64_t first = range.integer(0), count = range.integer(1);
  sql::Statement s(db_,
                   "SELECT repetition, rank, step, ns, compute_ns, collective_ns FROM sample "
                   "WHERE rowid BETWEEN ?1 AND ?2 ORDER BY rowid");
  s.bind(1, first).bind(2, first + count - 1);
  std::vector<SampleRecord> out;
  out.reserve(static_cast<size_t>(count));
  while (s.step()) {
    SampleRecord r;
    r.repetition = static_cast<int32_t>(s.integer(0));
    r.rank = static_cast<int32_t>(s.integer(1));
    r.step = static_cast<int32_t>(s.integer(2));
    r.ns = s.integer(3);
    r.compute_ns = s.isNull(4) ? kNoValue : s.integer(4);
    r.collective_ns = s.isNull(5) ? kNoValue : s.integer(5);
    out.push_back(r);
  }
  return out;
}

std::vector<RankTimesRecord> Store::rankTimes(int64_t point_id) const {
  sql::Statement s(db_, R"sql(
      SELECT repetition, step, rank, work_ns, device_ns, path_ns, wait_ns, step_ns
      FROM rank_times WHERE point_id = ?1 ORDER BY repetition, step, rank)sql");
  s.bind(1, point_id);
  std::vector<RankTimesRecord> out;
  while (s.step()) {
    RankTimesRecord r;
    r.repetition = static_cast<int32_t>(s.integer(0));
    r.step = static_cast<int32_t>(s.integer(1));
    r.rank = static_cast<int32_t>(s.integer(2));
    r.work_ns = s.integer(3);
    r.device_ns = s.isNull(4) ? -1 : s.integer(4);
    r.path_ns = s.integer(5);
    r.wait_ns = s.integer(6);
    r.step_ns = s.integer(7);
    out.push_back(r);
  }
  return out;
}

}  // namespace synk::harness

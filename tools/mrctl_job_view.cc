// Showing a job record (mrctl_job_view.h).
#include "tools/mrctl_job_view.h"

#include <algorithm>
#include <chrono>
#include <map>

#include "common/cli_support.h"
#include "common/job_why.h"
#include "common/job_name.h"
#include "tools/mrctl_common.h"
#include "tools/mrctl_counters.h"

namespace mr::tools {
namespace {

using nlohmann::json;

json TrafficJson(const pb::Traffic& t) {
  return {{"local", t.local()}, {"same_dc", t.same_dc()}, {"other_dc", t.other_dc()}};
}

json SchedulerParamsJson(const pb::JobRecord& r) {
  json params = json::object();
  for (const auto& [k, v] : r.scheduler_params()) params[k] = v;
  return params;
}

// Milliseconds since the epoch on this machine's clock.
int64_t NowMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

// start_ms, end_ms (ms since the epoch) and phase_ms of a task record.
template <typename TaskRecord>
void AddTaskTimes(const TaskRecord& t, json* j) {
  json phases = json::object();
  for (const auto& [name, ms] : t.phase_ms()) phases[name] = ms;
  (*j)["start_ms"] = t.start_ms();
  (*j)["end_ms"] = t.end_ms();
  (*j)["phase_ms"] = phases;
}

json AttemptJson(const pb::AttemptRecord& a) {
  return {{"kind", a.is_map() ? "map" : "reduce"}, {"index", a.index()}, {"attempt", a.attempt()},
          {"node", a.node()}, {"state", a.state()}, {"error", a.error()},
          {"start_ms", a.start_ms()}, {"end_ms", a.end_ms()}, {"progress", a.progress()},
          {"progress_rate", a.progress_rate()}, {"progress_ms", a.progress_ms()},
          {"speculative", a.speculative()}};
}

// "1.25" seconds from submission, or "-" when not recorded.
std::string Seconds(int64_t ms, int64_t submit_ms) {
  if (ms <= 0) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", static_cast<double>(ms - submit_ms) / 1000.0);
  return buf;
}

void PrintAttempt(const pb::JobRecord& j, const pb::AttemptRecord& a, std::FILE* out) {
  const std::string attempt = std::to_string(a.attempt()) + (a.speculative() ? " (backup)" : "");
  std::fprintf(out, "    %-6s %4d  attempt %-12s %-10s %-8s %4.0f%% %7.1f%%/s  start %7s s", a.is_map() ? "map" : "reduce",
               a.index(), attempt.c_str(), a.node().c_str(), a.state().c_str(), a.progress() * 100.0,
               a.progress_rate() * 100.0, Seconds(a.start_ms(), j.submit_ms()).c_str());
  if (a.end_ms() > 0) std::fprintf(out, "  end %7s s", Seconds(a.end_ms(), j.submit_ms()).c_str());
  if (!a.error().empty()) std::fprintf(out, "  %s", a.error().c_str());
  std::fprintf(out, "\n");
}

}  // namespace

void PrintAttempts(const pb::JobRecord& j, bool all, std::FILE* out) {
  constexpr int kFewEnded = 10;
  if (j.running_attempts_size() > 0) {
    std::fprintf(out, "  running attempts (%d):\n", j.running_attempts_size());
    for (const pb::AttemptRecord& a : j.running_attempts()) PrintAttempt(j, a, out);
  }
  const int ended = j.ended_attempts_size();
  if (ended == 0) return;
  const int from = all ? 0 : std::max(0, ended - kFewEnded);
  const int unlisted = from + j.ended_attempts_dropped();
  std::fprintf(out, "  failed and killed attempts (%d%s):\n", ended + j.ended_attempts_dropped(),
               unlisted > 0 ? (", the first " + std::to_string(unlisted) + " not listed" +
                               (all ? "" : "; --tasks lists more")).c_str() : "");
  for (int i = from; i < ended; ++i) PrintAttempt(j, j.ended_attempts(i), out);
}

void PrintWhy(const pb::JobRecord& r, std::FILE* out) {
  const master::WhyReport why = master::ExplainJob(r);
  if (why.critical_path.empty()) {
    std::fprintf(out, "  why: the record has no task timestamps to explain\n");
    return;
  }
  const auto section = [out](const char* title, const std::vector<std::string>& lines) {
    if (lines.empty()) return;
    std::fprintf(out, "  %s:\n", title);
    for (const std::string& line : lines) std::fprintf(out, "    %s\n", line.c_str());
  };
  section("critical path", why.critical_path);
  section("time lost", why.time_lost);
  section("slowest", why.slowest);
}

json WhyJson(const pb::JobRecord& r) {
  const master::WhyReport why = master::ExplainJob(r);
  return {{"critical_path", why.critical_path}, {"time_lost", why.time_lost}, {"slowest", why.slowest}};
}

std::string PolicyText(const pb::JobRecord& r) {
  std::string params;
  for (const auto& [k, v] : std::map<std::string, std::string>(r.scheduler_params().begin(),
                                                               r.scheduler_params().end())) {
    params += (params.empty() ? "" : ",") + k + "=" + v;
  }
  return r.scheduler() + (params.empty() ? "" : "(" + params + ")");
}

int64_t ElapsedMs(const pb::JobRecord& r, const master::JobFigures& f) {
  if (r.end_ms() > 0 || r.state() != "running") return f.jtt_ms;
  return std::max<int64_t>(0, NowMs() - r.submit_ms());
}

json JobJson(const pb::JobRecord& r, bool with_tasks) {
  const master::JobFigures f = master::Figures(r);
  json params = json::object();
  for (const auto& [k, v] : r.spec().params()) params[k] = v;
  json per_worker = json::object();
  for (const auto& [w, n] : r.tasks_per_worker()) per_worker[w] = n;
  json j = {
      {"id", r.id()}, {"job", master::ShownJobName(r.spec())}, {"state", r.state()}, {"error", r.error()},
      {"inputs", r.spec().inputs()}, {"output", r.spec().output()}, {"params", params},
      {"reducers", r.spec().reducers()}, {"output_replication", r.output_replication()},
      {"output_compression", r.spec().output_compression().empty() ? "none" : r.spec().output_compression()},
      {"pool", r.spec().pool()}, {"scheduler", r.scheduler()},
      {"scheduler_params", SchedulerParamsJson(r)}, {"scheduler_seed", r.scheduler_seed()},
      {"code_hash", r.code_hash()}, {"input_type", r.input_type()}, {"input_bytes", r.input_bytes()},
      {"submit_ms", r.submit_ms()}, {"start_ms", r.start_ms()}, {"end_ms", r.end_ms()},
      {"jtt_ms", f.jtt_ms}, {"elapsed_ms", ElapsedMs(r, f)}, {"maps_total", r.maps_total()}, {"maps_done", r.maps_done()},
      {"reduces_total", r.reduces_total()}, {"reduces_done", r.reduces_done()},
      {"maps_node_local", r.maps_node_local()}, {"maps_rack_local", r.maps_rack_local()},
      {"maps_dc_local", r.maps_dc_local()}, {"maps_off_dc", r.maps_off_dc()},
      {"vps_locality_rate", f.vps_locality_rate}, {"cen_locality_rate", f.cen_locality_rate},
      {"off_cen_rate", f.off_cen_rate}, {"reduce_data_locality_rate", f.reduce_data_locality_rate},
      {"inter_dc_bytes", f.inter_dc_bytes}, {"map_input_bytes", TrafficJson(r.map_input())},
      {"shuffle_bytes", TrafficJson(r.shuffle())}, {"output_replication_bytes", TrafficJson(r.output())},
      {"prefetch_bytes", r.prefetch_bytes()}, {"prefetch_inter_dc_bytes", r.prefetch_inter_dc_bytes()},
      {"retried_bytes", TrafficJson(r.retried())},
      {"client_read_bytes", r.spec().client_read_bytes()},
      {"client_inter_dc_bytes", r.spec().client_inter_dc_bytes()},
      {"raw_map_output_bytes", r.raw_output_bytes()}, {"map_output_bytes", r.map_output_bytes()},
      {"output_bytes", r.output_bytes()}, {"fp_raw", f.fp_raw}, {"fp_wire", f.fp_wire},
      {"known_fp", r.known_fp() < 0 ? json(nullptr) : json(r.known_fp())},
      {"failed_attempts", r.failed_attempts()}, {"tasks_per_worker", per_worker},
      {"speculator", r.speculator()}, {"backups_launched", r.backups_launched()},
      {"backups_won", r.backups_won()}, {"speculation_wasted_ms", r.speculation_wasted_ms()},
      {"counters", CountersJson(r.counters())}};
  if (!with_tasks) return j;
  json maps = json::array(), reduces = json::array();
  for (const auto& m : r.maps()) {
    maps.push_back({{"index", m.index()}, {"node", m.node()}, {"locality", m.locality()},
                    {"input_bytes", m.input_bytes()}, {"read_bytes", TrafficJson(m.input())},
                    {"raw_output_bytes", m.raw_output_bytes()}, {"output_bytes", m.output_bytes()},
                    {"run_ms", m.run_ms()}, {"attempts", m.attempts()},
                    {"attempt", master::AcceptedAttempt(m)},
                    {"speculative", m.speculative()}, {"status", m.status()},
                    {"counters", CountersJson(m.counters())}});
    AddTaskTimes(m, &maps.back());
  }
  for (const auto& t : r.reduces()) {
    reduces.push_back({{"index", t.index()}, {"node", t.node()}, {"shuffle_bytes", TrafficJson(t.shuffle())},
                       {"output_replication_bytes", TrafficJson(t.output())},
                       {"output_bytes", t.output_bytes()}, {"run_ms", t.run_ms()},
                       {"attempts", t.attempts()},
                       {"attempt", master::AcceptedAttempt(t)},
                       {"speculative", t.speculative()}, {"status", t.status()},
                       {"counters", CountersJson(t.counters())}});
    AddTaskTimes(t, &reduces.back());
  }
  j["map_tasks"] = maps;
  j["reduce_tasks"] = reduces;
  json running = json::array(), ended = json::array();
  for (const auto& a : r.running_attempts()) running.push_back(AttemptJson(a));
  for (const auto& a : r.ended_attempts()) ended.push_back(AttemptJson(a));
  j["running_attempts"] = running;
  j["ended_attempts"] = ended;
  j["ended_attempts_dropped"] = r.ended_attempts_dropped();
  return j;
}

void PrintJob(const pb::JobRecord& r) {
  const master::JobFigures f = master::Figures(r);
  std::printf("job %lld  %s  %s%s%s\n", static_cast<long long>(r.id()), master::ShownJobName(r.spec()).c_str(),
              r.state().c_str(), r.error().empty() ? "" : ": ", r.error().c_str());
  const std::string compression =
      r.spec().output_compression().empty() ? "" : " (" + r.spec().output_compression() + ")";
  std::printf("  output %s%s, scheduler %s seed %llu, input %s (%s)\n", r.spec().output().c_str(),
              compression.c_str(),
              PolicyText(r).c_str(), static_cast<unsigned long long>(r.scheduler_seed()),
              HumanBytes(r.input_bytes()).c_str(), r.input_type().c_str());
  std::printf("  maps %d/%d, reduces %d/%d, %s %.1f s, failed attempts %d\n", r.maps_done(),
              r.maps_total(), r.reduces_done(), r.reduces_total(),
              r.state() == "running" ? "running for" : "JTT",
              static_cast<double>(ElapsedMs(r, f)) / 1000.0, r.failed_attempts());
  if (!r.speculator().empty() && r.speculator() != "none") {
    std::printf("  speculation %s: %d backup(s) launched, %d won, %.1f task-seconds wasted\n",
                r.speculator().c_str(), r.backups_launched(), r.backups_won(),
                static_cast<double>(r.speculation_wasted_ms()) / 1000.0);
  }
  std::printf("  locality: VPS %.3f, Cen %.3f, off-Cen %.3f; reduce-data locality %.3f\n",
              f.vps_locality_rate, f.cen_locality_rate, f.off_cen_rate, f.reduce_data_locality_rate);
  std::printf(
      "  INT %s (map input %s, shuffle %s, output %s, prefetch %s, client sample %s, retried "
      "attempts %s); FP raw %.3f, wire %.3f\n",
      HumanBytes(f.inter_dc_bytes).c_str(), HumanBytes(r.map_input().other_dc()).c_str(),
      HumanBytes(r.shuffle().other_dc()).c_str(), HumanBytes(r.output().other_dc()).c_str(),
      HumanBytes(r.prefetch_inter_dc_bytes()).c_str(),
      HumanBytes(r.spec().client_inter_dc_bytes()).c_str(), HumanBytes(r.retried().other_dc()).c_str(),
      f.fp_raw, f.fp_wire);
}

}  // namespace mr::tools

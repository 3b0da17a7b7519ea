// JSON, CSV and text output of runs (see output.h).
#include "sim/output.h"

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace mr::sim {
namespace {

// Six decimals: enough for rates, and stable to read in diffs.
double R6(double v) { return std::round(v * 1e6) / 1e6; }
double R1(double v) { return std::round(v * 10) / 10; }

Json Spans(const double mb[4]) {
  Json j;
  const char* names[] = {"node", "rack", "dc", "off_dc"};
  for (int i = 0; i < 4; ++i) j[names[i]] = std::llround(mb[i] * 1048576.0);
  return j;
}

// Locality, traffic and JTT of a set of jobs (the run, or one job type).
// The four map counts are the master's disjoint levels (master/job_records.cc)
// and the rates its formulas (common/job_figures.cc): cen = rack + dc.
void PutTally(Json& j, const Tally& t) {
  j["jobs_finished"] = t.jobs;
  j["jtt_ms"] = R1(MeanJtt(t));
  j["maps_total"] = t.maps_total;
  j["maps_node_local"] = t.maps_level[0];
  j["maps_rack_local"] = t.maps_level[1];
  j["maps_dc_local"] = t.maps_level[2];
  j["maps_off_dc"] = t.maps_level[3];
  j["vps_locality_rate"] = R6(Rate(t.maps_level[0], t.maps_total));
  j["cen_locality_rate"] = R6(Rate(t.maps_level[1] + t.maps_level[2], t.maps_total));
  j["off_cen_rate"] = R6(Rate(t.maps_level[3], t.maps_total));
  j["reduce_data_locality_rate"] = R6(ReduceDataLocality(t));
  j["inter_dc_bytes"] = std::llround(InterDcBytes(t));
  j["fp_raw"] = R6(t.jobs > 0 ? t.fp_raw_sum / static_cast<double>(t.jobs) : 0);
  j["fp_wire"] = R6(t.jobs > 0 ? t.fp_wire_sum / static_cast<double>(t.jobs) : 0);
}

double Avg(double sum, int64_t n) { return n > 0 ? sum / static_cast<double>(n) : 0; }

// Speculative execution, named as the master's job record (docs/jobs.md):
// the speculator and its parameters, backups launched and won, the slot
// time of the killed losers (speculation_wasted_ms) and of every attempt
// (task_ms), and wasted / task time.
void PutSpeculation(Json& j, const RunResult& r) {
  j["speculator"] = r.speculator;
  j["speculator_params"] = Json::object();
  for (const auto& [k, v] : r.speculator_params) j["speculator_params"][k] = v;
  j["backups_launched"] = r.backups_launched;
  j["backups_won"] = r.backups_won;
  j["speculation_wasted_ms"] = std::llround(r.wasted_ms);
  j["task_ms"] = std::llround(r.task_ms);
  j["wasted_fraction"] = R6(r.task_ms > 0 ? r.wasted_ms / r.task_ms : 0);
}

// The columns only runs with a speculator add (the CSV and the text table
// keep their old shape otherwise).
const char* const kSpeculationKeys[] = {"speculator", "backups_launched", "backups_won",
                                        "speculation_wasted_ms", "task_ms", "wasted_fraction"};

bool AnySpeculation(const std::vector<RunResult>& runs) {
  for (const RunResult& r : runs) {
    if (r.speculation) return true;
  }
  return false;
}

bool Flat(const Json& j) {
  for (const Json& e : j) {
    if (e.is_structured()) return false;
  }
  return true;
}

// Indented objects; arrays of scalars on one line (node_maps, samples).
void Pretty(const Json& j, int indent, std::string& out) {
  const std::string pad(static_cast<size_t>(indent) + 1, ' ');
  if (j.is_object() && !j.empty()) {
    out += "{\n";
    size_t i = 0;
    for (const auto& [key, value] : j.items()) {
      out += pad + Json(key).dump() + ": ";
      Pretty(value, indent + 1, out);
      out += ++i < j.size() ? ",\n" : "\n";
    }
    out += std::string(static_cast<size_t>(indent), ' ') + "}";
  } else if (j.is_array() && !j.empty() && !Flat(j)) {
    out += "[\n";
    for (size_t i = 0; i < j.size(); ++i) {
      out += pad;
      Pretty(j[i], indent + 1, out);
      out += i + 1 < j.size() ? ",\n" : "\n";
    }
    out += std::string(static_cast<size_t>(indent), ' ') + "]";
  } else {
    out += j.dump();
  }
}

}  // namespace

Json RunToJson(const RunResult& r) {
  Json j;
  j["scenario"] = r.scenario;
  j["scheduler"] = r.scheduler;
  j["label"] = r.label;
  j["params"] = Json::object();
  for (const auto& [k, v] : r.params) j["params"][k] = v;
  j["sweep"] = Json::object();
  for (const auto& [k, v] : r.sweep) j["sweep"][k] = v;
  j["seed"] = r.seed;
  j["stopped"] = r.stopped;
  j["end_ms"] = r.end_ms;
  j["jobs_total"] = r.jobs_total;
  PutTally(j, r.all);
  const std::vector<double> jtts = SortedJtts(r);
  auto quantile = [&](double q) {
    return jtts.empty() ? 0.0 : jtts[static_cast<size_t>(q * static_cast<double>(jtts.size() - 1))];
  };
  j["jtt_p50_ms"] = quantile(0.5);
  j["jtt_p95_ms"] = quantile(0.95);
  j["wtt_ms"] = Wtt(r);
  j["reduces_total"] = r.reduces_total;
  j["reduces_done"] = r.reduces_done;
  j["map_input_bytes"] = Spans(r.all.input_mb);
  j["shuffle_bytes"] = Spans(r.all.shuffle_mb);
  j["prefetch_bytes"] = Spans(r.all.prefetch_mb);
  j["map_response_ms"] = R1(Avg(r.map_response_ms_sum, r.all.maps_total));
  j["map_run_ms"] = R1(Avg(r.map_run_ms_sum, r.all.maps_total));
  j["reduce_run_ms"] = R1(Avg(r.reduce_run_ms_sum, r.reduces_done));
  j["map_launches"] = r.map_launches;
  j["reduce_launches"] = r.reduce_launches;
  j["failed_attempts"] = r.failed_attempts;
  j["redone_maps"] = r.redone_maps;
  j["prefetches"] = r.prefetches;
  j["assign_calls"] = r.assign_calls;
  j["tick_calls"] = r.tick_calls;
  const auto [load_mean, load_sd] = NodeLoad(r);
  j["node_load_mean"] = R6(load_mean);
  j["node_load_sd"] = R6(load_sd);
  j["node_maps"] = r.node_maps;
  double backlog_sum = 0;
  for (const BacklogSample& s : r.backlog) backlog_sum += static_cast<double>(s.maps_waiting + s.maps_running);
  j["backlog_avg"] = R6(Avg(backlog_sum, static_cast<int64_t>(r.backlog.size())));
  j["backlog_tail"] = R6(BacklogTail(r));
  j["backlog_slope_per_s"] = R6(BacklogSlope(r));
  // JTT CDF, at most 50 points: [jtt_ms, fraction of finished jobs <= it].
  j["jtt_cdf"] = Json::array();
  const size_t step = std::max<size_t>(1, jtts.size() / 50);
  for (size_t i = 0; i < jtts.size(); i += step) {
    j["jtt_cdf"].push_back({jtts[i], R6(static_cast<double>(i + 1) / static_cast<double>(jtts.size()))});
  }
  if (!jtts.empty() && (jtts.size() - 1) % step != 0) j["jtt_cdf"].push_back({jtts.back(), 1.0});
  j["by_type"] = Json::object();
  for (const auto& [name, t] : r.by_type) PutTally(j["by_type"][name], t);
  // Backlog over time, at most 500 samples: [t_ms, maps waiting, maps running,
  // reduces waiting, reduces running, active jobs].
  j["backlog"] = Json::array();
  const size_t bstep = std::max<size_t>(1, (r.backlog.size() + 499) / 500);
  for (size_t i = 0; i < r.backlog.size(); i += bstep) {
    const BacklogSample& s = r.backlog[i];
    j["backlog"].push_back({s.t_ms, s.maps_waiting, s.maps_running, s.reduces_waiting,
                            s.reduces_running, s.active_jobs});
  }
  if (r.speculation) PutSpeculation(j, r);
  if (r.timed) {
    j["wall_ms"] = R1(r.wall_ms);
    j["policy_ms"] = R1(r.policy_ms);
    j["decisions_per_s"] = std::round(r.policy_ms > 0 ? r.assign_calls / (r.policy_ms / 1000.0) : 0);
    j["mean_policy_call_us"] = R6(Avg(r.policy_ms * 1000.0, r.assign_calls + r.tick_calls));
  }
  return j;
}

std::string RunsToJson(const std::vector<RunResult>& runs) {
  Json out;
  out["runs"] = Json::array();
  for (const RunResult& r : runs) out["runs"].push_back(RunToJson(r));
  std::string text;
  Pretty(out, 0, text);
  return text + "\n";
}

std::string RunsToText(const std::vector<RunResult>& runs) {
  std::ostringstream os;
  char line[512];
  const bool spec = AnySpeculation(runs);
  std::snprintf(line, sizeof line, "%-24s %-28s %8s %10s %7s %7s %7s %7s %12s %10s %9s",
                "scheduler", "sweep", "jobs", "jtt_s", "vps", "cen", "offcen", "rdl", "int_MB",
                "backlog", "stopped");
  os << line;
  if (spec) {
    std::snprintf(line, sizeof line, " %-10s %8s %8s %10s %7s", "speculator", "backups", "won",
                  "wasted_s", "wasted");
    os << line;
  }
  os << "\n";
  for (const RunResult& r : runs) {
    std::string sweep;
    for (const auto& [k, v] : r.sweep) sweep += (sweep.empty() ? "" : " ") + k.substr(k.rfind('.') + 1) + "=" + v;
    const Tally& t = r.all;
    std::snprintf(line, sizeof line,
                  "%-24s %-28s %8lld %10.1f %7.3f %7.3f %7.3f %7.3f %12.0f %10.1f %9s",
                  r.label.c_str(), sweep.c_str(), static_cast<long long>(t.jobs), MeanJtt(t) / 1000.0,
                  Rate(t.maps_level[0], t.maps_total),
                  Rate(t.maps_level[1] + t.maps_level[2], t.maps_total),
                  Rate(t.maps_level[3], t.maps_total), ReduceDataLocality(t),
                  InterDcBytes(t) / 1048576.0, BacklogTail(r), r.stopped.c_str());
    os << line;
    if (spec) {
      std::snprintf(line, sizeof line, " %-10s %8lld %8lld %10.1f %7.3f", r.speculator.c_str(),
                    static_cast<long long>(r.backups_launched), static_cast<long long>(r.backups_won),
                    r.wasted_ms / 1000.0, r.task_ms > 0 ? r.wasted_ms / r.task_ms : 0.0);
      os << line;
    }
    os << "\n";
  }
  return os.str();
}

Status WriteCsv(const std::string& dir, const std::vector<RunResult>& runs) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) return Status::IOError("cannot create '" + dir + "': " + ec.message());
  std::ofstream runs_csv(dir + "/runs.csv"), jobs_csv(dir + "/jobs.csv"),
      backlog_csv(dir + "/backlog.csv");
  if (!runs_csv || !jobs_csv || !backlog_csv) return Status::IOError("cannot write CSV files in '" + dir + "'");
  runs_csv << "run,scenario,scheduler,label,sweep,jobs_total,jobs_finished,jtt_ms,wtt_ms,maps_total,"
              "maps_node_local,maps_dc_local,maps_off_dc,vps_locality_rate,cen_locality_rate,"
              "off_cen_rate,reduce_data_locality_rate,inter_dc_bytes,map_response_ms,"
              "backlog_tail,node_load_sd,stopped";
  const bool spec = AnySpeculation(runs);
  if (spec) {
    for (const char* key : kSpeculationKeys) runs_csv << "," << key;
  }
  runs_csv << "\n";
  jobs_csv << "run,job,type,maps,reduces,submit_ms,finish_ms,jtt_ms\n";
  backlog_csv << "run,t_ms,maps_waiting,maps_running,reduces_waiting,reduces_running,active_jobs\n";
  for (size_t i = 0; i < runs.size(); ++i) {
    const RunResult& r = runs[i];
    const Json j = RunToJson(r);
    std::string sweep;
    for (const auto& [k, v] : r.sweep) sweep += (sweep.empty() ? "" : ";") + k + "=" + v;
    runs_csv << i << "," << r.scenario << "," << r.scheduler << ",\"" << r.label << "\",\"" << sweep
             << "\"," << r.jobs_total;
    for (const char* key : {"jobs_finished", "jtt_ms", "wtt_ms", "maps_total", "maps_node_local",
                            "maps_dc_local", "maps_off_dc", "vps_locality_rate",
                            "cen_locality_rate", "off_cen_rate", "reduce_data_locality_rate",
                            "inter_dc_bytes", "map_response_ms", "backlog_tail", "node_load_sd"}) {
      runs_csv << "," << j[key].dump();
    }
    runs_csv << "," << r.stopped;
    if (spec) {
      Json extra;
      PutSpeculation(extra, r);
      for (const char* key : kSpeculationKeys) {
        runs_csv << "," << (extra[key].is_string() ? extra[key].get<std::string>() : extra[key].dump());
      }
    }
    runs_csv << "\n";
    for (const JobRecord& job : r.jobs) {
      jobs_csv << i << "," << job.id << "," << job.type << "," << job.maps << "," << job.reduces << ","
               << job.submit_ms << "," << job.finish_ms << ","
               << (job.finish_ms >= 0 ? job.finish_ms - job.submit_ms : -1) << "\n";
    }
    for (const BacklogSample& s : r.backlog) {
      backlog_csv << i << "," << s.t_ms << "," << s.maps_waiting << "," << s.maps_running << ","
                  << s.reduces_waiting << "," << s.reduces_running << "," << s.active_jobs << "\n";
    }
  }
  return Status::OK();
}

}  // namespace mr::sim

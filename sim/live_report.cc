// mr-workload report DIR (sim/live_report.h): bench/live_policies.sh's runs
// -> runs.csv, summary.csv, report.md, live-*.svg. The claims of the
// scenario's paper are judged with sim/claims*.cc on a run object in
// mr-sim's JSON shape built from the live medians, so live and simulated
// verdicts come from the same code.
#include "sim/live_report.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>

#include "sim/claims.h"
#include "sim/scenario_file.h"

namespace mr::sim {
namespace {

namespace fs = std::filesystem;
using Metrics = std::map<std::string, double>;
// type ("all" or a job type) -> metric -> one value per repetition
using Values = std::map<std::string, std::map<std::string, std::vector<double>>>;

struct PolicyRuns {
  std::string name, label;
  int reps = 0;
  Values values;
  std::vector<double> jtts_ms;  // every job of every repetition (the CDF)
  std::vector<std::string> notes;
  const Json* sim = nullptr;  // mr-sim's run of the same file and policy
};

double Num(const Json& j, const std::string& key) {
  return j.is_object() && j.contains(key) && j[key].is_number() ? j[key].get<double>() : NAN;
}
double Z(double v) { return std::isnan(v) ? 0 : v; }

Result<Json> ReadJson(const std::string& path) {
  auto text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  try {
    return Json::parse(*text);
  } catch (const std::exception& e) {
    return Status::InvalidArgument(path + ": not JSON: " + e.what());
  }
}

// Sums over the jobs of one type (or all) of one repetition.
struct Tally {
  double jobs = 0, failed = 0, jtt_ms = 0, maps = 0, node = 0, rack = 0, dc = 0, off = 0;
  double shuffle_near = 0, shuffle_all = 0, rdl_sum = 0, rdl_n = 0;
  double int_all = 0, int_map = 0, int_shuffle = 0, int_output = 0, int_prefetch = 0, int_retried = 0;
  double client = 0;
  bool client_known = true;
  double compared = 0, wrong = 0;  // outputs checked against mr-local (--verify)

  void Add(const Json& row, const Json* rec) {
    ++jobs;
    if (row.value("state", "") != "succeeded") ++failed;
    if (row.contains("verified") && row["verified"].is_boolean()) {
      ++compared;
      if (!row["verified"].get<bool>()) ++wrong;
    }
    jtt_ms += Z(Num(row, "jtt_ms"));
    node += Z(Num(row, "maps_node_local")), rack += Z(Num(row, "maps_rack_local"));
    dc += Z(Num(row, "maps_dc_local")), off += Z(Num(row, "maps_off_dc"));
    maps = node + rack + dc + off;
    if (rec != nullptr && rec->contains("shuffle_bytes")) {
      const Json& s = (*rec)["shuffle_bytes"];
      shuffle_near += Z(Num(s, "local")) + Z(Num(s, "same_dc"));
      shuffle_all += Z(Num(s, "local")) + Z(Num(s, "same_dc")) + Z(Num(s, "other_dc"));
    } else if (!std::isnan(Num(row, "reduce_data_locality_rate"))) {
      rdl_sum += Num(row, "reduce_data_locality_rate"), ++rdl_n;
    }
    int_all += Z(Num(row, "inter_dc_bytes"));
    int_map += Z(Num(row, "int_map_input")), int_shuffle += Z(Num(row, "int_shuffle"));
    int_output += Z(Num(row, "int_output")), int_prefetch += Z(Num(row, "int_prefetch"));
    int_retried += Z(Num(row, "int_retried"));
    const double c = Num(row, "client_inter_dc_bytes");
    client_known = client_known && !std::isnan(c);
    client += Z(c);
  }

  Metrics Finish() const {
    Metrics m;
    m["jobs"] = jobs;
    m["failed_jobs"] = failed;
    m["wrong_outputs"] = compared > 0 ? wrong : NAN;
    m["jtt_s"] = jobs > 0 ? jtt_ms / jobs / 1000 : NAN;
    m["maps"] = maps;
    m["vps_locality_rate"] = maps > 0 ? node / maps : NAN;
    m["cen_locality_rate"] = maps > 0 ? (rack + dc) / maps : NAN;
    m["off_cen_rate"] = maps > 0 ? off / maps : NAN;
    m["reduce_data_locality_rate"] = shuffle_all > 0 ? shuffle_near / shuffle_all
                                     : rdl_n > 0     ? rdl_sum / rdl_n
                                                     : NAN;
    m["inter_dc_bytes"] = int_all;
    m["int_map_input"] = int_map, m["int_shuffle"] = int_shuffle;
    m["int_output"] = int_output, m["int_prefetch"] = int_prefetch, m["int_retried"] = int_retried;
    m["client_inter_dc_bytes"] = client_known ? client : NAN;
    return m;
  }
};

// The workload-level figures of one repetition that are not sums over jobs.
void AddRunMetrics(const std::string& rep_dir, const Json& jobs, Metrics& m,
                   std::map<std::string, double>& tasks, std::map<std::string, double>& maps) {
  m["wtt_s"] = Num(jobs, "wtt_ms") / 1000;
  m["wall_s"] = Num(jobs, "wall_ms") / 1000;
  if (auto meta = ReadJson(rep_dir + "/meta.json"); meta.ok()) {
    if ((*meta)["load_before"].is_array())
      m["load_before"] = (*meta)["load_before"][0].get<double>();
    if ((*meta)["load_after"].is_array()) m["load_after"] = (*meta)["load_after"][0].get<double>();
  }
  if (auto c = ReadJson(rep_dir + "/counters.json"); c.ok() && (*c)["pairs"].is_array()) {
    double worker = 0, client = 0, control = 0, htb = 0, dropped = 0;
    for (const Json& p : (*c)["pairs"]) {
      worker += Z(Num(p, "worker_bytes")), client += Z(Num(p, "client_bytes"));
      control += Z(Num(p, "control_bytes")), htb += Z(Num(p, "htb_bytes"));
      dropped += Z(Num(p, "htb_dropped"));
    }
    m["kernel_worker_bytes"] = worker, m["kernel_client_bytes"] = client;
    m["kernel_control_bytes"] = control, m["htb_bytes"] = htb, m["htb_dropped"] = dropped;
    // Once the records count the client's sample (in their INT already),
    // the kernel's client bytes join the kernel side (docs/testbed.md, "The
    // counters, and how they compare with INT").
    const double num = std::isnan(m["client_inter_dc_bytes"]) ? worker : worker + client;
    const double den = m["inter_dc_bytes"];
    m["kernel_over_int"] = den > 0 ? num / den : NAN;
  }
  if (auto recs = ReadJson(rep_dir + "/records.json"); recs.ok() && recs->is_array()) {
    for (const Json& r : *recs) {
      if (r.contains("map_tasks") && r["map_tasks"].is_array()) {
        for (const Json& t : r["map_tasks"]) {
          if (t.contains("node") && t["node"].is_string()) maps[t["node"].get<std::string>()] += 1;
        }
      }
      if (!r.contains("tasks_per_worker")) continue;
      for (const auto& [w, n] : r["tasks_per_worker"].items()) tasks[w] += n.get<double>();
    }
  }
}

double Median(std::vector<double> v) {
  v.erase(std::remove_if(v.begin(), v.end(), [](double x) { return std::isnan(x); }), v.end());
  if (v.empty()) return NAN;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}
double Min(const std::vector<double>& v) {
  double m = NAN;
  for (double x : v) m = std::isnan(m) || x < m ? x : m;
  return m;
}
double Max(const std::vector<double>& v) {
  double m = NAN;
  for (double x : v) m = std::isnan(m) || x > m ? x : m;
  return m;
}

const std::vector<double>& Vals(const PolicyRuns& p, const std::string& type,
                                const std::string& k) {
  static const std::vector<double> kNone;
  const auto t = p.values.find(type);
  if (t == p.values.end()) return kNone;
  const auto m = t->second.find(k);
  return m == t->second.end() ? kNone : m->second;
}
double Med(const PolicyRuns& p, const std::string& type, const std::string& k) {
  return Median(Vals(p, type, k));
}

// "median [min–max]", the range only when the repetitions differ.
std::string Cell(const PolicyRuns& p, const std::string& type, const std::string& k, double scale,
                 int decimals) {
  const auto& v = Vals(p, type, k);
  const double med = Median(v), lo = Min(v), hi = Max(v);
  std::string s = Fmt(med * scale, decimals);
  if (v.size() > 1 && Fmt(lo * scale, decimals) != Fmt(hi * scale, decimals)) {
    s += " [" + Fmt(lo * scale, decimals) + "–" + Fmt(hi * scale, decimals) + "]";
  }
  return s;
}

double SimType(const Json* sim, const std::string& type, const std::string& k) {
  if (sim == nullptr) return NAN;
  if (type == "all") return Num(*sim, k);
  return (*sim)["by_type"].contains(type) ? Num((*sim)["by_type"][type], k) : NAN;
}

// A run object in mr-sim's JSON shape from the live medians, for the
// claim code (sim/claims.h reads these keys).
Json AsSimRun(const PolicyRuns& p, const std::string& scenario,
              const std::vector<std::string>& types) {
  Json r = Json::object();
  r["scenario"] = scenario, r["scheduler"] = p.name, r["label"] = p.label;
  r["sweep"] = Json::object();
  r["jtt_ms"] = Med(p, "all", "jtt_s") * 1000, r["wtt_ms"] = Med(p, "all", "wtt_s") * 1000;
  for (const char* k : {"vps_locality_rate", "cen_locality_rate", "off_cen_rate",
                        "reduce_data_locality_rate", "inter_dc_bytes"}) {
    r[k] = Med(p, "all", k);
  }
  r["node_load_mean"] = Med(p, "all", "maps_per_worker_mean");  // mr-sim: maps per node
  r["node_load_sd"] = Med(p, "all", "maps_per_worker_sd");
  std::vector<double> j = p.jtts_ms;
  std::sort(j.begin(), j.end());
  r["jtt_cdf"] = Json::array();
  for (size_t i = 0; i < j.size(); ++i)
    r["jtt_cdf"].push_back({j[i], double(i + 1) / double(j.size())});
  r["by_type"] = Json::object();
  for (const std::string& t : types) {
    Json& b = r["by_type"][t];
    b["jtt_ms"] = Med(p, t, "jtt_s") * 1000;
    for (const char* k : {"vps_locality_rate", "cen_locality_rate", "off_cen_rate",
                          "reduce_data_locality_rate", "inter_dc_bytes"}) {
      b[k] = Med(p, t, k);
    }
  }
  return r;
}

Status WriteFile(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << text;
  return out ? Status::OK() : Status::IOError("cannot write '" + path + "'");
}

// Reads DIR/<policy>/rep*/ of one policy.
// tasks[i], maps[i]: tasks and map tasks per worker in repetition i.
Status ReadPolicy(const std::string& dir, PolicyRuns& p, const std::vector<std::string>& types,
                  std::set<std::string>& workers, std::vector<std::map<std::string, double>>& tasks,
                  std::vector<std::map<std::string, double>>& maps) {
  std::vector<std::string> reps;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir + "/" + p.name, ec)) {
    if (e.is_directory() && e.path().filename().string().rfind("rep", 0) == 0)
      reps.push_back(e.path().string());
  }
  if (ec) return Status::IOError("cannot list '" + dir + "/" + p.name + "': " + ec.message());
  std::sort(reps.begin(), reps.end());
  for (const std::string& rd : reps) {
    if (!fs::exists(rd + "/jobs.json")) {
      p.notes.push_back(fs::path(rd).filename().string() +
                        " has no jobs.json (the run failed: " + rd + "/mr-workload.err)");
      continue;
    }
    auto jobs = ReadJson(rd + "/jobs.json");
    if (!jobs.ok()) return jobs.status();
    std::map<int64_t, const Json*> by_id;
    auto recs = ReadJson(rd + "/records.json");
    if (recs.ok() && recs->is_array()) {
      for (const Json& r : *recs) by_id[r.value("id", int64_t{-1})] = &r;
    }
    std::map<std::string, Tally> tally;
    for (const Json& row : (*jobs)["jobs"]) {
      const auto it = by_id.find(row.value("job_id", int64_t{-2}));
      const Json* rec = it == by_id.end() ? nullptr : it->second;
      tally["all"].Add(row, rec);
      tally[row.value("type", "?")].Add(row, rec);
      p.jtts_ms.push_back(Z(Num(row, "jtt_ms")));
    }
    for (const std::string& t : types) tally[t];  // a type without jobs: zeros, not absent
    Metrics all = tally["all"].Finish();
    tasks.emplace_back();
    maps.emplace_back();
    AddRunMetrics(rd, *jobs, all, tasks.back(), maps.back());
    for (const auto& [w, n] : tasks.back()) workers.insert(w);
    for (const auto& [w, n] : maps.back()) workers.insert(w);
    for (const auto& [k, v] : all) p.values["all"][k].push_back(v);
    for (const auto& [t, ty] : tally) {
      if (t == "all") continue;
      for (const auto& [k, v] : ty.Finish()) p.values[t][k].push_back(v);
    }
    ++p.reps;
  }
  return Status::OK();
}

// Tasks (or maps: prefix "maps_per_worker") per worker: mean, SD, min and
// max over every worker seen in any run (a worker without one counts 0).
void AddTaskSpread(PolicyRuns& p, const std::set<std::string>& workers,
                   const std::vector<std::map<std::string, double>>& tasks,
                   const std::string& prefix) {
  for (const auto& t : tasks) {
    if (workers.empty()) break;
    std::vector<double> n;
    for (const std::string& w : workers) n.push_back(t.count(w) ? t.at(w) : 0);
    double mean = 0, var = 0;
    for (double x : n) mean += x / double(n.size());
    for (double x : n) var += (x - mean) * (x - mean) / double(n.size());
    p.values["all"][prefix + "_mean"].push_back(mean);
    p.values["all"][prefix + "_sd"].push_back(std::sqrt(var));
    p.values["all"][prefix + "_min"].push_back(Min(n));
    p.values["all"][prefix + "_max"].push_back(Max(n));
  }
}

}  // namespace

Status WriteLiveReport(const std::string& dir, const std::string& workload) {
  auto sc = LoadScenario(workload, {});
  if (!sc.ok()) return sc.status();
  std::vector<std::string> types;
  for (const JobType& t : sc->job_types) types.push_back(t.name);
  std::map<std::string, std::string> labels;
  for (const SchedulerRun& s : sc->schedulers) labels[s.name] = s.label.empty() ? s.name : s.label;

  // Policies: every directory with a rep1/ inside.
  std::vector<PolicyRuns> pols;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (!e.is_directory() || !fs::exists(e.path() / "rep1")) continue;
    PolicyRuns p;
    p.name = e.path().filename().string();
    p.label = labels.count(p.name) ? labels[p.name] : p.name;
    pols.push_back(std::move(p));
  }
  if (ec) return Status::IOError("cannot list '" + dir + "': " + ec.message());
  if (pols.empty())
    return Status::InvalidArgument(dir +
                                   ": no POLICY/rep1 directories (run bench/live_policies.sh)");
  // In the order the script was given them (DIR/policies.txt), else by name.
  std::vector<std::string> given;
  if (auto t = ReadTextFile(dir + "/policies.txt"); t.ok()) {
    std::string name;
    for (char c : *t + ",") {
      if (c == ',' || c == '\n') {
        if (!name.empty()) given.push_back(name);
        name.clear();
      } else {
        name += c;
      }
    }
  }
  auto rank = [&given](const PolicyRuns& p) {
    return std::find(given.begin(), given.end(), p.name) - given.begin();
  };
  std::sort(pols.begin(), pols.end(), [&rank](const PolicyRuns& a, const PolicyRuns& b) {
    return rank(a) != rank(b) ? rank(a) < rank(b) : a.name < b.name;
  });

  std::set<std::string> workers;
  std::vector<std::vector<std::map<std::string, double>>> tasks(pols.size()), maps(pols.size());
  std::vector<Json> sims(pols.size());
  for (size_t i = 0; i < pols.size(); ++i) {
    MR_RETURN_IF_ERROR(ReadPolicy(dir, pols[i], types, workers, tasks[i], maps[i]));
    auto s = ReadJson(dir + "/sim/" + pols[i].name + ".json");
    if (s.ok() && (*s)["runs"].is_array() && !(*s)["runs"].empty()) sims[i] = (*s)["runs"][0];
  }
  for (size_t i = 0; i < pols.size(); ++i) {
    AddTaskSpread(pols[i], workers, tasks[i], "tasks_per_worker");
    AddTaskSpread(pols[i], workers, maps[i], "maps_per_worker");
    if (!sims[i].is_null()) pols[i].sim = &sims[i];
    if (pols[i].sim) pols[i].label = (*pols[i].sim)["label"].get<std::string>();
  }

  // CSVs.
  std::string runs_csv = "policy,label,rep,type,metric,value\n";
  std::string sum_csv = "policy,label,type,metric,median,min,max,reps\n";
  for (const PolicyRuns& p : pols) {
    for (const auto& [t, ms] : p.values) {
      for (const auto& [k, v] : ms) {
        for (size_t r = 0; r < v.size(); ++r) {
          runs_csv += p.name + "," + p.label + "," + std::to_string(r + 1) + "," + t + "," + k +
                      "," + Fmt(v[r], 6) + "\n";
        }
        sum_csv += p.name + "," + p.label + "," + t + "," + k + "," + Fmt(Median(v), 6) + "," +
                   Fmt(Min(v), 6) + "," + Fmt(Max(v), 6) + "," + std::to_string(v.size()) + "\n";
      }
    }
  }
  MR_RETURN_IF_ERROR(WriteFile(dir + "/runs.csv", runs_csv));
  MR_RETURN_IF_ERROR(WriteFile(dir + "/summary.csv", sum_csv));

  // The reference for INT ratios: FIFO when it ran, else the first policy.
  const PolicyRuns* ref = &pols[0];
  for (const PolicyRuns& p : pols) {
    if (p.name == "fifo") ref = &p;
  }
  const double ref_live = Med(*ref, "all", "inter_dc_bytes");
  const double ref_sim = SimType(ref->sim, "all", "inter_dc_bytes");
  const bool kernel = !Vals(pols[0], "all", "kernel_worker_bytes").empty();
  const double mb = 1.0 / 1e6;

  std::string md = "# " + sc->name + ": every policy live, beside mr-sim\n\n";
  md += "Generated by `mr-workload report` from `" + dir +
        "` (bench/live_policies.sh; docs/testbed.md, "
        "\"Benchmarking policies live\"). Workload file `" +
        workload + "`: " + sc->description + ".\n\n";
  md +=
      "Each live cell is the median over the repetitions, with the range [min–max] when they "
      "differ. "
      "mr-sim ran the same file and seed under each policy at the file's simulated scale (its "
      "block "
      "sizes and service laws), so its bytes and seconds are not the live ones; compare rates and "
      "ratios (INT ÷ " +
      ref->label + "'s).\n\n";
  {
    std::vector<std::vector<std::string>> rows;
    for (const PolicyRuns& p : pols) {
      rows.push_back({p.label, std::to_string(p.reps), Cell(p, "all", "failed_jobs", 1, 0),
                      Cell(p, "all", "wrong_outputs", 1, 0), Cell(p, "all", "wall_s", 1, 1), Cell(p, "all", "load_before", 1, 2),
                      Cell(p, "all", "load_after", 1, 2)});
    }
    md += "## Runs\n\n" +
          Table({"policy", "reps", "failed jobs", "outputs ≠ mr-local", "timed phase s",
                 "load before", "load after"},
                rows) +
          "\n";
    for (const PolicyRuns& p : pols) {
      for (const std::string& n : p.notes) md += "- " + p.label + ": " + n + "\n";
    }
  }
  {
    std::vector<std::vector<std::string>> rows;
    for (const PolicyRuns& p : pols) {
      const double si = SimType(p.sim, "all", "inter_dc_bytes");
      rows.push_back(
          {p.label, Cell(p, "all", "jtt_s", 1, 2), Fmt(SimType(p.sim, "all", "jtt_ms") / 1000, 1),
           Cell(p, "all", "wtt_s", 1, 1), Fmt(SimType(p.sim, "all", "wtt_ms") / 1000, 0),
           Cell(p, "all", "vps_locality_rate", 1, 3),
           Fmt(SimType(p.sim, "all", "vps_locality_rate"), 3),
           Cell(p, "all", "cen_locality_rate", 1, 3),
           Fmt(SimType(p.sim, "all", "cen_locality_rate"), 3), Cell(p, "all", "off_cen_rate", 1, 3),
           Fmt(SimType(p.sim, "all", "off_cen_rate"), 3),
           Cell(p, "all", "reduce_data_locality_rate", 1, 3),
           Fmt(SimType(p.sim, "all", "reduce_data_locality_rate"), 3),
           Cell(p, "all", "inter_dc_bytes", mb, 2),
           Fmt(Med(p, "all", "inter_dc_bytes") / ref_live, 2), Fmt(si / ref_sim, 2)});
    }
    md += "\n## The workload, live beside mr-sim\n\n" +
          Table({"policy", "JTT s", "sim JTT s", "WTT s", "sim WTT s", "VPS", "sim VPS", "Cen",
                 "sim Cen", "off-Cen", "sim off-Cen", "reduce-data loc.", "sim", "INT MB",
                 "INT ÷ " + ref->label, "sim INT ÷ " + ref->label},
                rows) +
          "\n";
  }
  {
    std::vector<std::vector<std::string>> rows;
    for (const std::string& t : types) {
      for (const PolicyRuns& p : pols) {
        rows.push_back({t, p.label, Cell(p, t, "jobs", 1, 0), Cell(p, t, "jtt_s", 1, 2),
                        Fmt(SimType(p.sim, t, "jtt_ms") / 1000, 1),
                        Cell(p, t, "vps_locality_rate", 1, 3),
                        Cell(p, t, "cen_locality_rate", 1, 3), Cell(p, t, "off_cen_rate", 1, 3),
                        Fmt(SimType(p.sim, t, "off_cen_rate"), 3),
                        Cell(p, t, "reduce_data_locality_rate", 1, 3),
                        Fmt(SimType(p.sim, t, "reduce_data_locality_rate"), 3),
                        Cell(p, t, "inter_dc_bytes", mb, 2)});
      }
    }
    md += "\n## Per job type\n\n" +
          Table({"type", "policy", "jobs", "JTT s", "sim JTT s", "VPS", "Cen", "off-Cen",
                 "sim off-Cen", "reduce-data loc.", "sim", "INT MB"},
                rows) +
          "\n";
  }
  {
    std::vector<std::vector<std::string>> rows;
    for (const PolicyRuns& p : pols) {
      rows.push_back({p.label, Cell(p, "all", "int_map_input", mb, 2),
                      Cell(p, "all", "int_shuffle", mb, 2), Cell(p, "all", "int_output", mb, 2),
                      Cell(p, "all", "int_prefetch", mb, 2), Cell(p, "all", "int_retried", mb, 2),
                      Cell(p, "all", "inter_dc_bytes", mb, 2),
                      Cell(p, "all", "client_inter_dc_bytes", mb, 2)});
    }
    md +=
        "\n## INT by component (MB)\n\nThe job records' inter-datacenter bytes summed over the "
        "workload's jobs "
        "(docs/jobs.md): the tasks' counted runs, the attempts that failed or ran again "
        "(`retried`), and `client`, mrctl's sample of the input (`client_inter_dc_bytes`; – when "
        "the records do not carry it).\n\n" +
        Table({"policy", "map input", "shuffle", "output", "prefetch", "retried", "INT", "client"},
              rows) +
        "\n";
  }
  if (kernel) {
    std::vector<std::vector<std::string>> rows;
    for (const PolicyRuns& p : pols) {
      rows.push_back(
          {p.label, Cell(p, "all", "kernel_worker_bytes", mb, 2),
           Cell(p, "all", "inter_dc_bytes", mb, 2), Cell(p, "all", "kernel_over_int", 1, 4),
           Cell(p, "all", "kernel_client_bytes", mb, 2),
           Cell(p, "all", "kernel_control_bytes", mb, 2), Cell(p, "all", "htb_dropped", 1, 0)});
    }
    md +=
        "\n## The kernel's inter-datacenter bytes against INT\n\nCounted by the router's nft rules "
        "from just "
        "after the uploads to the end of the last job (docs/testbed.md). kernel ÷ INT is "
        "worker↔worker bytes "
        "÷ the summed INT (with the client's bytes on both sides once records carry them); "
        "expected a little "
        "above 1 (TCP/IP headers).\n\n" +
        Table({"policy", "kernel worker MB", "INT MB", "kernel ÷ INT", "client MB", "control MB",
               "htb drops"},
              rows) +
        "\n";
  }
  {
    std::vector<std::vector<std::string>> rows;
    for (const PolicyRuns& p : pols) {
      rows.push_back({p.label, Cell(p, "all", "tasks_per_worker_mean", 1, 1),
                      Cell(p, "all", "tasks_per_worker_sd", 1, 2),
                      Cell(p, "all", "tasks_per_worker_min", 1, 0),
                      Cell(p, "all", "tasks_per_worker_max", 1, 0),
                      Cell(p, "all", "maps_per_worker_mean", 1, 1),
                      Cell(p, "all", "maps_per_worker_sd", 1, 2),
                      Fmt(SimType(p.sim, "all", "node_load_mean"), 1),
                      Fmt(SimType(p.sim, "all", "node_load_sd"), 2)});
    }
    md +=
        "\n## Tasks per worker\n\nMap and reduce tasks (final attempts) per worker over the "
        "workload, over the " +
        std::to_string(workers.size()) +
        " workers seen, and map tasks per worker beside mr-sim's maps per node "
        "(JoSS Tables 9-10; the claims use the maps).\n\n" +
        Table({"policy", "tasks mean", "SD", "min", "max", "maps mean", "maps SD", "sim maps mean",
               "sim SD"},
              rows) +
        "\n";
  }

  // Charts.
  svg::BarChart intc{sc->name + ": INT by component (median)",
                     "MB",
                     {},
                     {"map input", "shuffle", "output", "prefetch"},
                     {{}, {}, {}, {}}};
  svg::BarChart jtt{sc->name + ": mean JTT per job type (median)", "seconds", types, {}, {}};
  svg::BarChart loc{sc->name + ": map locality, live and mr-sim",
                    "share of maps",
                    {},
                    {"VPS", "Cen", "off-Cen", "sim VPS", "sim Cen", "sim off-Cen"},
                    std::vector<std::vector<double>>(6)};
  for (const PolicyRuns& p : pols) {
    intc.groups.push_back(p.label);
    loc.groups.push_back(p.label);
    const char* comps[] = {"int_map_input", "int_shuffle", "int_output", "int_prefetch"};
    for (int i = 0; i < 4; ++i) intc.values[i].push_back(Med(p, "all", comps[i]) * mb);
    const char* rates[] = {"vps_locality_rate", "cen_locality_rate", "off_cen_rate"};
    for (int i = 0; i < 3; ++i) {
      loc.values[i].push_back(Med(p, "all", rates[i]));
      loc.values[3 + i].push_back(SimType(p.sim, "all", rates[i]));
    }
    jtt.series.push_back(p.label);
    jtt.values.emplace_back();
    for (const std::string& t : types) jtt.values.back().push_back(Med(p, t, "jtt_s"));
  }
  md += "\n## Charts\n\n";
  for (const auto& [file, chart] :
       std::vector<std::pair<std::string, std::string>>{{"live-int.svg", svg::Render(intc)},
                                                        {"live-jtt.svg", svg::Render(jtt)},
                                                        {"live-locality.svg", svg::Render(loc)}}) {
    MR_RETURN_IF_ERROR(WriteFile(dir + "/" + file, chart));
    md += "![" + file + "](" + file + ")\n\n";
  }

  // The paper's claims: the same code as `mr-sim report`, on the live
  // medians and on mr-sim's runs.
  std::string base = sc->name;
  if (base.size() > 5 && base.compare(base.size() - 5, 5, "-live") == 0)
    base.resize(base.size() - 5);
  std::vector<Json> live_runs;
  for (const PolicyRuns& p : pols) live_runs.push_back(AsSimRun(p, base, types));
  Runs live_ptrs, sim_ptrs;
  for (const Json& r : live_runs) live_ptrs.push_back(&r);
  for (const PolicyRuns& p : pols) {
    if (p.sim) sim_ptrs.push_back(p.sim);
  }
  const auto live_sec = BuildSection(base, live_ptrs);
  const auto sim_sec = BuildSection(base, sim_ptrs);
  md += "\n## The paper's claims\n\n";
  if (!live_sec || live_sec->claims.empty()) {
    md += "No paper claim of `mr-sim report` applies (scenario `" + base +
          "`, or a policy its claims compare is missing from the runs).\n";
  } else {
    md +=
        "Judged by `mr-sim report`'s code (sim/claims_*.cc) on the live medians and on mr-sim's "
        "runs; "
        "**reproduced**, **partly** or **not**.\n\n";
    std::vector<std::vector<std::string>> rows;
    for (size_t i = 0; i < live_sec->claims.size(); ++i) {
      const Claim& c = live_sec->claims[i];
      const Claim* s = sim_sec && i < sim_sec->claims.size() ? &sim_sec->claims[i] : nullptr;
      rows.push_back({c.source, "**" + c.verdict + "**: " + c.measured,
                      s ? "**" + s->verdict + "**: " + s->measured : "–"});
    }
    md += Table({"claim", "live", "mr-sim"}, rows) + "\n";
    for (const Claim& c : live_sec->claims) md += "> " + c.quote + "\n>\n> — " + c.source + "\n\n";
    for (const Chart& ch : live_sec->charts) {
      const std::string file = "live-" + base + "-" + ch.name + ".svg";
      MR_RETURN_IF_ERROR(WriteFile(dir + "/" + file, ch.svg));
      md += "![" + ch.caption + " (live)](" + file + ")\n\n*" + ch.caption + " (live)*\n\n";
    }
  }
  return WriteFile(dir + "/report.md", md);
}

}  // namespace mr::sim

// The live runner (see live_runner.h).
#include "sim/live_runner.h"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>
#include <xxhash.h>

#include "sim/simulator.h"
#include "common/datagen.h"

namespace mr::sim {
namespace {

using nlohmann::json;
using Clock = std::chrono::steady_clock;

struct CommandResult {
  int exit_code = -1;
  std::string out, err;
};

std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

std::string Join(const std::vector<std::string>& argv) {
  std::string line;
  for (const std::string& a : argv) line += (line.empty() ? "" : " ") + Quote(a);
  return line;
}

// Runs argv through /bin/sh, capturing stdout and stderr.
CommandResult Run(const std::vector<std::string>& argv) {
  CommandResult r;
  char err_name[] = "/tmp/mr-workload-err-XXXXXX";
  const int fd = ::mkstemp(err_name);
  if (fd < 0) return r;
  ::close(fd);
  FILE* p = ::popen((Join(argv) + " 2>" + Quote(err_name)).c_str(), "r");
  if (p != nullptr) {
    std::array<char, 65536> buf;
    size_t n;
    while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
    const int status = ::pclose(p);
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  }
  std::ifstream e(err_name);
  std::stringstream ss;
  ss << e.rdbuf();
  r.err = ss.str();
  while (!r.err.empty() && r.err.back() == '\n') r.err.pop_back();
  std::filesystem::remove(err_name);
  return r;
}

// One job of the list with everything the live run needs.
struct LiveJobPlan {
  PlannedJob planned;
  const LiveJob* live = nullptr;
  std::string local_input, dfs_input, dfs_output, datacenter;
  std::vector<std::string> put, submit;  // argv after `mrctl [--config C]`
  int64_t at_ms = 0;                     // submit time after live.time_scale
  int64_t job_id = 0;
  int64_t submitted_ms = 0;  // actual, from the start of the timed phase
  nlohmann::json record;     // `mrctl job show --json` once every job has ended
  std::string verified;      // with verify: "yes", "no", or "" (not compared)
};

const char* Extension(const std::string& input) {
  return input == "web" ? "xml" : input == "dna" ? "fa" : "txt";
}

class LiveRun {
 public:
  LiveRun(const LiveRunOptions& o, std::ostream& out, std::ostream& err)
      : o_(o), out_(out), err_(err) {}

  int Main() {
    auto sc = LoadScenario(o_.file, o_.set);
    if (!sc.ok()) return Fail(sc.status().ToString(), 2);
    sc_ = *sc;
    auto list = PlanJobs(sc_);
    if (!list.ok()) return Fail(list.status().WithContext(o_.file).ToString(), 2);
    if (o_.dry_run && !o_.commands) {
      out_ << JobListCsv(*list);
      return 0;
    }
    if (const int rc = Plan(*list); rc != 0) return rc;
    if (o_.dry_run) {
      out_ << JobListCsv(*list) << "\n";
      for (const LiveJobPlan& j : jobs_) {
        out_ << "put " << j.planned.id << ": mrctl " << Join(j.put) << "\n";
        out_ << "run " << j.planned.id << " at " << j.at_ms << " ms: mrctl " << Join(j.submit)
             << "\n";
      }
      return 0;
    }
    if (!o_.scheduler.empty()) {
      std::vector<std::string> set = {"scheduler", "set", o_.scheduler};
      for (const std::string& p : o_.scheduler_params) set.insert(set.end(), {"-p", p});
      const CommandResult r = Mrctl(set);
      if (r.exit_code != 0) return Fail(r.err, 1);
    }
    if (const int rc = PutInputs(); rc != 0) return rc;
    if (!o_.before_jobs.empty()) {
      const CommandResult r = Run({"/bin/sh", "-c", o_.before_jobs});
      if (r.exit_code != 0) return Fail("--before-jobs failed: " + r.err, 1);
    }
    if (const int rc = SubmitAndWait(); rc != 0) return rc;
    if (!o_.after_jobs.empty()) {
      const CommandResult r = Run({"/bin/sh", "-c", o_.after_jobs});
      if (r.exit_code != 0) return Fail("--after-jobs failed: " + r.err, 1);
    }
    if (const int rc = FetchRecords(); rc != 0) return rc;
    const int mismatches = o_.verify ? Verify() : 0;
    const int rc = WriteResults();
    return rc == 0 && mismatches > 0 ? 1 : rc;
  }

 private:
  int Fail(const std::string& message, int code) {
    err_ << "mr-workload: " << message << "\n";
    return code;
  }

  CommandResult Mrctl(const std::vector<std::string>& args) const {
    std::vector<std::string> argv = {o_.mrctl};
    if (!o_.config.empty()) argv.insert(argv.end(), {"--config", o_.config});
    argv.insert(argv.end(), args.begin(), args.end());
    return Run(argv);
  }

  // The job datacenters' names: [live] datacenters, else the cluster's
  // (sorted by name), else (a dry run without a cluster) "dc#<index>".
  std::vector<std::string> DatacenterNames() const {
    if (!sc_.live.datacenters.empty()) return sc_.live.datacenters;
    std::set<std::string> names;
    if (!o_.dry_run) {
      const CommandResult r = Mrctl({"cluster", "status", "--json"});
      const json j = json::parse(r.out, nullptr, false);
      if (j.is_object() && j.contains("workers")) {
        for (const json& w : j["workers"]) names.insert(w.value("datacenter", ""));
      }
    }
    return {names.begin(), names.end()};
  }

  int Plan(const std::vector<PlannedJob>& list) {
    if (sc_.data.pool_blocks > 0 || sc_.data.popularity != "uniform") {
      return Fail(o_.file +
                      ": data.pool_blocks and a skewed data.popularity are simulation-only "
                      "(a live run puts each job's input itself)",
                  2);
    }
    for (const PlannedJob& p : list) {
      if (sc_.live.Find(p.type) == nullptr) {
        return Fail(o_.file + ": job type '" + p.type + "' has no [[live.jobs]] entry", 2);
      }
    }
    const int64_t block = std::max<int64_t>(
        64 << 10, static_cast<int64_t>(sc_.live.block_mb * 1048576.0) / (64 << 10) * (64 << 10));
    block_bytes_ = block;
    root_ = !o_.dfs_root.empty()
                ? o_.dfs_root
                : "/workload/" + (sc_.name.empty() ? std::string("workload") : sc_.name) + "/" +
                      std::to_string(std::chrono::duration_cast<std::chrono::milliseconds>(
                                         std::chrono::system_clock::now().time_since_epoch())
                                         .count());
    const bool job_dc = sc_.data.placement == "job-datacenter";
    const std::vector<std::string> dcs = job_dc ? DatacenterNames() : std::vector<std::string>();
    for (const PlannedJob& p : list) {
      LiveJobPlan j;
      j.planned = p;
      j.live = sc_.live.Find(p.type);
      const std::string name = std::to_string(p.id) + "-" + p.type;
      j.local_input = o_.out_dir + "/inputs/" + name + "." + Extension(j.live->input);
      j.dfs_input = root_ + "/in/" + name + "." + Extension(j.live->input);
      j.dfs_output = root_ + "/out/" + name;
      j.put = {
          "dfs", "put", "-r", std::to_string(sc_.data.replication), "-b", std::to_string(block)};
      if (job_dc && p.datacenter >= 0) {
        j.datacenter = static_cast<size_t>(p.datacenter) < dcs.size()
                           ? dcs[static_cast<size_t>(p.datacenter)]
                           : "dc#" + std::to_string(p.datacenter);
        if (!o_.dry_run && static_cast<size_t>(p.datacenter) >= dcs.size()) {
          return Fail("job " + std::to_string(p.id) + " is placed in datacenter " +
                          std::to_string(p.datacenter) + " but the cluster has " +
                          std::to_string(dcs.size()) +
                          " (set live.datacenters or cluster.datacenters)",
                      2);
        }
        j.put.insert(j.put.end(), {"--datacenter", j.datacenter});
      }
      j.put.insert(j.put.end(), {j.local_input, j.dfs_input});
      // One output replica, on the reducer's node: the simulator models no
      // output replication (docs/simulator.md), and the live run must match.
      j.submit = {"job",        "run",       j.live->job,
                  "-i",         j.dfs_input, "-o",
                  j.dfs_output, "-r",        std::to_string(p.reduces),
                  "--output-replication", "1"};
      for (const auto& [k, v] : j.live->params)
        j.submit.insert(j.submit.end(), {"-p", k + "=" + v});
      j.submit.push_back("--json");
      j.at_ms = static_cast<int64_t>(static_cast<double>(p.submit_ms) / sc_.live.time_scale);
      jobs_.push_back(std::move(j));
    }
    return 0;
  }

  int PutInputs() {
    std::error_code ec;
    std::filesystem::create_directories(o_.out_dir + "/inputs", ec);
    if (ec) return Fail("cannot create '" + o_.out_dir + "/inputs': " + ec.message(), 2);
    for (const LiveJobPlan& j : jobs_) {
      auto kind = tools::ParseGenKind(j.live->input);
      if (!kind.ok()) return Fail(kind.status().ToString(), 2);
      {
        std::ofstream f(j.local_input, std::ios::binary | std::ios::trunc);
        const uint64_t seed = sc_.seed * 1000003ULL + static_cast<uint64_t>(j.planned.id);
        Status s = tools::Generate(*kind, block_bytes_ * j.planned.maps, seed, f);
        f.close();
        if (!s.ok() || !f) return Fail("cannot write '" + j.local_input + "': " + s.ToString(), 1);
      }
      const CommandResult r = Mrctl(j.put);
      if (r.exit_code != 0)
        return Fail("putting job " + std::to_string(j.planned.id) + "'s input: " + r.err, 1);
      if (!o_.keep_inputs && !o_.verify) std::filesystem::remove(j.local_input, ec);
    }
    err_ << "mr-workload: " << jobs_.size() << " inputs in " << root_ << "/in\n";
    return 0;
  }

  int SubmitAndWait() {
    const Clock::time_point start = Clock::now();
    const Clock::time_point deadline = start + std::chrono::seconds(o_.timeout_s);
    auto since = [start] {
      return std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
    };
    for (LiveJobPlan& j : jobs_) {
      std::this_thread::sleep_until(start + std::chrono::milliseconds(j.at_ms));
      j.submitted_ms = since();
      const CommandResult r = Mrctl(j.submit);
      const json reply = json::parse(r.out, nullptr, false);
      if (r.exit_code != 0 || !reply.is_object() || !reply.contains("id")) {
        return Fail("submitting job " + std::to_string(j.planned.id) + ": " + r.err, 1);
      }
      j.job_id = reply["id"].get<int64_t>();
    }
    std::set<int64_t> waiting;
    for (const LiveJobPlan& j : jobs_) waiting.insert(j.job_id);
    while (!waiting.empty()) {
      if (Clock::now() > deadline) {
        return Fail(std::to_string(waiting.size()) + " job(s) still running after " +
                        std::to_string(o_.timeout_s) + " s (--timeout)",
                    1);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
      const json list = json::parse(Mrctl({"job", "list", "--json"}).out, nullptr, false);
      if (!list.is_array()) continue;  // the master restarts: ask again
      for (const json& r : list) {
        if (r.value("state", "running") != "running") waiting.erase(r.value("id", int64_t{0}));
      }
    }
    wall_ms_ = since();
    return 0;
  }

  // mr-local's output for job j (its parts concatenated in name order) into
  // *want; with oracle_cache, looked up first under a key of the job, its
  // reducers, split size, parameters and the XXH3-64 of the input's bytes,
  // and stored there after a run (one workload under many policies needs
  // each oracle once). Called by Verify().
  CommandResult OracleOutput(const LiveJobPlan& j, std::string* want) const {
    std::vector<std::string> argv = {o_.mr_local,     j.live->job,
                                     "--input",       j.local_input,
                                     "--reducers",    std::to_string(j.planned.reduces),
                                     "--split-bytes", std::to_string(block_bytes_)};
    for (const auto& [k, v] : j.live->params) argv.insert(argv.end(), {"--param", k + "=" + v});
    std::string cached;
    if (!o_.oracle_cache.empty()) {
      std::ifstream in(j.local_input, std::ios::binary);
      const std::string bytes{std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
      std::vector<std::string> what = {argv[1]};  // not the binary's or the input's path
      what.insert(what.end(), argv.begin() + 4, argv.end());
      const std::string args = Join(what);
      char key[64];
      std::snprintf(key, sizeof key, "%016llx-%016llx",
                    static_cast<unsigned long long>(XXH3_64bits(bytes.data(), bytes.size())),
                    static_cast<unsigned long long>(XXH3_64bits(args.data(), args.size())));
      cached = o_.oracle_cache + "/" + key;
      std::ifstream c(cached, std::ios::binary);
      if (c) {
        want->assign(std::istreambuf_iterator<char>(c), std::istreambuf_iterator<char>());
        return {0, "", ""};
      }
    }
    std::error_code ec;
    const std::string dir = o_.out_dir + "/oracle/" + std::to_string(j.planned.id);
    std::filesystem::remove_all(dir, ec);
    argv.insert(argv.end(), {"--output", dir});
    const CommandResult r = Run(argv);
    if (r.exit_code == 0) {
      std::vector<std::filesystem::path> parts;
      for (const auto& e : std::filesystem::directory_iterator(dir, ec)) parts.push_back(e.path());
      std::sort(parts.begin(), parts.end());
      for (const auto& part : parts) {
        std::ifstream f(part, std::ios::binary);
        want->append(std::istreambuf_iterator<char>(f), std::istreambuf_iterator<char>());
      }
      if (!cached.empty()) {
        std::filesystem::create_directories(o_.oracle_cache, ec);
        std::ofstream(cached + ".tmp", std::ios::binary | std::ios::trunc) << *want;
        std::filesystem::rename(cached + ".tmp", cached, ec);  // whole or absent
      }
    }
    std::filesystem::remove_all(dir, ec);
    return r;
  }

  // Compares each succeeded job's output (`mrctl dfs cat`, its parts in
  // name order) with the concatenated parts of mr-local's run on the local
  // copy of its input with the same reducers, split size (the block size)
  // and parameters; sets j.verified. Returns the number that differ (or
  // could not be compared), each named on err_. Called once, after every
  // job has ended; removes the local inputs unless keep_inputs.
  int Verify() {
    int bad = 0;
    std::error_code ec;
    for (LiveJobPlan& j : jobs_) {
      if (j.record.value("state", "") != "succeeded") continue;
      std::string want;
      const CommandResult oracle = OracleOutput(j, &want);
      const CommandResult got = Mrctl({"dfs", "cat", j.dfs_output});
      const bool same = oracle.exit_code == 0 && got.exit_code == 0 && got.out == want;
      j.verified = same ? "yes" : "no";
      if (same) continue;
      ++bad;
      Fail("job " + std::to_string(j.planned.id) + " (" + j.live->job + ", id " +
               std::to_string(j.job_id) + "): " +
               (oracle.exit_code != 0 ? "mr-local failed: " + oracle.err
                : got.exit_code != 0  ? "dfs cat " + j.dfs_output + " failed: " + got.err
                                      : "output (" + std::to_string(got.out.size()) +
                                            " bytes) differs from mr-local's (" +
                                            std::to_string(want.size()) + " bytes)"),
           1);
    }
    if (!o_.keep_inputs) {
      for (const LiveJobPlan& j : jobs_) std::filesystem::remove(j.local_input, ec);
    }
    const auto checked = std::count_if(jobs_.begin(), jobs_.end(),
                                       [](const LiveJobPlan& j) { return !j.verified.empty(); });
    err_ << "mr-workload: " << checked << " outputs compared with mr-local's, " << bad
         << " differ\n";
    return bad;
  }

  // Reads every job's record once (`mrctl job show --json`) into j.record
  // and writes them all to OUT/records.json; called when every job has
  // ended, before Verify() and WriteResults() use them.
  int FetchRecords() {
    json all = json::array();
    for (LiveJobPlan& j : jobs_) {
      const CommandResult r = Mrctl({"job", "show", std::to_string(j.job_id), "--json"});
      j.record = json::parse(r.out, nullptr, false);
      if (r.exit_code != 0 || !j.record.is_object())
        return Fail("job show " + std::to_string(j.job_id) + ": " + r.err, 1);
      all.push_back(j.record);
    }
    std::ofstream f(o_.out_dir + "/records.json", std::ios::trunc);
    f << all.dump() << "\n";
    f.close();
    if (!f) return Fail("cannot write " + o_.out_dir + "/records.json", 1);
    return 0;
  }

  int WriteResults() {
    static const char* kColumns[] = {"id",
                                     "job_id",
                                     "type",
                                     "job",
                                     "input",
                                     "maps",
                                     "reduces",
                                     "datacenter",
                                     "batch",
                                     "planned_submit_ms",
                                     "submitted_ms",
                                     "policy",
                                     "policy_params",
                                     "state",
                                     "jtt_ms",
                                     "maps_node_local",
                                     "maps_rack_local",
                                     "maps_dc_local",
                                     "maps_off_dc",
                                     "vps_locality_rate",
                                     "cen_locality_rate",
                                     "off_cen_rate",
                                     "reduce_data_locality_rate",
                                     "inter_dc_bytes",
                                     "int_map_input",
                                     "int_shuffle",
                                     "int_output",
                                     "int_prefetch",
                                     "int_retried",
                                     "client_inter_dc_bytes",
                                     "input_bytes",
                                     "output",
                                     "verified"};
    json rows = json::array();
    int failed = 0;
    int64_t first_submit = INT64_MAX, last_end = 0;
    for (const LiveJobPlan& j : jobs_) {
      const json& rec = j.record;
      std::string params;
      const json sp = rec.value("scheduler_params", json::object());
      for (const auto& [k, v] : sp.items()) {
        params += (params.empty() ? "" : ";") + k + "=" +
                  (v.is_string() ? v.get<std::string>() : v.dump());
      }
      json row = {{"id", j.planned.id},
                  {"job_id", j.job_id},
                  {"type", j.planned.type},
                  {"job", j.live->job},
                  {"input", j.live->input},
                  {"maps", rec["maps_total"]},
                  {"reduces", rec["reduces_total"]},
                  {"datacenter", j.datacenter},
                  {"batch", j.planned.batch},
                  {"planned_submit_ms", j.at_ms},
                  {"submitted_ms", j.submitted_ms},
                  {"policy", rec["scheduler"]},
                  {"policy_params", params},
                  {"state", rec["state"]},
                  {"jtt_ms", rec["jtt_ms"]}};
      for (const char* k :
           {"maps_node_local", "maps_rack_local", "maps_dc_local", "maps_off_dc",
            "vps_locality_rate", "cen_locality_rate", "off_cen_rate", "reduce_data_locality_rate",
            "inter_dc_bytes", "input_bytes", "output"}) {
        row[k] = rec[k];
      }
      row["int_map_input"] = rec["map_input_bytes"]["other_dc"];
      row["int_shuffle"] = rec["shuffle_bytes"]["other_dc"];
      row["int_output"] = rec["output_replication_bytes"]["other_dc"];
      row["int_prefetch"] = rec["prefetch_inter_dc_bytes"];
      row["int_retried"] = rec.contains("retried_bytes") ? rec["retried_bytes"]["other_dc"] : json(0);
      // Counted by the client when the runtime records it (issue 12 point 6).
      row["client_inter_dc_bytes"] =
          rec.contains("client_inter_dc_bytes") ? rec["client_inter_dc_bytes"] : json(nullptr);
      row["verified"] = j.verified.empty() ? json(nullptr) : json(j.verified == "yes");
      if (rec["state"] != "succeeded") ++failed;
      first_submit = std::min(first_submit, rec.value("submit_ms", int64_t{0}));
      last_end = std::max(last_end, rec.value("end_ms", int64_t{0}));
      rows.push_back(row);
    }
    std::ofstream csv(o_.out_dir + "/jobs.csv", std::ios::trunc);
    for (size_t i = 0; i < std::size(kColumns); ++i) csv << (i ? "," : "") << kColumns[i];
    csv << "\n";
    for (const json& row : rows) {
      for (size_t i = 0; i < std::size(kColumns); ++i) {
        const json& v = row[kColumns[i]];
        csv << (i ? "," : "");
        if (v.is_string()) {
          csv << v.get<std::string>();
        } else if (!v.is_null()) {
          csv << v.dump();
        }
      }
      csv << "\n";
    }
    const int64_t wtt = rows.empty() ? 0 : last_end - first_submit;
    const json summary = {{"scenario", sc_.name},
                          {"file", o_.file},
                          {"seed", sc_.seed},
                          {"dfs_root", root_},
                          {"block_bytes", block_bytes_},
                          {"time_scale", sc_.live.time_scale},
                          {"wall_ms", wall_ms_},
                          {"wtt_ms", wtt},
                          {"jobs", rows}};
    std::ofstream js(o_.out_dir + "/jobs.json", std::ios::trunc);
    js << summary.dump(2) << "\n";
    csv.close();
    js.close();
    if (!csv || !js) return Fail("cannot write " + o_.out_dir + "/jobs.csv or jobs.json", 1);
    out_ << jobs_.size() << " jobs, " << failed << " failed; WTT " << wtt / 1000.0 << " s, wall "
         << wall_ms_ / 1000.0 << " s; " << o_.out_dir << "/jobs.csv\n";
    return failed == 0 ? 0 : 1;
  }

  const LiveRunOptions& o_;
  std::ostream& out_;
  std::ostream& err_;
  Scenario sc_;
  std::vector<LiveJobPlan> jobs_;
  std::string root_;
  int64_t block_bytes_ = 0;
  int64_t wall_ms_ = 0;
};

}  // namespace

int RunLiveWorkload(const LiveRunOptions& options, std::ostream& out, std::ostream& err) {
  LiveRun run(options, out, err);
  try {
    return run.Main();
  } catch (const std::exception& e) {  // a record of an unexpected shape (nlohmann::json)
    err << "mr-workload: unexpected reply from mrctl: " << e.what() << "\n";
    return 1;
  }
}

}  // namespace mr::sim

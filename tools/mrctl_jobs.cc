// mrctl's job commands: job run | list | show | kill, and history.
//
// `job run` checks what it can before submitting (the job exists, its
// parameters are valid), runs the job's Plan() on a sample of the input
// (Sort's split points), submits, and with --wait follows the job to its end
// with a progress line (tools/progress.h); `job wait` follows a job
// submitted earlier the same way.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <optional>
#include <thread>

#include <nlohmann/json.hpp>

#include "common/auth.h"
#include "jobs/codec.h"
#include "jobs/job.h"
#include "common/job_figures.h"
#include "common/job_name.h"
#include "proto/job.pb.h"
#include "common/cli_support.h"
#include "tools/mrctl_common.h"
#include "tools/mrctl_logs.h"
#include "tools/mrctl_counters.h"
#include "tools/mrctl_job_view.h"
#include "tools/mrctl_tasks.h"
#include "tools/job_sample.h"
#include "tools/plugin_describe.h"
#include "tools/progress.h"

namespace mr::tools {
namespace {

using nlohmann::json;

// One progress update for a followed job: the fraction of its tasks done,
// and how far it is.
void ShowJobProgress(Progress& progress, const pb::JobRecord& r) {
  const int total = r.maps_total() + r.reduces_total();
  const double secs = static_cast<double>(ElapsedMs(r, master::Figures(r))) / 1000.0;
  char text[160];
  std::snprintf(text, sizeof text, "%s, maps %d/%d, reduces %d/%d, %.1f MB/s, %.1f s", r.state().c_str(),
                r.maps_done(), r.maps_total(), r.reduces_done(), r.reduces_total(),
                secs > 0 ? static_cast<double>(r.bytes_read()) / 1e6 / secs : 0.0, secs);
  progress.Update(total > 0 ? static_cast<double>(r.maps_done() + r.reduces_done()) / total : -1.0, text);
}

// The ended job's whole record, its summary if that cannot be had (saying
// so: the job's outcome does not depend on it).
awaitable<pb::JobRecord> WholeRecord(dfs::DfsClient& c, pb::JobRecord summary) {
  pb::JobIdRequest req;
  req.set_job_id(summary.id());
  pb::JobRecord whole;
  const Status s = co_await c.CallMaster("job.Show", req, &whole);
  if (s.ok()) co_return whole;
  std::fprintf(stderr, "mrctl: job %lld ended, but its task records could not be fetched (%s): "
               "only its summary follows\n", static_cast<long long>(summary.id()), s.ToString().c_str());
  co_return summary;
}

// Follows a job to its end, with a progress line (tools/progress.h), asking
// the master for its summary (no task records: a few KiB whatever the job's
// size) every 0.1 s for the first 10 s, then every 0.25 s, and for its whole
// record once it ended. While the master cannot be reached (it restarts,
// and recovers the job), asks again with backoff (0.25 s doubling to 5 s)
// for up to kReconnectFor, saying so once on stderr.
awaitable<Result<pb::JobRecord>> Follow(dfs::DfsClient& c, int64_t id) {
  constexpr auto kReconnectFor = std::chrono::minutes(2);
  constexpr auto kMaxBackoff = std::chrono::milliseconds(5000);
  const long long job = static_cast<long long>(id);
  Progress progress("job " + std::to_string(id));
  pb::JobIdRequest req;
  req.set_job_id(id);
  req.set_summary(true);
  asio::steady_timer timer(co_await asio::this_coro::executor);
  std::optional<std::chrono::steady_clock::time_point> lost_since;
  auto backoff = std::chrono::milliseconds(250);
  constexpr auto kQuickFor = std::chrono::seconds(10);
  const auto followed_since = std::chrono::steady_clock::now();
  while (true) {
    pb::JobRecord r;
    Status s = co_await c.CallMaster("job.Show", req, &r);
    const auto now = std::chrono::steady_clock::now();
    if (s.IsUnavailable() || s.IsTimedOut()) {
      if (!lost_since) {
        lost_since = now;
        progress.Finish();
        std::fprintf(stderr, "mrctl: lost the master (%s); following job %lld again once it is back "
                     "(for up to %lld s)\n", s.ToString().c_str(), job,
                     static_cast<long long>(std::chrono::seconds(kReconnectFor).count()));
      } else if (now - *lost_since >= kReconnectFor) {
        co_return Status::Unavailable(
            "the master has been unreachable for " +
            std::to_string(std::chrono::seconds(kReconnectFor).count()) + " s (" + s.ToString() +
            "); job " + std::to_string(id) + " may still run: see `mrctl job show " +
            std::to_string(id) + "` once the master is back");
      }
      timer.expires_after(backoff);
      co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
      backoff = std::min(backoff * 2, kMaxBackoff);
      continue;
    }
    if (!s.ok() && s.IsNotFound() && lost_since) {
      co_return Status::NotFound("job " + std::to_string(id) +
                                 " is unknown to the master after it came back (was its data "
                                 "directory replaced?): " + s.ToString());
    }
    MR_CO_RETURN_IF_ERROR(s);
    if (lost_since) {
      std::fprintf(stderr, "mrctl: the master is back; job %lld is %s\n", job, r.state().c_str());
      lost_since.reset();
      backoff = std::chrono::milliseconds(250);
    }
    ShowJobProgress(progress, r);
    if (r.state() != "running") co_return co_await WholeRecord(c, std::move(r));
    // Short jobs are noticed within 0.1 s of their end, a long one less often.
    timer.expires_after(std::chrono::milliseconds(now - followed_since < kQuickFor ? 100 : 250));
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
  }
}

// Follows job `id` to its end, then prints its record (as JSON with
// `as_json`); a job that did not succeed sets *exit_code to 1 and says so
// in one line. Called by `job run --wait` and `job wait`.
awaitable<Status> FollowAndReport(dfs::DfsClient& c, int64_t id, bool as_json, int* exit_code) {
  auto end = co_await Follow(c, id);
  if (!end.ok()) co_return end.status();
  if (as_json) {
    std::printf("%s\n", JobJson(*end, true).dump(2).c_str());
  } else {
    PrintJob(*end);
  }
  if (end->state() != "succeeded") {
    *exit_code = 1;
    std::fprintf(stderr, "mrctl: job %lld %s%s%s\n", static_cast<long long>(end->id()), end->state().c_str(),
                 end->error().empty() ? "" : ": ", end->error().c_str());
  }
  co_return Status::OK();
}

// `--file`s of a streaming job: put under /.mr/staging/<token>/, which the
// master moves into the job's directory at submission (docs/user-jobs.md).
// Sets params["files_dir"]; returns the staging directory ("" for none).
awaitable<Result<std::string>> StageFiles(dfs::DfsClient& c, std::vector<std::string> files,
                                          jobs::Params* params) {
  if (files.empty()) co_return std::string();
  const char* user = std::getenv("USER");
  const std::string dir = "/.mr/staging/" + std::string(user != nullptr ? user : "user") + "-" +
                          std::to_string(std::chrono::system_clock::now().time_since_epoch().count()) +
                          "-" + std::to_string(::getpid());
  MR_CO_RETURN_IF_ERROR(co_await c.Mkdir(dir, /*parents=*/true));
  for (const std::string& local : files) {
    const std::string to = dir + "/" + local.substr(local.rfind('/') + 1);
    const dfs::PutOptions put;
    Status s = co_await c.Put(local, to, put);
    if (!s.ok()) {
      co_await c.Delete(dir, /*recursive=*/true);
      co_return s.WithContext("shipping --file " + local);
    }
  }
  (*params)["files_dir"] = dir;
  co_return dir;
}

// Runs `call` and, while the master cannot be reached (it restarts), runs it
// again with backoff (0.25 s doubling to 5 s) for up to 2 min, as Follow
// does, saying so once on stderr. Any other result is returned at once.
// Only for calls that are safe to repeat: reads, and job.Submit with a
// submit token.
awaitable<Status> RetryWhileMasterDown(const char* what, const std::function<awaitable<Status>()>& call) {
  constexpr auto kReconnectFor = std::chrono::minutes(2);
  constexpr auto kMaxBackoff = std::chrono::milliseconds(5000);
  asio::steady_timer timer(co_await asio::this_coro::executor);
  auto backoff = std::chrono::milliseconds(250);
  const auto since = std::chrono::steady_clock::now();
  bool said = false;
  for (;;) {
    Status s = co_await call();
    if (!s.IsUnavailable() && !s.IsTimedOut()) co_return s;
    if (std::chrono::steady_clock::now() - since >= kReconnectFor) {
      co_return s.WithContext(std::string(what) + ": the master was unreachable for " +
                              std::to_string(std::chrono::seconds(kReconnectFor).count()) + " s");
    }
    if (!said) {
      said = true;
      std::fprintf(stderr, "mrctl: cannot reach the master (%s); %s again once it is back (for up "
                   "to %lld s)\n", s.ToString().c_str(), what,
                   static_cast<long long>(std::chrono::seconds(kReconnectFor).count()));
    }
    timer.expires_after(backoff);
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    backoff = std::min(backoff * 2, kMaxBackoff);
  }
}

// A new submit token (JobSpec.submit_token): 16 random bytes, as hex.
std::string NewSubmitToken() {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string token;
  for (unsigned char b : RandomBytes(16)) token += kHex[b >> 4], token += kHex[b & 15];
  return token;
}

// One line naming the compressed inputs, which are not split (one map
// each, whatever their size): the first few of them, and how many more.
void PrintUnsplit(const pb::SubmitJobReply& submitted, FILE* out) {
  const auto& files = submitted.unsplit_inputs();
  if (files.empty()) return;
  constexpr int kNamed = 5;
  std::string names;
  for (int i = 0; i < files.size() && i < kNamed; ++i) names += (i > 0 ? ", " : "") + files[i];
  if (files.size() > kNamed) names += " and " + std::to_string(files.size() - kNamed) + " more";
  std::fprintf(out, "compressed input, not split (one map per file): %s\n", names.c_str());
}

awaitable<Status> RunJob(dfs::DfsClient& c, const JobCommandOptions& o, jobs::Params params, int* exit_code) {
  pb::JobSpec spec;
  spec.set_job(o.name);
  // A plug-in's Plan() is not run (its code is not loaded here).
  if (o.reducers > 1 && !jobs::FindJob(o.name)->runs_user_code) {
    // The sample is read from the replicas nearest this client, and what it
    // reads is counted: every byte from a replica in another datacenter than
    // the client's, or from any replica when the client's datacenter is
    // unknown (it is then taken to be outside every datacenter), is
    // inter-datacenter traffic the job caused (docs/jobs.md).
    int64_t read = 0, inter_dc = 0;
    Result<std::vector<std::string>> sample = Status::Internal("not sampled");
    // (Named, not a temporary in the co_await: docs/development.md, GCC 12.)
    const std::function<awaitable<Status>()> sample_once = [&]() -> awaitable<Status> {
      MR_CO_RETURN_IF_ERROR(co_await InferLocation(c));
      const std::string here = c.location().datacenter;
      c.set_traffic_observer([&](const dfs::TransferEvent& e) {
        if (e.from == nullptr) return;
        read += e.bytes;
        if (here.empty() || e.from->datacenter() != here) inter_dc += e.bytes;
      });
      sample = co_await SampleInput(c, o.inputs);
      c.set_traffic_observer(nullptr);
      co_return sample.status();
    };
    MR_CO_RETURN_IF_ERROR(co_await RetryWhileMasterDown("sampling the input", sample_once));
    spec.set_client_read_bytes(read);
    spec.set_client_inter_dc_bytes(inter_dc);
    auto job = jobs::MakeJob(o.name, params);
    if (!job.ok()) co_return job.status();
    MR_CO_RETURN_IF_ERROR((*job)->Plan(*sample, o.reducers, &params));
  }
  for (const auto& [k, v] : params) (*spec.mutable_params())[k] = v;
  for (const auto& in : o.inputs) spec.add_inputs(in);
  spec.set_output(o.output);
  spec.set_reducers(o.reducers);
  spec.set_pool(o.pool);
  spec.set_priority(o.priority);
  spec.set_output_replication(o.output_replication);
  spec.set_output_compression(o.output_compression);
  if (const char* user = std::getenv("USER")) spec.set_user(user);
  auto staged = co_await StageFiles(c, o.streaming.files, &params);
  if (!staged.ok()) co_return staged.status();
  (*spec.mutable_params())["files_dir"] = params["files_dir"];
  if (staged->empty()) spec.mutable_params()->erase("files_dir");
  // One token for every try: a retry after a lost reply, or across a master
  // restart, returns the job the first try started (never a second job).
  spec.set_submit_token(o.submit_token.empty() ? NewSubmitToken() : o.submit_token);
  pb::SubmitJobReply submitted;
  const std::function<awaitable<Status>()> submit_once = [&] {
    return c.CallMaster("job.Submit", spec, &submitted);
  };
  if (Status s = co_await RetryWhileMasterDown("submitting", submit_once); !s.ok()) {
    if (!staged->empty()) co_await c.Delete(*staged, /*recursive=*/true);
    co_return s;
  }
  PrintUnsplit(submitted, o.json ? stderr : stdout);
  if (!o.wait) {
    if (o.json) {
      std::printf("%s\n", json({{"id", submitted.job_id()}}).dump().c_str());
    } else {
      std::printf("job %lld submitted\n", static_cast<long long>(submitted.job_id()));
    }
    co_return Status::OK();
  }
  co_return co_await FollowAndReport(c, submitted.job_id(), o.json, exit_code);
}

int Run(Target& target, JobCommandOptions& o) {
  // `job run ./myjob.so`: the job "plugin", its .so shipped with the job.
  const std::string so_path = o.name.ends_with(".so") ? o.name : "";
  if (!so_path.empty()) {
    o.streaming.files.insert(o.streaming.files.begin(), o.name);
    o.params.push_back("so=" + o.name.substr(o.name.rfind('/') + 1));
    o.name = "plugin";
  }
  const jobs::JobInfo* info = jobs::FindJob(o.name);
  if (info == nullptr) {
    std::string names;
    for (const jobs::JobInfo* j : jobs::RegisteredJobs()) names += (names.empty() ? "" : ", ") + j->name;
    return Fail(Status::InvalidArgument("unknown job '" + o.name + "' (jobs: " + names + ")"), 2);
  }
  jobs::Params given;
  for (const std::string& kv : o.params) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos || eq == 0) {
      return Fail(Status::InvalidArgument("--param wants NAME=VALUE, got '" + kv + "'"), 2);
    }
    given[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  if (Status s = jobs::ApplyStreamingFlags(o.name, o.streaming, &given); !s.ok()) return Fail(s, 2);
  auto params = jobs::ResolveParams(*info, given);
  if (!params.ok()) return Fail(params.status(), 2);
  if (!so_path.empty()) {  // its name and parameters, from a child that loads it
    auto plugin = DescribePlugin(so_path);
    if (!plugin.ok()) return Fail(plugin.status(), 2);
    if (Status s = CheckPluginParams(*plugin, &*params); !s.ok()) return Fail(s, 2);
  }
  if (!info->runs_user_code) {
    if (auto job = jobs::MakeJob(o.name, *params); !job.ok()) return Fail(job.status(), 2);
  }
  if (o.reducers < 0) return Fail(Status::InvalidArgument("--reducers must be >= 0"), 2);
  if (auto codec = jobs::ParseOutputCompression(o.output_compression); !codec.ok()) {
    return Fail(codec.status(), 2);
  }
  int exit_code = 0;
  const int rc = WithClient(target, [&](dfs::DfsClient& c) { return RunJob(c, o, *params, &exit_code); });
  return rc != 0 ? rc : exit_code;
}

awaitable<Status> ListJobs(dfs::DfsClient& c, bool as_json, bool csv) {
  pb::JobListReply list;
  const pb::Empty empty;  // named: no class temporaries in co_await (docs/development.md)
  MR_CO_RETURN_IF_ERROR(co_await c.CallMaster("job.List", empty, &list));
  if (csv) {
    PrintJobsCsv(list, stdout);
    co_return Status::OK();
  }
  json all = json::array();
  if (!as_json) {
    std::printf("%5s  %-14s %-10s %7s %9s %9s %8s %8s  %-20s %s\n", "id", "job", "state", "maps", "reduces",
                "JTT s", "off-Cen", "INT", "output", "policy");
  }
  for (const auto& r : list.jobs()) {
    if (as_json) {
      all.push_back(JobJson(r, false));
      continue;
    }
    const master::JobFigures f = master::Figures(r);
    std::printf("%5lld  %-14s %-10s %3d/%-3d %4d/%-4d %9.1f %8.3f %8s  %-20s %s\n", static_cast<long long>(r.id()),
                master::ShownJobName(r.spec()).c_str(), r.state().c_str(), r.maps_done(), r.maps_total(), r.reduces_done(),
                r.reduces_total(), static_cast<double>(ElapsedMs(r, f)) / 1000.0, f.off_cen_rate,
                HumanBytes(f.inter_dc_bytes).c_str(), r.spec().output().c_str(), PolicyText(r).c_str());
  }
  if (as_json) std::printf("%s\n", all.dump(2).c_str());
  co_return Status::OK();
}

awaitable<Status> ShowJob(dfs::DfsClient& c, int64_t id, bool as_json, bool tasks, bool csv, bool why) {
  pb::JobIdRequest req;
  req.set_job_id(id);
  req.set_summary(!as_json && !tasks && !why);  // the plain view shows no task record
  pb::JobRecord r;
  MR_CO_RETURN_IF_ERROR(co_await c.CallMaster("job.Show", req, &r));
  if (as_json) {
    nlohmann::json j = JobJson(r, true);
    if (why) j["why"] = WhyJson(r);
    std::printf("%s\n", j.dump(2).c_str());
  } else if (tasks && csv) {
    PrintTasksCsv(r, stdout);
  } else {
    PrintJob(r);
    PrintAttempts(r, tasks, stdout);
    if (why) PrintWhy(r, stdout);
    PrintCounters(r, stdout);
    if (tasks) {
      PrintTasks(r, stdout);
      PrintTaskCounters(r, stdout);
    }
  }
  co_return Status::OK();
}

awaitable<Status> KillJob(dfs::DfsClient& c, int64_t id) {
  pb::JobIdRequest req;
  req.set_job_id(id);
  pb::Empty ignored;
  co_return co_await c.CallMaster("job.Kill", req, &ignored);
}

awaitable<Status> History(dfs::DfsClient& c, bool as_json, bool csv) {
  pb::HistoryReply h;
  const pb::Empty empty;
  MR_CO_RETURN_IF_ERROR(co_await c.CallMaster("job.History", empty, &h));
  if (csv) {
    PrintFpCsv(h, stdout);
    co_return Status::OK();
  }
  json all = json::array();
  for (const auto& row : h.rows()) {
    all.push_back({{"job", row.job()}, {"code_hash", row.code_hash()}, {"input_type", row.input_type()},
                   {"fp_raw", row.fp_raw()}, {"fp_wire", row.fp_wire()}, {"jobs", row.jobs()}});
  }
  if (as_json) {
    std::printf("%s\n", all.dump(2).c_str());
    co_return Status::OK();
  }
  std::printf("%-14s %-18s %-6s %8s %8s %5s\n", "job", "code_hash", "input", "fp_raw", "fp_wire", "jobs");
  for (const auto& row : h.rows()) {
    std::printf("%-14s %-18s %-6s %8.3f %8.3f %5lld\n", row.job().c_str(), row.code_hash().substr(0, 16).c_str(),
                row.input_type().c_str(), row.fp_raw(), row.fp_wire(), static_cast<long long>(row.jobs()));
  }
  co_return Status::OK();
}

}  // namespace

void AddJobCommands(CLI::App& app, Target& target, JobCommandOptions& o,
                    std::function<int()>* action) {
  auto* job = app.add_subcommand("job", "run and follow jobs")->require_subcommand(1);
  auto* run = job->add_subcommand("run", "submit a job (and with --wait, follow it to its end)");
  run->add_option("NAME", o.name, "job name (see `mrctl jobs`), or a plug-in: ./myjob.so")->required();
  run->add_option("-i,--input", o.inputs, "DFS input file or directory (repeatable)")->required();
  run->add_option("-o,--output", o.output, "DFS output directory (must not exist)")->required();
  run->add_option("-r,--reducers", o.reducers, "reduce tasks; 0 = map-only")->capture_default_str();
  run->add_option("-p,--param", o.params, "job parameter NAME=VALUE (repeatable)");
  run->add_option("--pool", o.pool, "Fair pool / Capacity queue (default: default)");
  run->add_option("--priority", o.priority, "-2 (very low) .. 2 (very high)")->check(CLI::Range(-2, 2));
  run->add_option("--output-replication", o.output_replication,
                  "replicas of each output block (default: [jobs] output_replication, else [dfs] replication)")
      ->check(CLI::NonNegativeNumber);
  run->add_option("--submit-token", o.submit_token,
                  "make the submission idempotent: a master that saw this token answers with its "
                  "job instead of starting another (default: a fresh random one per run)");
  run->add_option("--output-compression", o.output_compression,
                  "write the part files compressed: none (default), gzip (part-00000.gz) or zstd (.zst)");
  jobs::AddStreamingFlags(*run, o.streaming);
  run->add_flag("-w,--wait", o.wait, "wait for the end; exit 1 unless the job succeeded");
  run->add_flag("--json", o.json, "print the job record as JSON (with --wait) or its id");
  run->callback([action, &target, &o] { *action = [&target, &o] { return Run(target, o); }; });

  auto* list = job->add_subcommand("list", "every job the master knows, running or ended");
  list->add_flag("--json", o.json, "print JSON");
  list->add_flag("--csv", o.csv, "print CSV, one row per job (docs/jobs.md)");
  list->callback([action, &target, &o] {
    *action = [&target, &o] { return WithClient(target, [&](auto& c) { return ListJobs(c, o.json, o.csv); }); };
  });
  auto* show = job->add_subcommand("show", "one job's record: locality, traffic, FP, tasks");
  show->add_option("ID", o.id, "the job id (mrctl job list)")->required();
  show->add_flag("--json", o.json, "print JSON (with every task)");
  show->add_flag("--tasks", o.tasks, "also one line per task: node, locality, bytes, start, end, phases");
  show->add_flag("--csv", o.csv, "with --tasks: the tasks as CSV (docs/jobs.md)")->needs("--tasks");
  show->add_flag("--why", o.why, "why it took as long as it did: critical path, time lost, slowest worker and link");
  show->callback([action, &target, &o] {
    *action = [&target, &o] {
      return WithClient(target, [&](auto& c) { return ShowJob(c, o.id, o.json, o.tasks, o.csv, o.why); });
    };
  });
  auto* wait = job->add_subcommand("wait", "follow a running job to its end (exit 0 if it succeeded, 1 if not)");
  wait->add_option("ID", o.id, "the job id (mrctl job list)")->required();
  wait->add_flag("--json", o.json, "print the job record as JSON at the end");
  wait->callback([action, &target, &o] {
    *action = [&target, &o] {
      int exit_code = 0;
      const int rc = WithClient(target, [&](auto& c) { return FollowAndReport(c, o.id, o.json, &exit_code); });
      return rc != 0 ? rc : exit_code;
    };
  });
  AddJobLogsCommand(*job, target, action);
  auto* kill = job->add_subcommand("kill", "stop a running job (its output is discarded)");
  kill->add_option("ID", o.id, "the job id (mrctl job list)")->required();
  kill->callback([action, &target, &o] {
    *action = [&target, &o] { return WithClient(target, [&](auto& c) { return KillJob(c, o.id); }); };
  });
  auto* history = app.add_subcommand("history", "the filtering-percentage table (JoSS Fig. 4)");
  history->add_flag("--json", o.json, "print JSON");
  history->add_flag("--csv", o.csv, "print CSV");
  history->callback([action, &target, &o] {
    *action = [&target, &o] { return WithClient(target, [&](auto& c) { return History(c, o.json, o.csv); }); };
  });
}

}  // namespace mr::tools

// `mrctl job logs JOB [TASK] [--attempt N] [--follow]`: task attempts' logs
// (docs/logs-and-counters.md, "Task logs").
//
// The client asks the master where each attempt ran (the job record's
// attempt_places) and which address each worker has, then reads the logs
// straight from those workers ("tasklog.Read"), one connection per worker,
// all of a worker's attempts in a few batched calls. The master does not
// proxy them: log bytes (up to [task_logs] limit_kb per attempt, and a
// --follow held open for as long as a task runs) stay off the master,
// whose one thread schedules every job; mrctl already reaches workers
// directly for DFS reads.
#include "tools/mrctl_logs.h"

#include <cstdio>
#include <map>
#include <tuple>

#include "proto/cluster.pb.h"
#include "common/task_log_client.h"

namespace mr::tools {
namespace {

struct LogsOptions {
  int64_t job = 0;
  std::string task;
  int attempt = -1;
  bool follow = false;
};

// Worker id → (address, live) from the master's membership.
awaitable<Result<std::map<std::string, std::pair<std::string, bool>>>> Workers(dfs::DfsClient& c) {
  pb::ClusterStatusReply st;
  const pb::Empty empty;
  MR_CO_RETURN_IF_ERROR(co_await c.CallMaster("cluster.Status", empty, &st));
  std::map<std::string, std::pair<std::string, bool>> out;
  for (const pb::WorkerStatus& w : st.workers()) out[w.worker().id()] = {w.worker().address(), w.live()};
  co_return out;
}

pb::TaskLogWant WantOf(int64_t job, const pb::AttemptPlace& a) {
  pb::TaskLogWant w;
  w.mutable_attempt()->set_job_id(job);
  w.mutable_attempt()->set_is_map(a.is_map());
  w.mutable_attempt()->set_index(a.index());
  w.mutable_attempt()->set_attempt(a.attempt());
  return w;
}

// The worker at `node`'s address, or an error naming the attempt it ran.
// A worker the master holds for dead is still asked (a loaded machine may
// miss heartbeats); one no longer in the cluster is not.
Result<HostPort> WorkerAddress(const std::map<std::string, std::pair<std::string, bool>>& workers,
                               const pb::AttemptPlace& a) {
  auto it = workers.find(a.node());
  if (it == workers.end()) {
    return Status::Unavailable("worker " + a.node() + ", which ran " + worker::AttemptText(a) +
                               ", is no longer in the cluster: its logs cannot be read");
  }
  return ParseHostPort(it->second.first);
}

// The one line for a worker that could not be read.
Status Unreachable(const std::map<std::string, std::pair<std::string, bool>>& workers,
                   const pb::AttemptPlace& a, const Status& why) {
  auto it = workers.find(a.node());
  const bool live = it != workers.end() && it->second.second;
  return Status::Unavailable("worker " + a.node() + ", which ran " + worker::AttemptText(a) + ", " +
                             (live ? "cannot be reached" : "is gone (not live)") + " (" + why.message() +
                             "): its logs cannot be read");
}

// Every selected attempt's log, worker by worker, each under a header.
awaitable<Status> PrintLogs(dfs::DfsClient& c, const Target& target, int64_t job,
                            const std::vector<pb::AttemptPlace>& attempts) {
  MR_CO_ASSIGN_OR_RETURN(auto workers, co_await Workers(c));
  std::map<std::string, std::vector<pb::AttemptPlace>> by_node;
  for (const pb::AttemptPlace& a : attempts) by_node[a.node()].push_back(a);
  Status error;
  for (const auto& entry : by_node) {
    const std::string& node = entry.first;
    const std::vector<pb::AttemptPlace>& list = entry.second;
    auto address = WorkerAddress(workers, list.front());
    Status s = address.status();
    std::vector<pb::TaskLogWant> wants;
    for (const pb::AttemptPlace& a : list) wants.push_back(WantOf(job, a));
    std::map<std::tuple<bool, int32_t, int32_t>, size_t> index;  // attempt → its place in `list`
    for (size_t i = 0; i < list.size(); ++i) index[{list[i].is_map(), list[i].index(), list[i].attempt()}] = i;
    std::vector<bool> headed(list.size());  // its header is printed
    if (s.ok()) {
      s = co_await worker::ReadTaskLogs(*address, target.rpc, &wants, [&](const pb::TaskLogSlice& slice) {
        const pb::TaskRef& a = slice.attempt();
        auto it = index.find({a.is_map(), a.index(), a.attempt()});
        if (it == index.end()) return;
        const size_t shown = it->second;
        if (!headed[shown]) {
          headed[shown] = true;
          std::printf("==> %s on %s%s <==\n", worker::AttemptText(list[shown]).c_str(), node.c_str(),
                      !slice.found() ? ": no log there (removed by [task_logs] retention?)"
                      : slice.done() ? "" : " (running)");
        }
        std::fwrite(slice.data().data(), 1, slice.data().size(), stdout);
      });
    }
    if (!s.ok() && address.ok()) s = Unreachable(workers, list.front(), s);
    if (!s.ok()) {
      // One line per worker that cannot be read; the last one mrctl prints.
      if (!error.ok()) std::fprintf(stderr, "mrctl: %s\n", error.message().c_str());
      error = s;
    }
  }
  co_return error;
}

// Follows one attempt's log until it ends: everything so far, then what
// comes, asking every 250 ms.
awaitable<Status> FollowLog(dfs::DfsClient& c, const Target& target, int64_t job, pb::AttemptPlace a) {
  MR_CO_ASSIGN_OR_RETURN(auto workers, co_await Workers(c));
  MR_CO_ASSIGN_OR_RETURN(const HostPort address, WorkerAddress(workers, a));
  std::vector<pb::TaskLogWant> wants = {WantOf(job, a)};
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (;;) {
    bool done = false, found = true;
    Status s = co_await worker::ReadTaskLogs(address, target.rpc, &wants, [&](const pb::TaskLogSlice& slice) {
      std::fwrite(slice.data().data(), 1, slice.data().size(), stdout);
      done = slice.done() && !slice.more();
      found = slice.found();
    });
    std::fflush(stdout);
    if (!s.ok()) co_return Unreachable(workers, a, s);
    if (!found) co_return Status::NotFound("worker " + a.node() + " has no log of " + worker::AttemptText(a));
    if (done) co_return Status::OK();
    timer.expires_after(std::chrono::milliseconds(250));
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
  }
}

awaitable<Status> Logs(dfs::DfsClient& c, const Target& target, const LogsOptions& o) {
  pb::JobIdRequest req;
  req.set_job_id(o.job);
  pb::JobRecord record;
  MR_CO_RETURN_IF_ERROR(co_await c.CallMaster("job.Show", req, &record));
  MR_CO_ASSIGN_OR_RETURN(auto attempts, worker::SelectAttempts(record, o.task, o.attempt));
  if (!o.follow) co_return co_await PrintLogs(c, target, o.job, attempts);
  if (o.task.empty()) co_return Status::InvalidArgument("--follow follows one task: name it (m3, r0)");
  co_return co_await FollowLog(c, target, o.job, attempts.back());  // the latest attempt
}

}  // namespace

void AddJobLogsCommand(CLI::App& job, Target& target, std::function<int()>* action) {
  auto o = std::make_shared<LogsOptions>();
  auto* logs = job.add_subcommand("logs", "task attempts' logs, read from the workers that ran them");
  logs->add_option("JOB", o->job, "the job id (mrctl job list)")->required();
  logs->add_option("TASK", o->task, "one task: m3, r0 (default: every task)");
  logs->add_option("--attempt", o->attempt, "one attempt of TASK (default: all; --follow: the latest)")
      ->check(CLI::NonNegativeNumber);
  logs->add_flag("-f,--follow", o->follow, "print TASK's log as it grows until the attempt ends");
  logs->callback([action, &target, o] {
    *action = [&target, o] {
      return WithClient(target, [&target, o](dfs::DfsClient& c) { return Logs(c, target, *o); });
    };
  });
}

}  // namespace mr::tools

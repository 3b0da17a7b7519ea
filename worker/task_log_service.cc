// TaskTracker's side of task logs (task_log.h): the framework's first and
// last lines of each attempt, "tasklog.Read", and the retention sweep.
#include <algorithm>

#include <spdlog/spdlog.h>

#include "proto/task_log.pb.h"
#include "worker/task_tracker.h"

namespace mr::worker {
namespace {

// Log text in one reply: under the 4 MiB frame limit with room for the rest.
constexpr int64_t kMaxReplyBytes = 3 << 20;

std::string TaskName(const pb::TaskSpec& spec) {
  return std::string(spec.is_map() ? "map " : "reduce ") + std::to_string(spec.index()) + " attempt " +
         std::to_string(spec.attempt());
}

const char* StateName(pb::TaskReport::State state) {
  switch (state) {
    case pb::TaskReport::SUCCEEDED: return "succeeded";
    case pb::TaskReport::KILLED: return "killed";
    default: return "failed";
  }
}

}  // namespace

void TaskTracker::LogStart(Task& task) const {
  const pb::TaskSpec& spec = task.spec;
  std::string line = TaskName(spec) + " of job " + std::to_string(spec.job_id()) + " (" + spec.job() +
                     ") on worker " + self_.id + " (" + self_.datacenter + ")";
  if (spec.is_map()) {
    line += ": split [" + std::to_string(spec.split_offset()) + ", " +
            std::to_string(spec.split_offset() + spec.split_length()) + ") of " + spec.file() + " (" +
            std::to_string(spec.file_length()) + " bytes), block " + std::to_string(spec.block_id()) + ", " +
            (spec.reducers() == 0 ? std::string("map-only") : std::to_string(spec.reducers()) + " reducers");
  } else {
    line += ": partition " + std::to_string(spec.index()) + " of " + std::to_string(spec.maps()) + " maps";
  }
  task.log->Line(line);
}

void TaskTracker::LogEnd(Task& task, const Status& s) {
  const pb::TaskReport& r = task.report;
  const char* state = StateName(r.state());
  std::string line = TaskName(task.spec) + " " + state + " after " + std::to_string(r.run_ms()) + " ms";
  if (s.ok()) {
    line += task.spec.is_map() ? ": read " + std::to_string(task.bytes_read.load()) + " bytes, " +
                                     std::to_string(r.records_in()) + " records in, " +
                                     std::to_string(r.records_out()) + " out"
                               : ": " + std::to_string(r.records_in()) + " records in, " +
                                     std::to_string(r.output_records()) + " out";
    if (r.output_bytes() > 0) line += ", wrote " + std::to_string(r.output_bytes()) + " bytes";
  } else {
    line += ": " + s.ToString();
  }
  task.log->Line(line);
  task.log->Close(state);
}

std::shared_ptr<TaskLog> TaskTracker::LiveLog(const pb::TaskRef& ref) {
  std::lock_guard lock(mu_);
  for (const auto& t : tasks_) {
    const pb::TaskSpec& s = t->spec;
    if (s.job_id() == ref.job_id() && s.is_map() == ref.is_map() && s.index() == ref.index() &&
        s.attempt() == ref.attempt()) {
      return t->log;
    }
  }
  return nullptr;
}

awaitable<Status> TaskTracker::ServeTaskLog(ServerCall& call) {
  pb::TaskLogRequest req;
  if (!call.Parse(&req)) co_return Status::ProtocolError("malformed TaskLogRequest");
  int64_t budget = req.max_bytes() > 0 ? std::min(req.max_bytes(), kMaxReplyBytes) : kMaxReplyBytes;
  pb::TaskLogReply reply;
  for (const pb::TaskLogWant& want : req.wants()) {
    pb::TaskLogSlice* out = reply.add_slices();
    *out->mutable_attempt() = want.attempt();
    if (budget <= 0) {  // this reply is full: the client asks again
      out->set_found(true);
      out->set_next_offset(want.offset());
      out->set_more(true);
      continue;
    }
    const pb::TaskRef& a = want.attempt();
    LogSlice slice;
    if (std::shared_ptr<TaskLog> live = LiveLog(a)) {
      slice = live->Read(want.offset(), budget);
    } else {
      auto read = logs_.Read(a.job_id(), a.is_map(), a.index(), a.attempt(), want.offset(), budget);
      if (!read.ok()) continue;  // found = false
      slice = std::move(read).value();
    }
    budget -= static_cast<int64_t>(slice.data.size());
    out->set_found(true);
    out->set_data(std::move(slice.data));
    out->set_next_offset(slice.next_offset);
    out->set_total_bytes(slice.total_bytes);
    out->set_omitted_bytes(slice.omitted_bytes);
    out->set_done(slice.done);
    out->set_more(slice.more);
  }
  call.replied = true;
  co_return co_await call.conn.SendReply(reply);
}

void TaskTracker::SweepLogs(bool now) {
  std::set<int64_t> running;
  {
    std::lock_guard lock(mu_);
    const auto t = std::chrono::steady_clock::now();
    if (!now && t - last_sweep_ < std::chrono::minutes(1)) return;
    last_sweep_ = t;
    for (const auto& task : tasks_) running.insert(task->spec.job_id());
  }
  const int64_t keep_ms = config_.task_logs.keep_hours * 3600 * 1000;
  const int removed = logs_.Sweep(keep_ms, config_.task_logs.keep_jobs, running, &remover_);
  if (removed > 0) spdlog::info("task logs: removed the logs of {} old job(s)", removed);
}

}  // namespace mr::worker

// Reading task logs from the worker that holds them ("tasklog.Read",
// proto/task_log.proto): `mrctl job logs` (tools/mrctl_logs.cc) and the
// master's log pages (master/log_pages.cc) share this.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "common/rpc.h"
#include "proto/job.pb.h"
#include "proto/task_log.pb.h"

namespace mr::worker {

// The attempts of `record` (AttemptPlace, in launch order) that `task`
// names: "" = all; "m3", "m-3", "map3", "map 3", "r0", "reduce 0" one task;
// `attempt` >= 0 one attempt of it. InvalidArgument for a TASK that is not
// a task name; NotFound when nothing matches.
Result<std::vector<pb::AttemptPlace>> SelectAttempts(const pb::JobRecord& record, const std::string& task,
                                                     int attempt);
// "map 3 attempt 1".
std::string AttemptText(const pb::AttemptPlace& a);

// Reads what is there now of each wanted log from the worker at `address`
// on one connection, asking again while a slice says `more`, and passes
// every slice to `on_slice` in order (an attempt's slices in stream order).
// `wants[i].offset` advances as slices arrive. Errors: the connection's.
awaitable<Status> ReadTaskLogs(const HostPort& address, const RpcOptions& options,
                               std::vector<pb::TaskLogWant>* wants,
                               const std::function<void(const pb::TaskLogSlice&)>& on_slice);

}  // namespace mr::worker

// The master's task log pages: /job/ID/log?task=m3&attempt=1 (plain text).
// The master asks the worker that ran the attempt ("tasklog.Read",
// common/task_log_client.h) and passes the log on; the status server's
// rule holds (docs/status-page.md: off loopback, or with
// http_require_secret, only with the cluster secret), since a log carries
// whatever the user's code printed.
#pragma once

#include <map>
#include <string>

#include "common/http_server.h"
#include "common/rpc.h"
#include "proto/job.pb.h"

namespace mr::master {

// A worker id → its address, for the workers that are live now.
using LiveAddresses = std::map<std::string, std::string>;

// True for "/job/12/log"; sets *id.
bool IsLogPath(const std::string& path, int64_t* id);

// The response for one attempt's log (`task` and `attempt` from the query;
// attempt defaults to the task's latest): 400 for a bad task, 404 when it
// never ran, 503 with one line when its worker is gone or cannot be read;
// else the log's text (up to 16 MiB). The status server answers on the
// master's thread and cannot wait for a worker, so the first request
// starts the fetch on `executor` (the master's) and answers with a small
// page that reloads itself every second; the log, once here, is served
// for 10 s (a running attempt's for 1 s) before it is fetched afresh.
HttpResponse TaskLogPage(const pb::JobRecord& job, const HttpRequest& req, const LiveAddresses& live,
                         RpcOptions options, asio::any_io_executor executor);

// The job page's "Task logs" section: per task, a link to each attempt's
// log, with the worker that ran it.
std::string AttemptLogLinks(const pb::JobRecord& job);

// "/job/12/log?task=m3&amp;attempt=1": the link of one attempt's log, HTML-escaped
// for an href.
std::string TaskLogLink(int64_t job, bool is_map, int32_t index, int32_t attempt);

}  // namespace mr::master

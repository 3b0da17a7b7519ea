#include "common/task_log_client.h"

#include <cctype>

namespace mr::worker {
namespace {

// "m3" → (true, 3); false when `task` is no task name.
bool ParseTask(std::string task, bool* is_map, int32_t* index) {
  std::string letters, digits;
  for (char c : task) {
    if (std::isdigit(static_cast<unsigned char>(c))) {
      digits += c;
    } else if (!digits.empty()) {
      return false;
    } else if (c != ' ' && c != '-' && c != '_') {
      letters += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    }
  }
  if (digits.empty() || digits.size() > 9) return false;
  if (letters == "m" || letters == "map") {
    *is_map = true;
  } else if (letters == "r" || letters == "reduce") {
    *is_map = false;
  } else {
    return false;
  }
  *index = std::stoi(digits);
  return true;
}

}  // namespace

std::string AttemptText(const pb::AttemptPlace& a) {
  return std::string(a.is_map() ? "map " : "reduce ") + std::to_string(a.index()) + " attempt " +
         std::to_string(a.attempt());
}

Result<std::vector<pb::AttemptPlace>> SelectAttempts(const pb::JobRecord& record, const std::string& task,
                                                     int attempt) {
  bool is_map = true;
  int32_t index = 0;
  if (!task.empty() && !ParseTask(task, &is_map, &index)) {
    return Status::InvalidArgument("'" + task + "' is not a task: name one as m3, r0, \"map 3\" or \"reduce 0\"");
  }
  std::vector<pb::AttemptPlace> out;
  for (const pb::AttemptPlace& a : record.attempt_places()) {
    if (!task.empty() && (a.is_map() != is_map || a.index() != index)) continue;
    if (attempt >= 0 && a.attempt() != attempt) continue;
    out.push_back(a);
  }
  if (out.empty()) {
    std::string what = task.empty() ? "job " + std::to_string(record.id()) + " has no attempts"
                                    : std::string(is_map ? "map " : "reduce ") + std::to_string(index) +
                                          (attempt >= 0 ? " attempt " + std::to_string(attempt) : "") +
                                          " of job " + std::to_string(record.id()) + " never ran";
    if (record.attempt_places_size() == 0 && record.maps_total() > 0) {
      what += " on record (it ran before the master kept where attempts run)";
    }
    return Status::NotFound(what);
  }
  return out;
}

awaitable<Status> ReadTaskLogs(const HostPort& address, const RpcOptions& options,
                               std::vector<pb::TaskLogWant>* wants,
                               const std::function<void(const pb::TaskLogSlice&)>& on_slice) {
  auto conn = co_await Connect(address, options);
  if (!conn.ok()) co_return conn.status();
  std::vector<size_t> pending(wants->size());
  for (size_t i = 0; i < pending.size(); ++i) pending[i] = i;
  while (!pending.empty()) {
    pb::TaskLogRequest req;
    for (size_t i : pending) *req.add_wants() = (*wants)[i];
    pb::TaskLogReply reply;
    MR_CO_RETURN_IF_ERROR(co_await (*conn)->Call("tasklog.Read", req, &reply));
    if (reply.slices_size() != static_cast<int>(pending.size())) {
      co_return Status::ProtocolError("tasklog.Read answered " + std::to_string(reply.slices_size()) +
                                      " slices for " + std::to_string(pending.size()) + " logs");
    }
    std::vector<size_t> again;
    for (int k = 0; k < reply.slices_size(); ++k) {
      const pb::TaskLogSlice& s = reply.slices(k);
      pb::TaskLogWant& want = (*wants)[pending[static_cast<size_t>(k)]];
      if (!s.data().empty() || !s.more()) on_slice(s);
      want.set_offset(s.next_offset());
      if (s.found() && s.more()) again.push_back(pending[static_cast<size_t>(k)]);
    }
    pending = std::move(again);
  }
  co_return Status::OK();
}

}  // namespace mr::worker

#include "master/log_pages.h"

#include <algorithm>
#include <cctype>
#include <chrono>
#include <memory>
#include <tuple>
#include <utility>

#include "common/task_log_client.h"

namespace mr::master {
namespace {

constexpr int64_t kMaxPageBytes = 16 << 20;

HttpResponse Text(int status, std::string body) {
  HttpResponse r;
  r.status = status;
  r.content_type = "text/plain; charset=utf-8";
  r.body = std::move(body);
  return r;
}

}  // namespace

bool IsLogPath(const std::string& path, int64_t* id) {
  const std::string prefix = "/job/", suffix = "/log";
  if (!path.starts_with(prefix) || !path.ends_with(suffix) || path.size() <= prefix.size() + suffix.size()) {
    return false;
  }
  const std::string digits = path.substr(prefix.size(), path.size() - prefix.size() - suffix.size());
  if (digits.size() > 18 || !std::all_of(digits.begin(), digits.end(), ::isdigit)) return false;
  *id = std::stoll(digits);
  return true;
}

std::string TaskLogLink(int64_t job, bool is_map, int32_t index, int32_t attempt) {
  return "/job/" + std::to_string(job) + "/log?task=" + (is_map ? "m" : "r") + std::to_string(index) +
         "&amp;attempt=" + std::to_string(attempt);
}

std::string AttemptLogLinks(const pb::JobRecord& job) {
  if (job.attempt_places_size() == 0) return "";
  // Tasks in order, maps first; a task's attempts in launch order.
  std::map<std::pair<bool, int32_t>, std::string> rows;
  for (const pb::AttemptPlace& a : job.attempt_places()) {
    std::string& row = rows[{!a.is_map(), a.index()}];
    row += std::string(row.empty() ? "" : ", ") + "<a href=\"" +
           TaskLogLink(job.id(), a.is_map(), a.index(), a.attempt()) + "\">attempt " +
           std::to_string(a.attempt()) + "</a> (" + HtmlEscape(a.node()) + ")";
  }
  std::string out = "<h2>Task logs</h2>\n<ul id=\"logs\">\n";
  for (const auto& [task, links] : rows) {
    out += std::string("<li>") + (task.first ? "reduce " : "map ") + std::to_string(task.second) + ": " + links +
           "</li>\n";
  }
  return out + "</ul>\n";
}

namespace {

// A log fetched for the pages (on the master's thread only).
struct Fetched {
  bool pending = false;  // a fetch is under way
  HttpResponse response;
  bool ready = false;
  bool done = false;     // the attempt had ended
  std::chrono::steady_clock::time_point at;
};
using AttemptKey = std::tuple<int64_t, bool, int32_t, int32_t>;

std::map<AttemptKey, std::shared_ptr<Fetched>>& Fetches() {
  static std::map<AttemptKey, std::shared_ptr<Fetched>> fetches;
  return fetches;
}

asio::awaitable<void> Fetch(std::shared_ptr<Fetched> into, int64_t job, pb::AttemptPlace place, HostPort at,
                            RpcOptions options) {
  std::vector<pb::TaskLogWant> wants(1);
  pb::TaskRef* ref = wants[0].mutable_attempt();
  ref->set_job_id(job), ref->set_is_map(place.is_map()), ref->set_index(place.index());
  ref->set_attempt(place.attempt());
  std::string text;
  bool found = true, done = true;
  Status s = co_await worker::ReadTaskLogs(at, options, &wants, [&](const pb::TaskLogSlice& slice) {
    found = slice.found();
    done = slice.done();
    if (static_cast<int64_t>(text.size()) < kMaxPageBytes) text += slice.data();
  });
  if (!s.ok()) {
    into->response = Text(503, "worker " + place.node() + ", which ran " + worker::AttemptText(place) +
                                   ", cannot be reached: " + s.message() + "\n");
  } else if (!found) {
    into->response = Text(404, "worker " + place.node() + " has no log of " + worker::AttemptText(place) + "\n");
  } else {
    if (!done) text += "\n[mr: the attempt is running; reload for more]\n";
    into->response = Text(200, std::move(text));
  }
  into->done = done;
  into->ready = true;
  into->pending = false;
  into->at = std::chrono::steady_clock::now();
}

}  // namespace

HttpResponse TaskLogPage(const pb::JobRecord& job, const HttpRequest& req, const LiveAddresses& live,
                         RpcOptions options, asio::any_io_executor executor) {
  auto q = req.query.find("task");
  auto a = req.query.find("attempt");
  if (q == req.query.end() || q->second.empty()) return Text(400, "name a task: ?task=m3&attempt=0\n");
  int attempt = -1;
  if (a != req.query.end() && !a->second.empty()) {
    if (a->second.size() > 6 || !std::all_of(a->second.begin(), a->second.end(), ::isdigit)) {
      return Text(400, "attempt must be a number\n");
    }
    attempt = std::stoi(a->second);
  }
  auto attempts = worker::SelectAttempts(job, q->second, attempt);
  if (!attempts.ok()) {
    return Text(attempts.status().IsInvalidArgument() ? 400 : 404, attempts.status().message() + "\n");
  }
  const pb::AttemptPlace place = attempts->back();
  auto it = live.find(place.node());
  auto address = it == live.end() ? Result<HostPort>(Status::NotFound("")) : ParseHostPort(it->second);
  if (!address.ok()) {
    return Text(503, "worker " + place.node() + ", which ran " + worker::AttemptText(place) +
                         ", is gone: its log cannot be read\n");
  }
  std::shared_ptr<Fetched>& entry = Fetches()[{job.id(), place.is_map(), place.index(), place.attempt()}];
  if (!entry) entry = std::make_shared<Fetched>();
  const auto age = std::chrono::steady_clock::now() - entry->at;
  if (entry->ready && age < (entry->done ? std::chrono::seconds(10) : std::chrono::seconds(1))) {
    return entry->response;
  }
  if (!entry->pending) {
    entry->pending = true;
    asio::co_spawn(executor, Fetch(entry, job.id(), place, *address, options), asio::detached);
  }
  if (entry->ready) return entry->response;  // the last copy meanwhile
  HttpResponse wait;
  wait.body = "<!doctype html><meta http-equiv=\"refresh\" content=\"1\"><title>log</title><p>Fetching the log of " +
              worker::AttemptText(place) + " from worker " + HtmlEscape(place.node()) + "…</p>\n";
  return wait;
}

}  // namespace mr::master

// The master's status server (docs/status-page.md): Start() calls StartHttp
// when master.http_address is set; HttpServer then calls ServeHttp on the
// master's thread for every authorized GET, so the pages read the master's
// state directly. The job pages are in job_pages.cc.
#include <algorithm>
#include <cctype>
#include <map>
#include <random>

#include <spdlog/spdlog.h>

#include "common/auth.h"
#include "common/metrics.h"
#include "master/html.h"
#include "master/job_pages.h"
#include "master/log_pages.h"
#include "master/master_internal.h"

namespace mr::master {
namespace {

HttpResponse Html(std::string body) { return {200, "text/html; charset=utf-8", std::move(body)}; }

HttpResponse NotFound(const std::string& what) {
  return {404, "text/plain; charset=utf-8", "not found: " + what + "\n"};
}

// "/job/12" → 12 with *suffix "", "/job/12/timeline.svg" → 12 with *suffix
// "/timeline.svg" (also "/kill"); -1 for any other path.
int64_t JobIdOf(const std::string& path, std::string* suffix) {
  const std::string prefix = "/job/";
  if (path.rfind(prefix, 0) != 0) return -1;
  std::string rest = path.substr(prefix.size());
  suffix->clear();
  for (const char* s : {"/timeline.svg", "/kill"}) {
    if (rest.ends_with(s) && rest.size() > std::string_view(s).size()) {
      *suffix = s;
      rest.resize(rest.size() - suffix->size());
    }
  }
  if (rest.empty() || rest.size() > 18 || !std::all_of(rest.begin(), rest.end(), ::isdigit)) return -1;
  return std::stoll(rest);
}

// 32 hex digits from the system's random source.
std::string RandomToken() {
  std::random_device rd;
  std::string out;
  char buf[9];
  for (int i = 0; i < 4; ++i) {
    std::snprintf(buf, sizeof buf, "%08x", rd());
    out += buf;
  }
  return out;
}

HttpResponse Forbidden(const std::string& why) { return {403, "text/plain; charset=utf-8", why + "\n"}; }

std::string Cell(const std::string& text, bool number = false) {
  return std::string(number ? "<td class=\"n\">" : "<td>") + text + "</td>";
}

}  // namespace

Status Master::StartHttp() {
  jobs_->set_metrics(&metrics_);
  CountRpcs(*server_, metrics_.registry());
  if (config_.master.http_address.port == 0) return Status::OK();
  HttpServerOptions options;
  options.secret = config_.ResolvedSecret();
  options.require_secret = config_.master.http_require_secret;
  options.allow_post = true;  // the job page's kill button (KillFromPage)
  kill_token_ = RandomToken();
  http_ = std::make_unique<HttpServer>(io_.get_executor(), options, "master http",
                                       [this](const HttpRequest& req) { return ServeHttp(req); });
  MR_RETURN_IF_ERROR(http_->Listen(config_.master.http_address));
  http_->Start();
  spdlog::info("status pages on http://{}:{}/", config_.master.http_address.host, http_->port());
  return Status::OK();
}

uint16_t Master::http_port() const { return http_ ? http_->port() : 0; }

HttpResponse Master::ServeHttp(const HttpRequest& req) {
  std::string suffix;
  const int64_t id = JobIdOf(req.path, &suffix);
  if (req.method == "POST") {
    if (id < 0 || suffix != "/kill") return {405, "text/plain; charset=utf-8", "only /job/ID/kill takes a POST\n"};
    return KillFromPage(id, req);
  }
  if (req.path == "/") return Html(ClusterPage());
  if (req.path == "/dfs") return DfsPage(req);
  if (req.path == "/metrics") return {200, kMetricsContentType, MetricsText()};
  if (req.path == "/jobs") {
    pb::JobListReply jobs;
    if (Status s = jobs_->List(&jobs); !s.ok()) return {500, "text/plain", s.ToString() + "\n"};
    return Html(JobsPage(jobs, config_.cluster.name));
  }
  if (int64_t log_job = -1; IsLogPath(req.path, &log_job)) {
    pb::JobRecord job;
    if (Status s = jobs_->Show(log_job, /*summary=*/false, &job); !s.ok()) return NotFound("job " + std::to_string(log_job));
    LiveAddresses live;
    for (const auto& [worker_id, w] : workers_) {
      if (w->live) live[worker_id] = w->info.address();
    }
    return TaskLogPage(job, req, live, RpcOptions::FromConfig(config_, "master"), io_.get_executor());
  }
  if (id < 0 || suffix == "/kill") return NotFound(req.path);
  pb::JobRecord job;
  if (Status s = jobs_->Show(id, /*summary=*/false, &job); !s.ok()) return NotFound("job " + std::to_string(id));
  if (suffix == "/timeline.svg") return {200, "image/svg+xml", TimelineSvg(job)};
  return Html(JobPage(job, config_.cluster.name, kill_token_));
}

// The HttpServer checked the credentials (the secret off loopback). What
// is left is a request another site's page makes the browser send: refused
// when its Origin is not this server or Sec-Fetch-Site says cross-site, and
// without the page's token (which another site cannot read). Then the kill
// is `mrctl job kill`'s, and the browser is sent back to the job's page.
HttpResponse Master::KillFromPage(int64_t id, const HttpRequest& req) {
  if (!req.origin.empty() && req.origin != "http://" + req.host) {
    spdlog::warn("status page: kill of job {} refused: Origin {} is not {}", id, req.origin, req.host);
    return Forbidden("cross-origin request refused (Origin " + req.origin + ")");
  }
  if (!req.fetch_site.empty() && req.fetch_site != "same-origin" && req.fetch_site != "none") {
    spdlog::warn("status page: kill of job {} refused: Sec-Fetch-Site {}", id, req.fetch_site);
    return Forbidden("cross-origin request refused (Sec-Fetch-Site " + req.fetch_site + ")");
  }
  const auto token = req.form.find("token");
  if (token == req.form.end() || !ConstantTimeEquals(token->second, kill_token_)) {
    spdlog::warn("status page: kill of job {} refused: missing or wrong token", id);
    return Forbidden("missing or wrong token: use the kill button of the job's page");
  }
  if (Status s = jobs_->Kill(id); !s.ok()) {
    return {s.IsNotFound() ? 404 : 409, "text/plain; charset=utf-8", s.ToString() + "\n"};
  }
  spdlog::info("job {} killed from the status page", id);
  HttpResponse res{303, "text/plain; charset=utf-8", "job " + std::to_string(id) + " killed\n"};
  res.location = "/job/" + std::to_string(id);
  return res;
}

// "/": workers by datacenter with slots, heartbeat age and disk; the DFS
// and job totals.
std::string Master::ClusterPage() {
  pb::ClusterStatusReply st;
  ClusterStatus(&st);
  std::map<std::string, std::vector<const pb::WorkerStatus*>> by_dc;
  for (const pb::WorkerStatus& w : st.workers()) by_dc[w.worker().datacenter()].push_back(&w);
  std::string out = PageHead("Cluster " + config_.cluster.name, config_.cluster.name,
                             jobs_->active_jobs() > 0 ? kRefreshSeconds : 0);
  out += "<p>policy <b>" + HtmlEscape(jobs_->scheduler().name()) + "</b>, placement " +
         HtmlEscape(st.placement()) + ", " + std::to_string(st.files()) + " files, " +
         std::to_string(st.blocks()) + " blocks, <span id=\"under\">" +
         std::to_string(st.under_replicated_blocks()) + "</span> under-replicated, " +
         std::to_string(jobs_->active_jobs()) + " jobs running</p>\n";
  for (const auto& [dc, workers] : by_dc) {
    out += "<h2>Datacenter " + HtmlEscape(dc) + "</h2>\n<table class=\"workers\"><tr><th>worker</th>"
           "<th>address</th><th>rack</th><th>state</th><th>map slots</th><th>reduce slots</th>"
           "<th>heartbeat</th><th>blocks</th><th>used</th><th>free</th><th>disk</th></tr>\n";
    for (const pb::WorkerStatus* w : workers) {
      const pb::WorkerInfo& i = w->worker();
      int maps = 0, reduces = 0;
      jobs_->SlotsInUse(i.id(), &maps, &reduces);
      std::string state = w->live() ? "live" : "dead";
      if (!w->admin_state().empty()) state += ", " + w->admin_state();
      out += "<tr>" + Cell(HtmlEscape(i.id())) + Cell(HtmlEscape(i.address())) +
             Cell(HtmlEscape(i.rack())) + Cell(state) +
             Cell(std::to_string(maps) + "/" + std::to_string(i.map_slots()), true) +
             Cell(std::to_string(reduces) + "/" + std::to_string(i.reduce_slots()), true) +
             Cell(w->last_heartbeat_ms_ago() < 0 ? "never" : FormatMs(w->last_heartbeat_ms_ago()) + " ago", true) +
             Cell(std::to_string(w->blocks()), true) + Cell(FormatBytes(w->used_bytes()), true) +
             Cell(w->free_bytes() < 0 ? "?" : FormatBytes(w->free_bytes()), true) +
             Cell(w->disk_problem().empty() ? "ok" : "<span class=\"bad\">" + HtmlEscape(w->disk_problem()) + "</span>") +
             "</tr>\n";
    }
    out += "</table>\n";
  }
  return out + PageTail();
}

// "/dfs?path=/x": a directory's entries (links), or a file's blocks with
// their replicas; and the under-replicated blocks.
HttpResponse Master::DfsPage(const HttpRequest& req) {
  auto q = req.query.find("path");
  auto normalized = dfs::NormalizePath(q == req.query.end() || q->second.empty() ? "/" : q->second);
  if (!normalized.ok()) return {400, "text/plain; charset=utf-8", normalized.status().message() + "\n"};
  const std::string path = *normalized;
  auto inode = namespace_->Lookup(path);
  if (!inode.ok()) return NotFound("no such path: " + path);
  std::string out = PageHead("DFS " + path, config_.cluster.name);
  if (path != "/") {
    const std::string parent = path.substr(0, std::max<size_t>(path.rfind('/'), 1));
    out += "<p><a href=\"/dfs?path=" + UrlEncode(parent) + "\">↑ " + HtmlEscape(parent) + "</a></p>\n";
  }
  if (inode->kind() == pb::INode::DIR) {
    auto entries = namespace_->List(path);
    if (!entries.ok()) return {500, "text/plain", entries.status().ToString() + "\n"};
    out += "<table id=\"listing\"><tr><th>name</th><th>size</th><th>replication</th><th>blocks</th>"
           "<th>type</th><th>modified</th></tr>\n";
    for (const auto& [name, e] : *entries) {
      const std::string child = (path == "/" ? "" : path) + "/" + name;
      const bool dir = e.kind() == pb::INode::DIR;
      out += "<tr>" + Cell("<a href=\"/dfs?path=" + UrlEncode(child) + "\">" + HtmlEscape(name) + (dir ? "/" : "") + "</a>") +
             Cell(dir ? "" : FormatBytes(e.length()), true) + Cell(dir ? "" : std::to_string(e.replication()), true) +
             Cell(dir ? "" : std::to_string(e.blocks_size()), true) + Cell(HtmlEscape(e.input_type())) +
             Cell(FormatTime(e.mtime_ms())) + "</tr>\n";
    }
    out += "</table>\n";
  } else {
    out += "<p>" + FormatBytes(inode->length()) + ", replication " + std::to_string(inode->replication()) +
           ", type " + HtmlEscape(inode->input_type()) + "</p>\n<table id=\"blocks\"><tr><th>block</th>"
           "<th>bytes</th><th>replicas</th></tr>\n";
    for (const auto& b : inode->blocks()) {
      auto it = blocks_.find(b.id());
      std::string replicas;
      if (it != blocks_.end()) {
        for (const auto& n : it->second.replicas) replicas += HtmlEscape(n) + " ";
        for (const auto& n : Corrupt(it->first, it->second)) replicas += "<span class=\"bad\">" + HtmlEscape(n) + " (corrupt)</span> ";
      }
      out += "<tr>" + Cell(std::to_string(b.id()), true) + Cell(FormatBytes(b.bytes()), true) + Cell(replicas) + "</tr>\n";
    }
    out += "</table>\n";
  }
  // The under-replicated blocks (as cluster status counts them), at most 100.
  std::string under;
  int shown = 0;
  ForEachUnderReplicated([&](uint64_t id, const BlockState& b) {
    under += "<li>block " + std::to_string(id) + ": " + std::to_string(InService(b)) + " of " +
             std::to_string(b.replication) + "</li>";
    return ++shown < 100;
  });
  out += "<h2>Under-replicated blocks</h2>\n" + (under.empty() ? "<p>none</p>" : "<ul>" + under + "</ul>") + "\n";
  return Html(out + PageTail());
}

// One worker's mr_worker_up and DFS space gauges (metrics.h).
void Master::SetDfsGauges(const WorkerState& w, const prometheus::Labels& labels) {
  metrics_.worker_up().Add(labels).Set(w.live ? 1 : 0);
  metrics_.dfs_used().Add(labels).Set(static_cast<double>(w.used_bytes));
  const int64_t cap = w.info.capacity_bytes();
  if (cap <= 0 && w.free_bytes < 0) return;  // no heartbeat yet: nothing known
  const int64_t capacity = cap > 0 ? cap : w.used_bytes + w.free_bytes;
  int64_t left = std::max<int64_t>(0, capacity - w.used_bytes);
  if (w.free_bytes >= 0) left = std::min(left, w.free_bytes);
  metrics_.dfs_capacity().Add(labels).Set(static_cast<double>(capacity));
  metrics_.dfs_free().Add(labels).Set(static_cast<double>(left));
}

// Sets the gauges from the master's state, then renders every metric.
std::string Master::MetricsText() {
  const auto now = Now();
  std::map<std::string, int> states;
  int map_used = 0, map_total = 0, reduce_used = 0, reduce_total = 0;
  for (const auto& id : worker_order_) {
    const WorkerState& w = *workers_.at(id);
    const std::string state = !w.admin_state.empty() ? w.admin_state : (w.live ? "live" : "dead");
    ++states[state];
    const prometheus::Labels labels{{"worker", id}, {"datacenter", w.info.datacenter()}};
    if (w.last_heartbeat.time_since_epoch().count() != 0) {
      metrics_.heartbeat_age().Add(labels).Set(std::chrono::duration<double>(now - w.last_heartbeat).count());
    }
    if (w.free_bytes >= 0) metrics_.disk_free().Add(labels).Set(static_cast<double>(w.free_bytes));
    SetDfsGauges(w, labels);
    if (!w.live) continue;
    int maps = 0, reduces = 0;
    jobs_->SlotsInUse(id, &maps, &reduces);
    map_used += maps, reduce_used += reduces;
    map_total += w.info.map_slots(), reduce_total += w.info.reduce_slots();
  }
  for (const char* s : {"live", "dead", "decommissioning", "decommissioned"}) {
    metrics_.workers().Add({{"state", s}}).Set(states[s]);
  }
  metrics_.slots().Add({{"kind", "map"}, {"use", "used"}}).Set(map_used);
  metrics_.slots().Add({{"kind", "map"}, {"use", "total"}}).Set(map_total);
  metrics_.slots().Add({{"kind", "reduce"}, {"use", "used"}}).Set(reduce_used);
  metrics_.slots().Add({{"kind", "reduce"}, {"use", "total"}}).Set(reduce_total);
  const BlockCounts blocks = CountBlocks();
  metrics_.files().Set(static_cast<double>(namespace_->file_count()));
  metrics_.NamespaceWrites(namespace_->commits(), namespace_->syncs());
  metrics_.blocks().Set(static_cast<double>(blocks.complete));
  metrics_.under_replicated().Set(static_cast<double>(blocks.under_replicated));
  metrics_.jobs_running().Set(static_cast<double>(jobs_->active_jobs()));
  return mr::MetricsText(metrics_.registry());
}

}  // namespace mr::master

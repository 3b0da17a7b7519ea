// Job pages (job_pages.h): /jobs, /job/ID and its timeline SVG.
#include "master/job_pages.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <vector>

#include "common/http_server.h"
#include "master/html.h"
#include "common/job_figures.h"
#include "common/job_why.h"
#include "common/job_name.h"
#include "master/log_pages.h"

namespace mr::master {
namespace {

std::string Percent(double rate) {
  char buf[16];
  std::snprintf(buf, sizeof buf, "%.0f%%", rate * 100);
  return buf;
}

std::string Fixed(double v, const char* format = "%.3f") {
  char buf[32];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}

// "1.25" seconds from submission, or "–" when not recorded.
std::string Since(int64_t ms, int64_t submit_ms) {
  if (ms <= 0 || submit_ms <= 0) return "–";
  return Fixed(static_cast<double>(ms - submit_ms) / 1000.0, "%.2f");
}

// "setup=1 read=30 map=12 sort=4": the phases in the order they happen
// (docs/jobs.md, "Task timestamps"), then any other name in name order.
std::string Phases(const google::protobuf::Map<std::string, int64_t>& phases) {
  static const char* kOrder[] = {"setup", "read", "map", "sort", "fetch", "reduce", "write"};
  std::map<std::string, int64_t> rest(phases.begin(), phases.end());
  std::string out;
  const auto add = [&out](const std::string& name, int64_t ms) {
    if (!out.empty()) out += " ";
    out += HtmlEscape(name) + "=" + std::to_string(ms);
  };
  for (const char* name : kOrder) {
    auto it = rest.find(name);
    if (it == rest.end()) continue;
    add(it->first, it->second);
    rest.erase(it);
  }
  for (const auto& [name, ms] : rest) add(name, ms);
  return out;
}

int64_t Total(const pb::Traffic& t) { return t.local() + t.same_dc() + t.other_dc(); }

std::string LogLink(int64_t job, bool is_map, int32_t index, int32_t attempt) {
  return "<a href=\"" + TaskLogLink(job, is_map, index, attempt) + "\">log</a>";
}

// The running attempts: progress, rate (progress per second since the
// launch), start, how long since the last report; backups marked.
std::string RunningTable(const pb::JobRecord& j) {
  std::string out = "<h2>Running attempts (" + std::to_string(j.running_attempts_size()) +
                    ")</h2>\n<table id=\"running\"><tr><th>kind</th><th>#</th><th>attempt</th>"
                    "<th>node</th><th>progress</th><th>rate</th><th>start s</th><th>log</th></tr>\n";
  for (const pb::AttemptRecord& a : j.running_attempts()) {
    out += "<tr class=\"attempt\"><td>" + std::string(a.is_map() ? "map" : "reduce") + "</td><td class=\"n\">" +
           std::to_string(a.index()) + "</td><td class=\"n\">" + std::to_string(a.attempt()) +
           (a.speculative() ? " (backup)" : "") + "</td><td>" + HtmlEscape(a.node()) +
           "</td><td class=\"n\">" + Percent(a.progress()) + "</td><td class=\"n\">" +
           Fixed(a.progress_rate() * 100, "%.1f") + "%/s</td><td class=\"n\">" +
           Since(a.start_ms(), j.submit_ms()) + "</td><td>" +
           LogLink(j.id(), a.is_map(), a.index(), a.attempt()) + "</td></tr>\n";
  }
  return out + "</table>\n";
}

// Every failed, killed or lost attempt the record keeps, with its error.
std::string EndedTable(const pb::JobRecord& j) {
  std::string out = "<h2>Failed and killed attempts (" +
                    std::to_string(j.ended_attempts_size() + j.ended_attempts_dropped()) + ")</h2>\n";
  if (j.ended_attempts_dropped() > 0) {
    out += "<p>the first " + std::to_string(j.ended_attempts_dropped()) + " are not listed</p>\n";
  }
  out += "<table id=\"ended\"><tr><th>kind</th><th>#</th><th>attempt</th><th>node</th><th>state</th>"
         "<th>progress</th><th>start s</th><th>end s</th><th>error</th><th>log</th></tr>\n";
  for (const pb::AttemptRecord& a : j.ended_attempts()) {
    out += "<tr class=\"attempt\"><td>" + std::string(a.is_map() ? "map" : "reduce") + "</td><td class=\"n\">" +
           std::to_string(a.index()) + "</td><td class=\"n\">" + std::to_string(a.attempt()) +
           (a.speculative() ? " (backup)" : "") + "</td><td>" + HtmlEscape(a.node()) + "</td><td>" +
           HtmlEscape(a.state()) + "</td><td class=\"n\">" + Percent(a.progress()) +
           "</td><td class=\"n\">" + Since(a.start_ms(), j.submit_ms()) + "</td><td class=\"n\">" +
           Since(a.end_ms(), j.submit_ms()) + "</td><td class=\"bad\">" + HtmlEscape(a.error()) +
           "</td><td>" + LogLink(j.id(), a.is_map(), a.index(), a.attempt()) + "</td></tr>\n";
  }
  return out + "</table>\n";
}

// Why the job took as long as it did (job_why.h), once it ended.
std::string WhySection(const pb::JobRecord& j) {
  if (j.state() == "running") return "";
  const WhyReport why = ExplainJob(j);
  if (why.critical_path.empty()) return "";
  std::string out = "<h2>Why it took this long</h2>\n<dl id=\"why\">";
  const auto add = [&out](const char* title, const std::vector<std::string>& lines) {
    if (lines.empty()) return;
    out += std::string("<dt>") + title + "</dt>";
    for (const std::string& line : lines) out += "<dd>" + HtmlEscape(line) + "</dd>";
  };
  add("critical path", why.critical_path);
  add("time lost", why.time_lost);
  add("slowest", why.slowest);
  return out + "</dl>\n";
}

// The button that kills a running job: a same-origin POST with the token.
std::string KillForm(const pb::JobRecord& j, std::string_view token) {
  if (j.state() != "running" || token.empty()) return "";
  return "<form class=\"kill\" method=\"post\" action=\"/job/" + std::to_string(j.id()) +
         "/kill\"><input type=\"hidden\" name=\"token\" value=\"" + HtmlEscape(token) +
         "\"><button type=\"submit\">Kill job " + std::to_string(j.id()) + "</button></form>\n";
}

std::string JobRow(const pb::JobRecord& j) {
  const JobFigures f = Figures(j);
  const std::string id = std::to_string(j.id());
  std::string row = "<tr><td><a href=\"/job/" + id + "\">" + id + "</a></td><td>" +
                    HtmlEscape(ShownJobName(j.spec())) + "</td><td>" + HtmlEscape(j.state()) + "</td><td>" +
                    HtmlEscape(j.scheduler()) + "</td><td class=\"n\">" +
                    std::to_string(j.maps_done()) + "/" + std::to_string(j.maps_total()) +
                    "</td><td class=\"n\">" + std::to_string(j.reduces_done()) + "/" +
                    std::to_string(j.reduces_total()) + "</td><td class=\"n\">" +
                    Percent(f.vps_locality_rate) + "</td><td class=\"n\">" +
                    Percent(f.cen_locality_rate) + "</td><td class=\"n\">" +
                    Percent(f.off_cen_rate) + "</td><td class=\"n\">" +
                    FormatBytes(f.inter_dc_bytes) + "</td><td class=\"n\">" + Fixed(f.fp_raw) +
                    "</td><td class=\"n\">" + Fixed(f.fp_wire) + "</td><td>" +
                    FormatTime(j.submit_ms()) + "</td><td class=\"n\">";
  row += j.end_ms() > 0 ? FormatMs(f.jtt_ms) : "running";
  return row + "</td></tr>\n";
}

constexpr const char* kJobHeader =
    "<tr><th>id</th><th>job</th><th>state</th><th>policy</th><th>maps</th><th>reduces</th>"
    "<th>node-local</th><th>dc-local</th><th>off-dc</th><th>INT</th><th>FP raw</th>"
    "<th>FP wire</th><th>submitted</th><th>JTT</th></tr>\n";

std::string TaskRows(const pb::JobRecord& j) {
  std::string out;
  for (const pb::MapTaskRecord& t : j.maps()) {
    out += "<tr class=\"task\"><td>map</td><td class=\"n\">" + std::to_string(t.index()) +
           "</td><td>" + HtmlEscape(t.node()) + "</td><td>" + HtmlEscape(t.locality()) +
           "</td><td class=\"n\">" + FormatBytes(t.input_bytes()) + "</td><td class=\"n\">" +
           FormatBytes(t.output_bytes()) + "</td><td class=\"n\">" + Since(t.start_ms(), j.submit_ms()) +
           "</td><td class=\"n\">" + Since(t.end_ms(), j.submit_ms()) + "</td><td class=\"n\">" +
           FormatMs(t.run_ms()) + "</td><td class=\"n\">" + std::to_string(t.attempts()) + (t.speculative() ? " (backup won)" : "") +
           "</td><td>" + Phases(t.phase_ms()) + "</td><td>" + LogLink(j.id(), true, t.index(), AcceptedAttempt(t)) +
           "</td></tr>\n";
  }
  for (const pb::ReduceTaskRecord& t : j.reduces()) {
    out += "<tr class=\"task\"><td>reduce</td><td class=\"n\">" + std::to_string(t.index()) +
           "</td><td>" + HtmlEscape(t.node()) + "</td><td>–</td><td class=\"n\">" +
           FormatBytes(Total(t.shuffle())) + "</td><td class=\"n\">" +
           FormatBytes(t.output_bytes()) + "</td><td class=\"n\">" + Since(t.start_ms(), j.submit_ms()) +
           "</td><td class=\"n\">" + Since(t.end_ms(), j.submit_ms()) + "</td><td class=\"n\">" +
           FormatMs(t.run_ms()) + "</td><td class=\"n\">" + std::to_string(t.attempts()) + (t.speculative() ? " (backup won)" : "") +
           "</td><td>" + Phases(t.phase_ms()) + "</td><td>" + LogLink(j.id(), false, t.index(), AcceptedAttempt(t)) +
           "</td></tr>\n";
  }
  return out;
}

struct Bar {
  std::string node;
  bool is_map;
  int index;
  int64_t start, end;  // ms since submission
};

}  // namespace

std::string JobsPage(const pb::JobListReply& jobs, std::string_view cluster_name) {
  std::vector<const pb::JobRecord*> running, done;
  for (const pb::JobRecord& j : jobs.jobs()) (j.state() == "running" ? running : done).push_back(&j);
  const auto newest_first = [](const pb::JobRecord* a, const pb::JobRecord* b) { return a->id() > b->id(); };
  std::sort(running.begin(), running.end(), newest_first);
  std::sort(done.begin(), done.end(), newest_first);
  std::string out = PageHead("Jobs", cluster_name, running.empty() ? 0 : kRefreshSeconds);
  out += "<h2>Running (" + std::to_string(running.size()) + ")</h2>\n<table id=\"running\">" + kJobHeader;
  for (const pb::JobRecord* j : running) out += JobRow(*j);
  out += "</table>\n<h2>History (" + std::to_string(done.size()) + ")</h2>\n<table id=\"history\">" + kJobHeader;
  for (const pb::JobRecord* j : done) out += JobRow(*j);
  return out + "</table>\n" + PageTail();
}

std::string JobPage(const pb::JobRecord& j, std::string_view cluster_name, std::string_view kill_token) {
  const JobFigures f = Figures(j);
  const bool running = j.state() == "running";
  std::string out = PageHead("Job " + std::to_string(j.id()) + ": " + ShownJobName(j.spec()), cluster_name,
                             running ? kRefreshSeconds : 0);
  std::string params, inputs, policy_params;
  for (const auto& [k, v] : std::map<std::string, std::string>(j.spec().params().begin(), j.spec().params().end())) {
    params += HtmlEscape(k) + "=" + HtmlEscape(v) + " ";
  }
  for (const auto& in : j.spec().inputs()) inputs += HtmlEscape(in) + " ";
  for (const auto& [k, v] : std::map<std::string, std::string>(j.scheduler_params().begin(), j.scheduler_params().end())) {
    policy_params += HtmlEscape(k) + "=" + HtmlEscape(v) + " ";
  }
  out += "<table id=\"summary\">"
         "<tr><th>state</th><td>" + HtmlEscape(j.state()) +
         (j.error().empty() ? "" : " <span class=\"bad\">" + HtmlEscape(j.error()) + "</span>") +
         "</td></tr><tr><th>policy</th><td>" + HtmlEscape(j.scheduler()) + " " + policy_params +
         "</td></tr><tr><th>params</th><td>" + params + "</td></tr><tr><th>input</th><td>" + inputs +
         " (" + FormatBytes(j.input_bytes()) + ", " + HtmlEscape(j.input_type()) +
         ")</td></tr><tr><th>output</th><td>" + HtmlEscape(j.spec().output()) +
         "</td></tr><tr><th>submitted</th><td>" + FormatTime(j.submit_ms()) +
         "</td></tr><tr><th>JTT</th><td>" + (j.end_ms() > 0 ? FormatMs(f.jtt_ms) : "running") +
         "</td></tr><tr><th>locality</th><td>node " + Percent(f.vps_locality_rate) + ", datacenter " +
         Percent(f.cen_locality_rate) + ", off-datacenter " + Percent(f.off_cen_rate) +
         "; reduce-data locality " + Percent(f.reduce_data_locality_rate) +
         "</td></tr><tr><th>INT</th><td>" + FormatBytes(f.inter_dc_bytes) +
         "</td></tr><tr><th>FP</th><td>raw " + Fixed(f.fp_raw) + ", wire " + Fixed(f.fp_wire) +
         "</td></tr><tr><th>speculation</th><td>" + HtmlEscape(j.speculator().empty() ? "none" : j.speculator()) +
         ": " + std::to_string(j.backups_launched()) + " backup(s), " + std::to_string(j.backups_won()) +
         " won, " + FormatMs(j.speculation_wasted_ms()) + " wasted"
         "</td></tr></table>\n" + KillForm(j, kill_token) + (running ? RunningTable(j) : "") + EndedTable(j) + WhySection(j) +
         "<h2>Timeline</h2>\n" + TimelineSvg(j) +
         "\n<p><a href=\"/job/" + std::to_string(j.id()) + "/timeline.svg\">timeline.svg</a></p>\n"
         "<h2>Tasks</h2>\n<table id=\"tasks\"><tr><th>kind</th><th>#</th><th>node</th>"
         "<th>locality</th><th>in</th><th>out</th><th>start s</th><th>end s</th><th>run</th>"
         "<th>attempts</th><th>phases (ms)</th><th>log</th></tr>\n" +
         TaskRows(j) + "</table>\n";
  out += CountersSection(j);
  return out + AttemptLogLinks(j) + PageTail();
}

std::string TimelineSvg(const pb::JobRecord& j) {
  std::vector<Bar> bars;
  const int64_t t0 = j.submit_ms();
  for (const auto& t : j.maps()) {
    if (t.start_ms() > 0 && t.end_ms() >= t.start_ms()) bars.push_back({t.node(), true, t.index(), t.start_ms() - t0, t.end_ms() - t0});
  }
  for (const auto& t : j.reduces()) {
    if (t.start_ms() > 0 && t.end_ms() >= t.start_ms()) bars.push_back({t.node(), false, t.index(), t.start_ms() - t0, t.end_ms() - t0});
  }
  std::map<std::string, std::vector<const Bar*>> rows;  // worker → its tasks
  int64_t span = 1;
  for (const Bar& b : bars) {
    rows[b.node].push_back(&b);
    span = std::max(span, b.end);
  }
  // Each worker's tasks in lanes, so overlapping tasks (several slots) do
  // not hide each other: a task goes to the first lane free at its start.
  constexpr int kLeft = 90, kWidth = 800, kLane = 14, kGap = 8, kTop = 20;
  std::string body;
  int y = kTop;
  for (auto& [node, list] : rows) {
    std::sort(list.begin(), list.end(), [](const Bar* a, const Bar* b) { return a->start < b->start; });
    std::vector<int64_t> lane_end;
    std::string rects;
    for (const Bar* b : list) {
      size_t lane = 0;
      while (lane < lane_end.size() && lane_end[lane] > b->start) ++lane;
      if (lane == lane_end.size()) lane_end.push_back(0);
      lane_end[lane] = b->end;
      const double x = kLeft + static_cast<double>(std::max<int64_t>(b->start, 0)) * kWidth / static_cast<double>(span);
      const double w = std::max(1.0, static_cast<double>(b->end - b->start) * kWidth / static_cast<double>(span));
      const std::string what = std::string(b->is_map ? "map " : "reduce ") + std::to_string(b->index) + " on " + node + ": " +
                               Fixed(static_cast<double>(b->start) / 1000, "%.2f") + "–" +
                               Fixed(static_cast<double>(b->end) / 1000, "%.2f") + " s";
      rects += "<rect class=\"task\" x=\"" + Fixed(x, "%.1f") + "\" y=\"" + std::to_string(y + static_cast<int>(lane) * kLane) +
               "\" width=\"" + Fixed(w, "%.1f") + "\" height=\"" + std::to_string(kLane - 2) + "\" fill=\"" +
               (b->is_map ? "#4a7ebb" : "#e8892b") + "\"><title>" + HtmlEscape(what) + "</title></rect>\n";
    }
    const int height = static_cast<int>(lane_end.size()) * kLane;
    body += "<text x=\"4\" y=\"" + std::to_string(y + height / 2 + 4) + "\">" + HtmlEscape(node) + "</text>\n" + rects;
    body += "<line x1=\"" + std::to_string(kLeft) + "\" x2=\"" + std::to_string(kLeft + kWidth) + "\" y1=\"" +
            std::to_string(y + height + kGap / 2) + "\" y2=\"" + std::to_string(y + height + kGap / 2) +
            "\" stroke=\"#ddd\"/>\n";
    y += height + kGap;
  }
  std::string axis;
  for (int i = 0; i <= 4; ++i) {
    const int x = kLeft + kWidth * i / 4;
    axis += "<text x=\"" + std::to_string(x) + "\" y=\"12\" text-anchor=\"middle\">" +
            Fixed(static_cast<double>(span) * i / 4 / 1000, "%.2f") + " s</text>\n";
  }
  const int height = y + 4;
  return "<svg xmlns=\"http://www.w3.org/2000/svg\" id=\"timeline\" width=\"" + std::to_string(kLeft + kWidth + 30) +
         "\" height=\"" + std::to_string(height) + "\" font-family=\"sans-serif\" font-size=\"11\">\n" + axis + body + "</svg>\n";
}

}  // namespace mr::master

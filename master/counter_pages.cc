// The counters section of /job/ID (docs/status-page.md): the job's sums
// and each finished task's status message and counters, as `mrctl job
// show --tasks` prints them. Everything from the user (group and counter
// names, status messages) is escaped.
#include "common/http_server.h"
#include "common/job_counters.h"
#include "master/job_pages.h"

namespace mr::master {
namespace {

std::string TaskRow(const char* kind, int index, const std::string& status, const CounterList& counters) {
  return std::string("<tr class=\"task-counters\"><td>") + kind + "</td><td class=\"n\">" +
         std::to_string(index) + "</td><td>" + HtmlEscape(status) + "</td><td>" + HtmlEscape(NonZeroCounters(counters)) +
         "</td></tr>\n";
}

}  // namespace

std::string CountersSection(const pb::JobRecord& j) {
  std::string out = "<h2>Counters</h2>\n<p>Sums over the successful attempts.</p>\n"
                    "<table id=\"counters\"><tr><th>group</th><th>counter</th><th>value</th></tr>\n";
  for (const pb::Counter& c : j.counters()) {
    out += "<tr><td>" + HtmlEscape(c.group()) + "</td><td>" + HtmlEscape(c.name()) +
           "</td><td class=\"n\">" + std::to_string(c.value()) + "</td></tr>\n";
  }
  out += "</table>\n<table id=\"task-counters\"><tr><th>kind</th><th>#</th><th>status</th>"
         "<th>counters (not 0)</th></tr>\n";
  for (const pb::MapTaskRecord& m : j.maps()) out += TaskRow("map", m.index(), m.status(), m.counters());
  for (const pb::ReduceTaskRecord& t : j.reduces()) out += TaskRow("reduce", t.index(), t.status(), t.counters());
  return out + "</table>\n";
}

}  // namespace mr::master

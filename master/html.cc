// The page frame and number formats of the status pages (html.h).
#include "master/html.h"

#include <cstdio>
#include <ctime>

#include "common/http_server.h"

namespace mr::master {

std::string PageHead(std::string_view title, std::string_view cluster_name, int refresh_s) {
  std::string t = HtmlEscape(title);
  const std::string refresh =
      refresh_s > 0 ? "<meta http-equiv=\"refresh\" content=\"" + std::to_string(refresh_s) + "\">" : "";
  return "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">" + refresh + "<title>" + t + " · " +
         HtmlEscape(cluster_name) +
         "</title>\n<style>body{font:14px sans-serif;margin:1em 2em}table{border-collapse:collapse}"
         "td,th{border:1px solid #ccc;padding:2px 6px;text-align:left}th{background:#eee}"
         "td.n{text-align:right}nav a{margin-right:1em}.bad{color:#b00}form.kill{margin:1em 0}"
         "</style></head>\n<body>"
         "<nav><a href=\"/\">cluster</a><a href=\"/dfs\">dfs</a><a href=\"/jobs\">jobs</a>"
         "<a href=\"/metrics\">metrics</a></nav>\n<h1>" +
         t + "</h1>\n";
}

std::string PageTail() { return "</body></html>\n"; }

std::string FormatBytes(int64_t bytes) {
  static const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) v /= 1024, ++u;
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, kUnits[u]);
  return buf;
}

std::string FormatMs(int64_t ms) {
  if (ms < 0) return "–";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f s", static_cast<double>(ms) / 1000.0);
  return buf;
}

std::string FormatTime(int64_t epoch_ms) {
  if (epoch_ms <= 0) return "–";
  const std::time_t t = static_cast<std::time_t>(epoch_ms / 1000);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

}  // namespace mr::master

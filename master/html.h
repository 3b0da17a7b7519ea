// Small helpers shared by the master's status pages (status_http.cc,
// job_pages.cc): the page frame and number formats. Everything a user
// controls goes through HtmlEscape (common/http_server.h) before it reaches
// a page.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace mr::master {

// "<!doctype html>…<body><nav>…</nav><h1>title</h1>" (title escaped here).
// refresh_s > 0: the browser reloads the page every refresh_s seconds (a
// page showing something that runs).
std::string PageHead(std::string_view title, std::string_view cluster_name, int refresh_s = 0);
// "</body></html>".
std::string PageTail();
// 1536 → "1.5 KiB".
std::string FormatBytes(int64_t bytes);
// 1234 → "1.23 s"; negative → "–".
std::string FormatMs(int64_t ms);
// ms since the epoch → "2026-11-27 13:05:09 UTC"; 0 → "–".
std::string FormatTime(int64_t epoch_ms);

}  // namespace mr::master

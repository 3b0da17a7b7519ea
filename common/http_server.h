// HttpServer: a small HTTP/1.1 server (Boost.Beast) for the status pages and
// /metrics of mr-master and mr-worker (docs/status-page.md). It runs on the
// daemon's own io_context; the daemon hands it one handler that turns a GET
// (or, where allowed, a form POST) into a response.
//
// What it guards against (the daemon keeps serving through all of it):
//   - credentials: off a loopback address (or with require_secret) every
//     request must carry `Authorization: Bearer <cluster secret>`, compared
//     in constant time; without it: 401 and one line. A wrong secret is 401
//     on loopback too.
//   - size: a request line plus headers over max_header_bytes gets 431, a
//     body over max_body_bytes 413, a malformed request 400; the connection
//     is closed after each of them.
//   - time and count: each request must arrive and be answered within
//     request_timeout_ms; at most max_connections are open (more are closed
//     at accept).
//
// Threading: the handler runs on the executor given to the constructor (the
// master's one thread), so it may read the daemon's state without locks.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>

#include <boost/asio.hpp>

#include "common/config.h"
#include "common/status.h"

namespace mr {

struct HttpRequest {
  std::string method;                         // "GET", "HEAD", "POST"
  std::string path;                           // "/dfs", percent-decoded
  std::map<std::string, std::string> query;   // ?path=/x → {"path", "/x"}, decoded
  // POST: the fields of an application/x-www-form-urlencoded body, decoded.
  std::map<std::string, std::string> form;
  // Headers a handler checks before acting on a POST (a request from
  // another site's page): "" when absent.
  std::string host;                           // Host
  std::string origin;                         // Origin
  std::string fetch_site;                     // Sec-Fetch-Site
};

struct HttpResponse {
  HttpResponse() = default;
  HttpResponse(int status_code, std::string type, std::string text, std::string see_other = {})
      : status(status_code), content_type(std::move(type)), body(std::move(text)), location(std::move(see_other)) {}

  int status = 200;
  std::string content_type = "text/html; charset=utf-8";
  std::string body;
  std::string location;                       // set: a Location header (a 303's target)
};

struct HttpServerOptions {
  // The cluster secret; requests must carry it off loopback. Default: none.
  std::string secret;
  // Require the secret on loopback too. Default: false.
  bool require_secret = false;
  // Request line + headers. Default: 16 KiB.
  uint32_t max_header_bytes = 16 << 10;
  // Request body (GETs have none). Default: 16 KiB.
  uint64_t max_body_bytes = 16 << 10;
  // POST requests reach the handler (they pass the same credential check
  // as a GET); without it they get 405. Default: false.
  bool allow_post = false;
  // Open connections. Default: 32.
  int max_connections = 32;
  // Deadline for reading one request and writing its response. Default: 10 s.
  int request_timeout_ms = 10000;
};

class HttpServer {
 public:
  using Handler = std::function<HttpResponse(const HttpRequest&)>;

  HttpServer(boost::asio::any_io_executor executor, HttpServerOptions options, std::string name,
             Handler handler);
  ~HttpServer();

  // Binds and listens (port 0 = any free port; see port()).
  Status Listen(const HostPort& address);
  uint16_t port() const { return port_; }
  // Starts accepting on the executor. Stop() closes the acceptor; open
  // connections end at their next read or deadline.
  void Start();
  void Stop();

  // Requests answered with 400, 401, 413 or 431 (for tests and /metrics).
  int64_t rejected_requests() const { return rejected_; }

 private:
  boost::asio::awaitable<void> AcceptLoop();
  boost::asio::awaitable<void> Serve(boost::asio::ip::tcp::socket socket);

  boost::asio::any_io_executor executor_;
  HttpServerOptions options_;
  std::string name_;
  Handler handler_;
  boost::asio::ip::tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  bool loopback_ = true;
  std::atomic<int> open_{0};
  std::atomic<int64_t> rejected_{0};
};

// Escapes &, <, >, " and ' for HTML text and attribute values.
std::string HtmlEscape(std::string_view text);
// Percent-encodes a query value ("/a b" → "%2Fa%20b").
std::string UrlEncode(std::string_view text);

}  // namespace mr

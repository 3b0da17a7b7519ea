// HttpServer (http_server.h): one coroutine accepts, one per connection reads
// a request with Beast's parser (its header and body limits give 431 and
// 413), checks the credentials, calls the daemon's handler and writes the
// response, under one deadline per request (beast::tcp_stream's timer).
#include "common/http_server.h"

#include <cctype>

#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <spdlog/spdlog.h>

#include "common/auth.h"
#include "common/awaitable.h"
#include "common/xml_escape.h"

namespace mr {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace http = beast::http;
using asio::ip::tcp;

namespace {

constexpr int kMaxRequestsPerConnection = 100;

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

// Percent-decodes `text` ('+' is a space in a query); false when malformed.
bool UrlDecode(std::string_view text, bool query, std::string* out) {
  out->clear();
  for (size_t i = 0; i < text.size(); ++i) {
    const char c = text[i];
    if (c == '%') {
      if (i + 2 >= text.size()) return false;
      const int hi = HexValue(text[i + 1]), lo = HexValue(text[i + 2]);
      if (hi < 0 || lo < 0) return false;
      out->push_back(static_cast<char>(hi * 16 + lo));
      i += 2;
    } else if (c == '+' && query) {
      out->push_back(' ');
    } else {
      out->push_back(c);
    }
  }
  return true;
}

// "a=1&b=2" into `fields`; false when malformed.
bool ParseFields(std::string_view rest, std::map<std::string, std::string>* fields) {
  while (!rest.empty()) {
    const size_t amp = rest.find('&');
    const std::string_view pair = rest.substr(0, amp);
    const size_t eq = pair.find('=');
    std::string key, value;
    if (!UrlDecode(pair.substr(0, eq), true, &key)) return false;
    if (eq != std::string_view::npos && !UrlDecode(pair.substr(eq + 1), true, &value)) return false;
    if (!key.empty()) (*fields)[key] = value;
    if (amp == std::string_view::npos) break;
    rest = rest.substr(amp + 1);
  }
  return true;
}

// Splits "/path?a=1&b=2" into `req`; false when malformed.
bool ParseTarget(std::string_view target, HttpRequest* req) {
  if (target.empty() || target[0] != '/') return false;
  const size_t q = target.find('?');
  if (!UrlDecode(target.substr(0, q), false, &req->path)) return false;
  return q == std::string_view::npos || ParseFields(target.substr(q + 1), &req->query);
}

// A header's value, or "" (`name`: an http::field or a string).
template <typename Name>
std::string Header(const http::request<http::string_body>& req, Name name) {
  const auto it = req.find(name);
  return it == req.end() ? std::string() : std::string(it->value().data(), it->value().size());
}

http::response<http::string_body> Plain(http::status status, unsigned version, std::string line) {
  http::response<http::string_body> res{status, version};
  res.set(http::field::content_type, "text/plain; charset=utf-8");
  res.body() = std::move(line) + "\n";
  res.keep_alive(false);
  res.prepare_payload();
  return res;
}

// The answer to one well-formed request: 401 without the right secret
// where one is needed (or with a wrong one anywhere), 405 for methods other
// than GET and HEAD (and POST where allowed), 400 for a bad target or form,
// else the handler's response.
// *close: end the connection after it; *rejected: a 400 or 401.
http::response<http::string_body> Answer(const http::request<http::string_body>& req,
                                         const HttpServerOptions& options, bool loopback,
                                         const HttpServer::Handler& handler, bool* close,
                                         bool* rejected) {
  const auto auth = req.find(http::field::authorization);
  const bool has_auth = auth != req.end();
  const std::string_view kBearer = "Bearer ";
  const std::string_view given =
      has_auth ? std::string_view(auth->value().data(), auth->value().size()) : std::string_view();
  const bool auth_ok = has_auth && given.substr(0, kBearer.size()) == kBearer &&
                       !options.secret.empty() &&
                       ConstantTimeEquals(given.substr(std::min(given.size(), kBearer.size())),
                                          options.secret);
  *close = true;
  if ((options.require_secret || !loopback || has_auth) && !auth_ok) {
    *rejected = true;
    auto res = Plain(http::status::unauthorized, req.version(),
                     has_auth ? "wrong credentials: send Authorization: Bearer <cluster secret>"
                              : "credentials required: send Authorization: Bearer <cluster secret>");
    res.set(http::field::www_authenticate, "Bearer realm=\"mr\"");
    return res;
  }
  const bool post = req.method() == http::verb::post && options.allow_post;
  if (req.method() != http::verb::get && req.method() != http::verb::head && !post) {
    return Plain(http::status::method_not_allowed, req.version(),
                 options.allow_post ? "only GET, HEAD and POST are served" : "only GET and HEAD are served");
  }
  HttpRequest request;
  request.method.assign(req.method_string().data(), req.method_string().size());
  if (!ParseTarget(std::string_view(req.target().data(), req.target().size()), &request) ||
      (post && !ParseFields(req.body(), &request.form))) {
    *rejected = true;
    return Plain(http::status::bad_request, req.version(), "malformed request target or form");
  }
  request.host = Header(req, http::field::host);
  request.origin = Header(req, http::field::origin);
  request.fetch_site = Header(req, std::string_view("Sec-Fetch-Site"));
  HttpResponse out;
  try {
    out = handler(request);
  } catch (const std::exception& e) {
    out = {500, "text/plain; charset=utf-8", std::string("internal error: ") + e.what() + "\n"};
  }
  http::response<http::string_body> res{static_cast<http::status>(out.status), req.version()};
  res.set(http::field::content_type, out.content_type);
  res.set(http::field::cache_control, "no-store");
  if (!out.location.empty()) res.set(http::field::location, out.location);
  res.body() = std::move(out.body);
  res.keep_alive(req.keep_alive());
  *close = !req.keep_alive();
  res.prepare_payload();
  if (req.method() == http::verb::head) res.body().clear();
  return res;
}

}  // namespace

std::string HtmlEscape(std::string_view text) { return XmlEscape(text); }

std::string UrlEncode(std::string_view text) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out.push_back(static_cast<char>(c));
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

HttpServer::HttpServer(asio::any_io_executor executor, HttpServerOptions options, std::string name,
                       Handler handler)
    : executor_(executor),
      options_(std::move(options)),
      name_(std::move(name)),
      handler_(std::move(handler)),
      acceptor_(executor) {}

HttpServer::~HttpServer() {
  boost::system::error_code ec;
  acceptor_.close(ec);
}

Status HttpServer::Listen(const HostPort& address) {
  boost::system::error_code ec;
  const auto ip = asio::ip::make_address(address.host == "localhost" ? "127.0.0.1" : address.host, ec);
  if (ec) return Status::InvalidArgument("http_address " + address.ToString() + ": not an IP address");
  const tcp::endpoint endpoint(ip, address.port);
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) {
    return Status::IOError("cannot listen for HTTP on " + address.ToString() + ": " + ec.message());
  }
  port_ = acceptor_.local_endpoint().port();
  loopback_ = ip.is_loopback();
  return Status::OK();
}

void HttpServer::Start() { asio::co_spawn(executor_, AcceptLoop(), asio::detached); }

// Closes the acceptor on the executor: mr-worker runs it on several threads,
// and the acceptor may be waiting in AcceptLoop on another one.
void HttpServer::Stop() {
  asio::post(executor_, [this] {
    boost::system::error_code ec;
    acceptor_.close(ec);
  });
}

asio::awaitable<void> HttpServer::AcceptLoop() {
  while (acceptor_.is_open()) {
    auto [ec, socket] = co_await acceptor_.async_accept(kTuple);
    if (ec == asio::error::operation_aborted || !acceptor_.is_open()) co_return;
    if (ec) {
      spdlog::warn("{}: accept failed: {}", name_, ec.message());
      asio::steady_timer pause(executor_, std::chrono::milliseconds(100));
      co_await pause.async_wait(kTuple);
      continue;
    }
    if (open_.load() >= options_.max_connections) {
      boost::system::error_code ignored;
      socket.close(ignored);  // over the cap: closed at once
      continue;
    }
    asio::co_spawn(executor_, Serve(std::move(socket)), asio::detached);
  }
}

asio::awaitable<void> HttpServer::Serve(tcp::socket socket) {
  ++open_;
  beast::tcp_stream stream(std::move(socket));
  beast::flat_buffer buffer;
  for (int n = 0; n < kMaxRequestsPerConnection; ++n) {
    stream.expires_after(std::chrono::milliseconds(options_.request_timeout_ms));
    http::request_parser<http::string_body> parser;
    parser.header_limit(options_.max_header_bytes);
    parser.body_limit(options_.max_body_bytes);
    auto [ec, bytes] = co_await http::async_read(stream, buffer, parser, kTuple);
    http::response<http::string_body> res;
    bool close = false;
    if (ec == http::error::header_limit) {
      res = Plain(http::status::request_header_fields_too_large, 11, "request headers too large");
    } else if (ec == http::error::body_limit) {
      res = Plain(http::status::payload_too_large, 11, "request body too large");
    } else if (ec == http::error::end_of_stream || ec == beast::error::timeout ||
               ec == asio::error::eof || ec == asio::error::connection_reset ||
               ec == asio::error::operation_aborted) {
      break;  // the peer went away or was too slow: nothing to answer
    } else if (ec) {
      res = Plain(http::status::bad_request, 11, "malformed request: " + ec.message());
    }
    if (ec) {
      ++rejected_;
      close = true;
    } else {
      bool rejected = false;
      res = Answer(parser.get(), options_, loopback_, handler_, &close, &rejected);
      if (rejected) ++rejected_;
    }
    auto [wec, written] = co_await http::async_write(stream, res, kTuple);
    if (wec) break;
    if (close) {
      // A lingering close: stop sending, then read and drop what the peer
      // still sends (the rest of a huge request) for up to a second, so
      // closing with unread bytes does not reset the connection before the
      // peer read our answer.
      boost::system::error_code ignored;
      stream.socket().shutdown(tcp::socket::shutdown_send, ignored);
      stream.expires_after(std::chrono::seconds(1));
      char sink[16384];
      for (size_t drained = 0; drained < (1u << 20);) {
        auto [rec, n] = co_await stream.async_read_some(asio::buffer(sink), kTuple);
        if (rec) break;
        drained += n;
      }
      break;
    }
  }
  boost::system::error_code ignored;
  stream.socket().shutdown(tcp::socket::shutdown_both, ignored);
  stream.socket().close(ignored);
  --open_;
}

}  // namespace mr

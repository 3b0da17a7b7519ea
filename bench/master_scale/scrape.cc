#include "bench/master_scale/scrape.h"

#include <cmath>
#include <limits>
#include <sstream>

#include <boost/asio/ip/tcp.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>

namespace mr::bench {
namespace beast = boost::beast;
namespace http = beast::http;

awaitable<Result<std::string>> HttpGet(const HostPort& at, const std::string& target) {
  using asio::as_tuple;
  using asio::use_awaitable;
  const std::string where = "GET http://" + at.ToString() + target;
  boost::system::error_code ec;
  const auto address = asio::ip::make_address(at.host, ec);
  if (ec) co_return Status::InvalidArgument(where + ": not an IP address: " + at.host);
  beast::tcp_stream stream(co_await asio::this_coro::executor);
  stream.expires_after(std::chrono::seconds(30));
  std::tie(ec) = co_await stream.async_connect(asio::ip::tcp::endpoint(address, at.port),
                                               as_tuple(use_awaitable));
  if (ec) co_return Status::Unavailable(where + ": " + ec.message());
  http::request<http::empty_body> req{http::verb::get, target, 11};
  req.set(http::field::host, at.host);
  size_t n;
  std::tie(ec, n) = co_await http::async_write(stream, req, as_tuple(use_awaitable));
  if (ec) co_return Status::Unavailable(where + ": " + ec.message());
  beast::flat_buffer buffer;
  http::response_parser<http::string_body> parser;
  parser.body_limit(256 << 20);
  std::tie(ec, n) = co_await http::async_read(stream, buffer, parser, as_tuple(use_awaitable));
  if (ec) co_return Status::Unavailable(where + ": " + ec.message());
  if (parser.get().result() != http::status::ok) {
    co_return Status::Unavailable(where + ": HTTP " + std::to_string(parser.get().result_int()));
  }
  co_return std::move(parser.get().body());
}

ScrapedHistogram ScrapedHistogram::Since(const ScrapedHistogram& before) const {
  ScrapedHistogram d = *this;
  for (size_t i = 0; i < d.buckets.size() && i < before.buckets.size(); ++i) {
    d.buckets[i].second -= before.buckets[i].second;
  }
  d.sum -= before.sum;
  d.count -= before.count;
  return d;
}

double ScrapedHistogram::QuantileAtMost(double q) const {
  if (count <= 0) return 0;
  for (const auto& [bound, cumulative] : buckets) {
    if (cumulative >= q * count) return bound;
  }
  return std::numeric_limits<double>::infinity();
}

double ScrapedHistogram::ShareAbove(double bound) const {
  if (count <= 0) return 0;
  for (const auto& [b, cumulative] : buckets) {
    if (b >= bound) return 1 - cumulative / count;
  }
  return 0;
}

ScrapedHistogram ParseHistogram(const std::string& text, const std::string& name,
                                const std::string& label) {
  ScrapedHistogram h;
  std::istringstream lines(text);
  std::string line;
  auto value = [](const std::string& l) { return std::stod(l.substr(l.rfind(' ') + 1)); };
  auto ours = [&](const std::string& l, const std::string& series) {
    return l.rfind(series, 0) == 0 && (label.empty() || l.find(label) != std::string::npos);
  };
  while (std::getline(lines, line)) {
    if (ours(line, name + "_bucket{")) {
      const size_t le = line.find("le=\"");
      if (le == std::string::npos) continue;
      const std::string bound = line.substr(le + 4, line.find('"', le + 4) - le - 4);
      h.buckets.emplace_back(bound == "+Inf" ? std::numeric_limits<double>::infinity() : std::stod(bound),
                             value(line));
    } else if (ours(line, name + "_sum")) {
      h.sum = value(line);
    } else if (ours(line, name + "_count")) {
      h.count = value(line);
    }
  }
  return h;
}

}  // namespace mr::bench

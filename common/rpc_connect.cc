// Connect(): resolve, TCP connect and the client handshake, each under its
// deadline (common/rpc.h). Split from rpc.cc.
#include <chrono>

#include <boost/asio/experimental/awaitable_operators.hpp>

#include "common/awaitable.h"
#include "common/peer_registry.h"
#include "common/rpc.h"
#include "common/tls.h"

namespace mr {
namespace {

using namespace asio::experimental::awaitable_operators;

// The TCP connection to `address` (resolved to `endpoints`), under
// `timeout`; `stall_ms` > 0: a transfer's connection, whose SYN unanswered
// for that long is a peer gone (a cut link), not a slow one.
awaitable<Result<tcp::socket>> ConnectSocket(const HostPort& address,
                                             const tcp::resolver::results_type& endpoints,
                                             const RpcOptions& options,
                                             std::chrono::milliseconds timeout, int stall_ms) {
  auto executor = co_await asio::this_coro::executor;
  const bool stall = stall_ms > 0 && std::chrono::milliseconds(stall_ms) < timeout;
  asio::steady_timer timer(executor, stall ? std::chrono::milliseconds(stall_ms) : timeout);
  auto timed_out = [&] {
    return stall ? Status::Unavailable("no answer from " + address.ToString() + " within " +
                                       std::to_string(stall_ms) + " ms (cluster.transfer_stall_ms)")
                 : Status::TimedOut("connecting to " + address.ToString() + " timed out");
  };
  tcp::socket socket(executor);
  // Under tls = "inter-dc" a node's connections leave from its own address,
  // so that the server can tell its datacenter (tls.h).
  const std::string source = options.tls && options.tls->mode() == TlsMode::kInterDc
                                 ? options.tls->source_host() : "";
  boost::system::error_code ec;
  if (!source.empty() && IsLoopbackHost(source) == IsLoopbackHost(address.host)) {
    const tcp::endpoint target = endpoints.begin()->endpoint();
    socket.open(target.protocol(), ec);
    if (!ec) socket.bind({asio::ip::make_address(source, ec), 0}, ec);
    if (ec) co_return Status::Unavailable("cannot bind to " + source + ": " + ec.message());
    auto connected = co_await (socket.async_connect(target, kTuple) || timer.async_wait(kTuple));
    if (connected.index() == 1) co_return timed_out();
    ec = std::get<0>(std::get<0>(connected));
  } else {
    auto connected =
        co_await (asio::async_connect(socket, endpoints, kTuple) || timer.async_wait(kTuple));
    if (connected.index() == 1) co_return timed_out();
    ec = std::get<0>(std::get<0>(connected));
  }
  if (ec) {
    co_return Status::Unavailable("cannot connect to " + address.ToString() + ": " + ec.message());
  }
  co_return std::move(socket);
}

}  // namespace

awaitable<Result<std::unique_ptr<Connection>>> Connect(const HostPort& address,
                                                       const RpcOptions& options, int stall_ms) {
  // A peer the master declared dead is not dialled until it registers again.
  const std::string peer = address.ToString();
  if (std::string why = Peers().DeadReason(peer); !why.empty()) {
    co_return Status::Unavailable(why + "; not connecting to " + peer);
  }
  auto executor = co_await asio::this_coro::executor;
  const auto timeout = std::chrono::milliseconds(options.timeout_ms);
  tcp::resolver resolver(executor);
  asio::steady_timer timer(executor, timeout);
  auto resolved = co_await (
      resolver.async_resolve(address.host, std::to_string(address.port), kTuple) ||
      timer.async_wait(kTuple));
  if (resolved.index() == 1) co_return Status::TimedOut("resolving " + address.host + " timed out");
  auto [rec, endpoints] = std::get<0>(resolved);
  if (rec) co_return Status::Unavailable("cannot resolve " + address.host + ": " + rec.message());
  MR_CO_ASSIGN_OR_RETURN(tcp::socket socket,
                         co_await ConnectSocket(address, endpoints, options, timeout, stall_ms));
  auto conn = std::make_unique<Connection>(std::move(socket), options);
  conn->WatchPeer(peer);
  conn->set_stall_ms(stall_ms);
  Status s = co_await conn->AuthenticateAsClient(address);
  if (!s.ok()) co_return s;
  co_return conn;
}

}  // namespace mr

// RpcServer (rpc.h): accepts connections, authenticates them and
// dispatches their requests to handlers; and RunSync. Split from rpc.cc,
// which keeps Connection and Connect.
#include <algorithm>
#include <chrono>
#include <mutex>

#include <spdlog/spdlog.h>

#include "common/awaitable.h"
#include "common/rpc.h"

namespace mr {

RpcServer::RpcServer(asio::any_io_executor executor, RpcOptions options, std::string name)
    : executor_(executor), accept_strand_(asio::make_strand(executor)),
      options_(std::move(options)), name_(std::move(name)), acceptor_(executor),
      backoff_timer_(executor) {}

RpcServer::~RpcServer() = default;

void RpcServer::Handle(const std::string& method, Handler handler) {
  handlers_[method] = std::move(handler);
}

Status RpcServer::Listen(const HostPort& address) {
  boost::system::error_code ec;
  tcp::resolver resolver(executor_);
  // A host name (a VPS's own name in the cluster file) is resolved once, here.
  auto resolved = resolver.resolve(address.host, std::to_string(address.port),
                                   tcp::resolver::numeric_service, ec);
  if (ec || resolved.empty()) {
    return Status::InvalidArgument("cannot listen on '" + address.host + "': " +
                                   (ec ? ec.message() : "no address"));
  }
  tcp::endpoint endpoint = resolved.begin()->endpoint();
  acceptor_.open(endpoint.protocol(), ec);
  if (!ec) acceptor_.set_option(tcp::acceptor::reuse_address(true), ec);
  if (!ec) acceptor_.bind(endpoint, ec);
  if (!ec) acceptor_.listen(asio::socket_base::max_listen_connections, ec);
  if (ec) return Status::IOError("cannot listen on " + address.ToString() + ": " + ec.message());
  port_ = acceptor_.local_endpoint().port();
  return Status::OK();
}

void RpcServer::Start() {
  asio::co_spawn(accept_strand_, AcceptLoop(), asio::detached);
}

void RpcServer::Stop() {
  stopped_ = true;
  // On the accept loop's strand: with several threads the loop may be
  // running elsewhere, and the acceptor is not thread-safe either.
  asio::post(accept_strand_, [this] {
    boost::system::error_code ec;
    acceptor_.close(ec);
    backoff_timer_.cancel();
    std::lock_guard lock(mu_);
    for (auto& [raw, weak] : open_) {
      if (auto conn = weak.lock()) conn->Abort();  // each one's coroutine closes it
    }
  });
}

awaitable<void> RpcServer::AcceptLoop() {
  constexpr auto kMinBackoff = std::chrono::milliseconds(100);
  constexpr auto kMaxBackoff = std::chrono::milliseconds(1000);
  auto backoff = kMinBackoff;
  while (!stopped_) {
    auto [ec, socket] = co_await acceptor_.async_accept(kTuple);
    if (ec) {
      if (ec == asio::error::operation_aborted || stopped_) break;
      ++accept_errors_;
      if (const int64_t n = accept_log_.Tick(); n > 0) {
        spdlog::warn("{}: accept failed ({} failures since the last report): {}; retrying after "
                     "{} ms, up to {} ms apart",
                     name_, n, ec.message(), backoff.count(), kMaxBackoff.count());
      }
      // A peer that reset before accept() ends only its own connection;
      // anything else (EMFILE, ENFILE, ENOBUFS, ...) fails again at once, so
      // wait, or the loop spins. Established connections are served meanwhile.
      if (ec == asio::error::connection_aborted) continue;
      backoff_timer_.expires_after(backoff);
      co_await backoff_timer_.async_wait(kTuple);
      backoff = std::min(backoff * 2, kMaxBackoff);
      continue;
    }
    backoff = kMinBackoff;
    boost::system::error_code rec;
    const auto remote = socket.remote_endpoint(rec);
    if (rec) continue;  // already gone; the socket closes here
    const std::string address = remote.address().to_string();
    const std::string endpoint = address + ":" + std::to_string(remote.port());
    auto conn = std::make_shared<Connection>(std::move(socket), options_);
    const uint64_t ticket = AdmitUnauthenticated(conn, address, endpoint);
    {
      std::lock_guard lock(mu_);
      open_[conn.get()] = conn;
    }
    asio::co_spawn(executor_, Serve(conn, ticket), asio::detached);
  }
}

// The handshake budget (issue 28 item 7). A new connection is always
// admitted; when the budget is full, the oldest connection still in the
// handshake of the address holding the most is closed to make room (of the
// same address when that address is at its own cap). Flooders therefore
// churn among themselves, and a peer from an address with fewer
// connections in the handshake than the biggest holder (a client, a
// cluster member) is never the one closed. Authenticated connections are
// never counted.
uint64_t RpcServer::AdmitUnauthenticated(const std::shared_ptr<Connection>& conn,
                                         const std::string& address, const std::string& endpoint) {
  std::shared_ptr<Connection> evicted;
  std::string why;
  uint64_t ticket;
  {
    std::lock_guard lock(mu_);
    if (unauthenticated_by_address_[address] >= options_.max_unauthenticated_per_address) {
      why = "max_unauthenticated_per_address (" +
            std::to_string(options_.max_unauthenticated_per_address) + ") connections from " +
            address + " are in the handshake";
      evicted = EvictOldestLocked(address);
    } else if (unauthenticated_ >= options_.max_unauthenticated_connections) {
      why = "max_unauthenticated_connections (" +
            std::to_string(options_.max_unauthenticated_connections) +
            ") connections are in the handshake";
      evicted = EvictOldestLocked("");
    }
    ticket = ++last_ticket_;
    handshaking_.emplace(ticket, Handshaking{conn, address});
    ++unauthenticated_by_address_[address];
    ++unauthenticated_;
  }
  if (evicted == nullptr) return ticket;
  ++refused_;
  if (const int64_t n = refused_log_.Tick(); n > 0) {
    spdlog::warn("{}: {}: closed the oldest of them, from {}, to admit {} ({} closed since the "
                 "last report)",
                 name_, why, evicted->remote_endpoint(), endpoint, n);
  }
  // Shut down, not closed: the victim's coroutine may be running on another
  // of the io_context's threads (mr-worker runs several) and Asio's sockets
  // are not thread-safe. Closing it from here (816d123, reverted) raced that
  // coroutine's own close of the same socket (the thread sanitizer shows
  // both in Asio's close), and under a flood the worker's accept then failed
  // with 'Bad file descriptor' and it died. shutdown(2) is safe from any
  // thread; the victim's coroutine sees the peer gone and closes its own
  // socket, as when a stranger hangs up. (The alternative, each connection
  // on a strand of its own with the close posted there, would put every
  // handler on a strand for the sake of this one call.)
  evicted->Abort();
  return ticket;
}

std::shared_ptr<Connection> RpcServer::EvictOldestLocked(const std::string& address) {
  // Without an address: the biggest holders' oldest, so that ties (every
  // address holding one) still spare the newest connections.
  int most = 0;
  if (address.empty()) {
    for (const auto& [from, n] : unauthenticated_by_address_) most = std::max(most, n);
  }
  for (auto it = handshaking_.begin(); it != handshaking_.end();) {
    const std::string& from = it->second.address;
    const bool victim = address.empty() ? unauthenticated_by_address_[from] == most : from == address;
    if (!victim) {
      ++it;
      continue;
    }
    std::shared_ptr<Connection> conn = it->second.conn.lock();
    auto next = std::next(it);
    ForgetLocked(it);
    if (conn != nullptr) return conn;
    it = next;
  }
  return nullptr;
}

void RpcServer::ForgetLocked(std::map<uint64_t, Handshaking>::iterator it) {
  auto by = unauthenticated_by_address_.find(it->second.address);
  if (by != unauthenticated_by_address_.end() && --by->second <= 0) {
    unauthenticated_by_address_.erase(by);
  }
  --unauthenticated_;
  handshaking_.erase(it);
}

void RpcServer::ReleaseUnauthenticated(uint64_t ticket) {
  std::lock_guard lock(mu_);
  // Not found: it was evicted, and already forgotten then.
  if (auto it = handshaking_.find(ticket); it != handshaking_.end()) ForgetLocked(it);
}

awaitable<void> RpcServer::Serve(std::shared_ptr<Connection> conn, uint64_t ticket) {
  Status auth = co_await conn->AuthenticateAsServer();
  ReleaseUnauthenticated(ticket);
  if (!auth.ok() && !conn->tls_refusal().empty()) {
    ++rejected_;
    LogThrottle* throttle;
    {
      std::lock_guard lock(mu_);
      auto& slot = tls_refused_logs_[conn->tls_refusal()];
      if (!slot) slot = std::make_unique<LogThrottle>(std::chrono::seconds(10));
      throttle = slot.get();
    }
    if (const int64_t n = throttle->Tick(); n > 0) {
      spdlog::warn("{}: refused connection from {} ({}): {} ({} refused for this reason since the "
                   "last report)",
                   name_, conn->remote_endpoint(), conn->peer_name().empty() ? "?" : conn->peer_name(),
                   auth.message(), n);
    }
  } else if (!auth.ok()) {
    ++rejected_;
    if (const int64_t n = rejected_log_.Tick(); n > 0) {
      spdlog::warn("{}: rejected connection from {}: {} ({} rejected since the last report)",
                   name_, conn->remote_endpoint(), auth.ToString(), n);
    }
  }
  pb::Frame request;
  std::string data;
  while (auth.ok() && conn->is_open()) {
    Status s = co_await conn->Receive(&request, &data);
    if (!s.ok()) {
      if (s.IsProtocolError()) {
        spdlog::warn("{}: closing connection from {} ({}): {}", name_, conn->remote_endpoint(),
                     conn->peer_name(), s.ToString());
      } else {
        spdlog::debug("{}: connection from {} ended: {}", name_, conn->remote_endpoint(),
                      s.ToString());
      }
      break;
    }
    auto it = handlers_.find(request.method());
    if (it == handlers_.end()) {
      spdlog::warn("{}: unknown method '{}' from {}", name_, request.method(),
                   conn->remote_endpoint());
      // A named Status, not a temporary: see docs/development.md on GCC 12.
      const Status unknown = Status::InvalidArgument("unknown method '" + request.method() + "'");
      if (observer_) observer_("unknown", unknown, 0.0);
      co_await conn->SendError(unknown);
      continue;
    }
    ServerCall call{*conn, request, data};
    const auto arrived = std::chrono::steady_clock::now();
    Status result;
    try {
      result = co_await it->second(call);
    } catch (const std::exception& e) {
      result = Status::Internal(std::string("handler ") + request.method() + " threw: " + e.what());
      spdlog::error("{}: {}", name_, result.ToString());
    }
    if (observer_) {
      observer_(request.method(), result,
                std::chrono::duration<double>(std::chrono::steady_clock::now() - arrived).count());
    }
    if (!call.replied) {
      // (Not a ?: expression: GCC 12 miscompiles co_await inside one.)
      Status sent;
      if (result.ok()) {
        sent = co_await conn->SendReply(pb::Empty());
      } else {
        sent = co_await conn->SendError(result);
      }
      if (!sent.ok()) break;
    } else if (!result.ok()) {
      // The handler failed part-way through a stream: the peer cannot tell
      // where the stream stopped, so end the connection.
      spdlog::debug("{}: {} to {} failed mid-stream: {}", name_, request.method(),
                    conn->remote_endpoint(), result.ToString());
      break;
    }
    // A large request's body is not kept for the next one (kKeptHeaderBytes).
    if (request.body().capacity() > kKeptHeaderBytes) request = pb::Frame();
  }
  conn->Close();
  std::lock_guard lock(mu_);
  open_.erase(conn.get());
}

Status RunSync(std::function<awaitable<Status>()> fn) {
  asio::io_context io;
  Status result = Status::Internal("operation did not complete");
  asio::co_spawn(io, fn(), [&](std::exception_ptr e, Status s) {
    if (!e) {
      result = std::move(s);
      return;
    }
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& ex) {
      result = Status::Internal(ex.what());
    }
  });
  io.run();
  return result;
}

}  // namespace mr

// RpcServer (rpc.h): accepts connections, authenticates them and
// dispatches their requests to handlers; and RunSync. Split from rpc.cc,
// which keeps Connection and Connect.
#include <chrono>
#include <mutex>

#include <spdlog/spdlog.h>

#include "common/awaitable.h"
#include "common/rpc.h"

namespace mr {

RpcServer::RpcServer(asio::any_io_executor executor, RpcOptions options, std::string name)
    : executor_(executor), options_(std::move(options)), name_(std::move(name)),
      acceptor_(executor), backoff_timer_(executor) {}

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
  asio::co_spawn(executor_, AcceptLoop(), asio::detached);
}

void RpcServer::Stop() {
  stopped_ = true;
  asio::post(executor_, [this] {
    boost::system::error_code ec;
    acceptor_.close(ec);
    backoff_timer_.cancel();
    std::lock_guard lock(mu_);
    for (auto& [raw, weak] : open_) {
      if (auto conn = weak.lock()) conn->Close();
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
    if (!AdmitUnauthenticated(address, endpoint)) continue;  // closes the socket
    auto conn = std::make_shared<Connection>(std::move(socket), options_);
    {
      std::lock_guard lock(mu_);
      open_[conn.get()] = conn;
    }
    asio::co_spawn(executor_, Serve(conn, address), asio::detached);
  }
}

bool RpcServer::AdmitUnauthenticated(const std::string& address, const std::string& endpoint) {
  std::string why;
  {
    std::lock_guard lock(mu_);
    int& from_address = unauthenticated_by_address_[address];
    if (unauthenticated_ >= options_.max_unauthenticated_connections) {
      why = std::to_string(unauthenticated_.load()) +
            " connections are in the handshake already (max_unauthenticated_connections)";
    } else if (from_address >= options_.max_unauthenticated_per_address) {
      why = std::to_string(from_address) + " connections from " + address +
            " are in the handshake already (max_unauthenticated_per_address)";
    } else {
      ++from_address;
      ++unauthenticated_;
      return true;
    }
    if (from_address == 0) unauthenticated_by_address_.erase(address);
  }
  ++refused_;
  if (const int64_t n = refused_log_.Tick(); n > 0) {
    spdlog::warn("{}: refused connection from {}: {} ({} refused since the last report)", name_,
                 endpoint, why, n);
  }
  return false;
}

void RpcServer::ReleaseUnauthenticated(const std::string& address) {
  std::lock_guard lock(mu_);
  auto it = unauthenticated_by_address_.find(address);
  if (it != unauthenticated_by_address_.end() && --it->second <= 0) {
    unauthenticated_by_address_.erase(it);
  }
  --unauthenticated_;
}

awaitable<void> RpcServer::Serve(std::shared_ptr<Connection> conn, std::string address) {
  Status auth = co_await conn->AuthenticateAsServer();
  ReleaseUnauthenticated(address);
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

#include "common/rpc.h"

#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <spdlog/spdlog.h>

#include "common/auth.h"
#include "common/frame.h"

namespace mr {
namespace {

using namespace asio::experimental::awaitable_operators;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

std::string EndpointString(const tcp::socket& socket) {
  boost::system::error_code ec;
  auto ep = socket.remote_endpoint(ec);
  if (ec) return "?";
  return ep.address().to_string() + ":" + std::to_string(ep.port());
}

}  // namespace

RpcOptions RpcOptions::FromConfig(const ClusterConfig& config, std::string peer_name) {
  RpcOptions o;
  o.timeout_ms = config.cluster.rpc_timeout_ms;
  o.max_frame_bytes = config.cluster.max_frame_bytes;
  o.secret = config.ResolvedSecret();
  o.peer_name = std::move(peer_name);
  return o;
}

// ---------------------------------------------------------------- Connection

Connection::Connection(tcp::socket socket, RpcOptions options)
    : socket_(std::move(socket)), options_(std::move(options)) {
  remote_endpoint_ = EndpointString(socket_);
  boost::system::error_code ec;
  socket_.set_option(tcp::no_delay(true), ec);
}

Connection::~Connection() { Close(); }

bool Connection::IsFresh() const {
  return socket_.is_open() &&
         std::chrono::steady_clock::now() - last_used_ <
             std::chrono::milliseconds(options_.timeout_ms / 2);
}

void Connection::Close() {
  boost::system::error_code ec;
  if (socket_.is_open()) {
    socket_.shutdown(tcp::socket::shutdown_both, ec);
    socket_.close(ec);
  }
}

// Races one socket operation (an awaitable of (error_code, bytes)) against
// the connection's deadline. A timeout or an error closes the connection:
// after a partial read or write the stream cannot be resumed.
template <typename Operation>
awaitable<Result<size_t>> Connection::WithDeadline(Operation operation, std::string_view what) {
  if (!socket_.is_open()) co_return Status::Unavailable("connection to " + remote_endpoint_ + " is closed");
  asio::steady_timer timer(socket_.get_executor(), std::chrono::milliseconds(options_.timeout_ms));
  auto result = co_await (std::move(operation) || timer.async_wait(kTuple));
  if (result.index() == 1) {
    Close();
    co_return Status::TimedOut(std::string(what) + " " + remote_endpoint_ + " timed out");
  }
  auto [ec, n] = std::get<0>(result);
  if (ec) {
    Close();
    if (ec == asio::error::eof && n == 0) {
      co_return Status::Unavailable("connection closed by " + remote_endpoint_);
    }
    co_return Status::Unavailable(std::string(what) + " " + remote_endpoint_ + ": " + ec.message());
  }
  last_used_ = std::chrono::steady_clock::now();
  co_return n;
}

template <typename Buffers>
awaitable<Status> Connection::WriteAll(const Buffers& buffers) {
  auto n = co_await WithDeadline(asio::async_write(socket_, buffers, kTuple), "write to");
  if (!n.ok()) co_return n.status();
  bytes_sent_ += static_cast<int64_t>(*n);
  co_return Status::OK();
}

template <typename Buffers>
awaitable<Status> Connection::ReadAll(const Buffers& buffers) {
  auto n = co_await WithDeadline(asio::async_read(socket_, buffers, kTuple), "read from");
  if (!n.ok()) co_return n.status();
  bytes_received_ += static_cast<int64_t>(*n);
  co_return Status::OK();
}

// Serializes prefix + header into scratch_.
Status Connection::EncodeHeader(const pb::Frame& header, size_t data_len) {
  scratch_.assign(kFramePrefixBytes, '\0');
  header.AppendToString(&scratch_);
  const size_t header_len = scratch_.size() - kFramePrefixBytes;
  if (static_cast<int64_t>(header_len + data_len) > options_.max_frame_bytes) {
    return Status::InvalidArgument("frame of " + std::to_string(header_len + data_len) +
                                   " bytes exceeds max_frame_bytes");
  }
  EncodeFramePrefix({static_cast<uint32_t>(header_len), static_cast<uint32_t>(data_len)},
                    scratch_.data());
  return Status::OK();
}

awaitable<Status> Connection::Send(const pb::Frame& header, std::span<const char> data) {
  MR_CO_RETURN_IF_ERROR(EncodeHeader(header, data.size()));
  std::array<asio::const_buffer, 2> buffers{asio::buffer(scratch_),
                                            asio::buffer(data.data(), data.size())};
  co_return co_await WriteAll(buffers);
}

awaitable<Status> Connection::Receive(pb::Frame* header, std::string* data) {
  char prefix_bytes[kFramePrefixBytes];
  MR_CO_RETURN_IF_ERROR(co_await ReadAll(asio::buffer(prefix_bytes)));
  auto prefix = DecodeFramePrefix(prefix_bytes, options_.max_frame_bytes);
  if (!prefix.ok()) {
    Close();
    co_return prefix.status().WithContext("from " + remote_endpoint_);
  }
  header_in_.resize(prefix->header_len);  // reused: no allocation per frame
  data->resize(prefix->data_len);
  std::array<asio::mutable_buffer, 2> buffers{asio::buffer(header_in_), asio::buffer(*data)};
  MR_CO_RETURN_IF_ERROR(co_await ReadAll(buffers));
  if (!header->ParseFromString(header_in_)) {
    Close();
    co_return Status::ProtocolError("malformed frame header from " + remote_endpoint_);
  }
  co_return Status::OK();
}

awaitable<Status> Connection::SendRequest(std::string_view method,
                                          const google::protobuf::MessageLite& body,
                                          std::span<const char> data) {
  pb::Frame frame;
  frame.set_method(std::string(method));
  body.SerializeToString(frame.mutable_body());
  co_return co_await Send(frame, data);
}

awaitable<Status> Connection::SendReply(const google::protobuf::MessageLite& body,
                                        std::span<const char> data) {
  pb::Frame frame;
  body.SerializeToString(frame.mutable_body());
  co_return co_await Send(frame, data);
}

awaitable<Status> Connection::SendError(const Status& status) {
  pb::Frame frame;
  frame.set_status_code(static_cast<int32_t>(status.code()));
  frame.set_status_message(status.message());
  co_return co_await Send(frame, {});
}

awaitable<Status> Connection::ReceiveReply(google::protobuf::MessageLite* body, std::string* data) {
  pb::Frame frame;
  std::string ignored;
  MR_CO_RETURN_IF_ERROR(co_await Receive(&frame, data ? data : &ignored));
  if (frame.status_code() != 0) {
    co_return Status(static_cast<Status::Code>(frame.status_code()), frame.status_message());
  }
  if (!body->ParseFromString(frame.body())) {
    Close();
    co_return Status::ProtocolError("malformed reply body from " + remote_endpoint_);
  }
  co_return Status::OK();
}

awaitable<Status> Connection::Call(std::string_view method,
                                   const google::protobuf::MessageLite& request,
                                   google::protobuf::MessageLite* reply) {
  MR_CO_RETURN_IF_ERROR(co_await SendRequest(method, request));
  co_return co_await ReceiveReply(reply);
}

awaitable<Status> Connection::AuthenticateAsClient() {
  pb::Hello hello;
  Status s = co_await ReceiveReply(&hello);
  if (!s.ok()) co_return s.WithContext("handshake with " + remote_endpoint_);
  if (hello.protocol_version() != kProtocolVersion || hello.server_nonce().size() != kNonceBytes) {
    Close();
    co_return Status::ProtocolError("unsupported handshake from " + remote_endpoint_);
  }
  pb::AuthProof proof;
  proof.set_client_nonce(RandomBytes(kNonceBytes));
  proof.set_client_mac(ClientMac(options_.secret, hello.server_nonce(), proof.client_nonce()));
  proof.set_peer_name(options_.peer_name);
  MR_CO_RETURN_IF_ERROR(co_await SendReply(proof));
  pb::AuthOk ok;
  s = co_await ReceiveReply(&ok);
  if (!s.ok()) {
    Close();
    co_return s.WithContext("handshake with " + remote_endpoint_);
  }
  if (!ConstantTimeEquals(ok.server_mac(),
                          ServerMac(options_.secret, proof.client_nonce(), hello.server_nonce()))) {
    Close();
    co_return Status::PermissionDenied("server " + remote_endpoint_ +
                                       " does not know the cluster secret");
  }
  co_return Status::OK();
}

awaitable<Status> Connection::AuthenticateAsServer() {
  pb::Hello hello;
  hello.set_protocol_version(kProtocolVersion);
  hello.set_server_nonce(RandomBytes(kNonceBytes));
  MR_CO_RETURN_IF_ERROR(co_await SendReply(hello));
  pb::AuthProof proof;
  MR_CO_RETURN_IF_ERROR(co_await ReceiveReply(&proof));
  peer_name_ = proof.peer_name().substr(0, 64);
  if (!ConstantTimeEquals(proof.client_mac(), ClientMac(options_.secret, hello.server_nonce(),
                                                        proof.client_nonce()))) {
    Status denied = Status::PermissionDenied("authentication failed: wrong cluster secret");
    co_await SendError(denied);
    Close();
    co_return denied;
  }
  pb::AuthOk ok;
  ok.set_server_mac(ServerMac(options_.secret, proof.client_nonce(), hello.server_nonce()));
  co_return co_await SendReply(ok);
}

awaitable<Result<std::unique_ptr<Connection>>> Connect(const HostPort& address,
                                                       const RpcOptions& options) {
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

  tcp::socket socket(executor);
  timer.expires_after(timeout);
  auto connected = co_await (asio::async_connect(socket, endpoints, kTuple) || timer.async_wait(kTuple));
  if (connected.index() == 1) {
    co_return Status::TimedOut("connecting to " + address.ToString() + " timed out");
  }
  if (auto ec = std::get<0>(std::get<0>(connected)); ec) {
    co_return Status::Unavailable("cannot connect to " + address.ToString() + ": " + ec.message());
  }
  auto conn = std::make_unique<Connection>(std::move(socket), options);
  Status s = co_await conn->AuthenticateAsClient();
  if (!s.ok()) co_return s;
  co_return conn;
}

// ----------------------------------------------------------------- RpcServer

RpcServer::RpcServer(asio::any_io_executor executor, RpcOptions options, std::string name)
    : executor_(executor), options_(std::move(options)), name_(std::move(name)),
      acceptor_(executor) {}

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
    std::lock_guard lock(mu_);
    for (auto& [raw, weak] : open_) {
      if (auto conn = weak.lock()) conn->Close();
    }
  });
}

awaitable<void> RpcServer::AcceptLoop() {
  while (!stopped_) {
    auto [ec, socket] = co_await acceptor_.async_accept(kTuple);
    if (ec) {
      if (ec == asio::error::operation_aborted || stopped_) break;
      spdlog::warn("{}: accept failed: {}", name_, ec.message());
      continue;
    }
    auto conn = std::make_shared<Connection>(std::move(socket), options_);
    {
      std::lock_guard lock(mu_);
      open_[conn.get()] = conn;
    }
    asio::co_spawn(executor_, Serve(conn), asio::detached);
  }
}

awaitable<void> RpcServer::Serve(std::shared_ptr<Connection> conn) {
  Status auth = co_await conn->AuthenticateAsServer();
  if (!auth.ok()) {
    ++rejected_;
    spdlog::warn("{}: rejected connection from {}: {}", name_, conn->remote_endpoint(),
                 auth.ToString());
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
      co_await conn->SendError(unknown);
      continue;
    }
    ServerCall call{*conn, request, data};
    Status result;
    try {
      result = co_await it->second(call);
    } catch (const std::exception& e) {
      result = Status::Internal(std::string("handler ") + request.method() + " threw: " + e.what());
      spdlog::error("{}: {}", name_, result.ToString());
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

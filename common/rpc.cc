#include "common/rpc.h"

#include <sys/sendfile.h>
#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <chrono>
#include <cstring>

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <spdlog/spdlog.h>

#include "common/auth.h"
#include "common/awaitable.h"
#include "common/frame.h"
#include "common/peer_registry.h"

namespace mr {
namespace {

using namespace asio::experimental::awaitable_operators;

std::string AddressString(const tcp::socket& socket) {
  boost::system::error_code ec;
  auto ep = socket.remote_endpoint(ec);
  return ec ? "?" : ep.address().to_string();
}

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
  o.max_reply_bytes = config.cluster.max_reply_bytes;
  o.secret = config.ResolvedSecret();
  o.peer_name = std::move(peer_name);
  o.handshake_timeout_ms = config.cluster.handshake_timeout_ms;
  o.max_unauthenticated_connections = config.cluster.max_unauthenticated_connections;
  o.max_unauthenticated_per_address = config.cluster.max_unauthenticated_per_address;
  o.tls = ProcessTls();
  o.transfer_stall_ms = config.cluster.transfer_stall_ms;
  return o;
}

// ---------------------------------------------------------------- Connection

Connection::Connection(tcp::socket socket, RpcOptions options)
    : socket_(std::move(socket)), options_(std::move(options)) {
  remote_endpoint_ = EndpointString(socket_);
  remote_address_ = AddressString(socket_);
  boost::system::error_code ec;
  socket_.set_option(tcp::no_delay(true), ec);
  // Synchronous reads and writes return would_block instead of waiting: the
  // fast paths of ReadAll and WriteAll use them (async operations are not
  // affected).
  socket_.non_blocking(true, ec);
}

Connection::~Connection() { Close(); }

bool Connection::IsFresh() const {
  return socket_.is_open() &&
         std::chrono::steady_clock::now() - last_used_ <
             std::chrono::milliseconds(options_.timeout_ms / 2);
}

void Connection::Close() {
  if (watched_) {  // before the descriptor closes: Peers() may shut it down until then
    watched_ = false;
    if (std::string why = Peers().Unwatch(this); !why.empty()) abandoned_ = std::move(why);
  }
  boost::system::error_code ec;
  // Under close_mu_: Abort() must never shut down a descriptor number that
  // closed here and may already belong to a newer connection.
  std::lock_guard lock(close_mu_);
  if (socket_.is_open()) {
    socket_.shutdown(tcp::socket::shutdown_both, ec);
    socket_.close(ec);
  }
}

void Connection::Abort() {
  std::lock_guard lock(close_mu_);
  if (socket_.is_open()) ::shutdown(socket_.native_handle(), SHUT_RDWR);
}

bool Connection::HasPendingInput() {
  if (!socket_.is_open()) return false;
  // Over TLS the socket may hold records that are not data (a TLS 1.3
  // session ticket, a key update): only bytes already decrypted count.
  if (tls_) return SSL_pending(tls_.get()) > 0;
  boost::system::error_code ec;
  return socket_.available(ec) > 0 && !ec;
}

void Connection::WatchPeer(const std::string& address) {
  peer_address_ = address;
  watched_ = true;
  Peers().Watch(this, address, socket_.native_handle());
}

Connection::Clock::time_point Connection::Deadline() const {
  const auto deadline = Clock::now() + std::chrono::milliseconds(options_.timeout_ms);
  return authenticated_ ? deadline : std::min(deadline, handshake_deadline_);
}

Connection::Clock::time_point Connection::WaitDeadline(Clock::time_point deadline,
                                                       bool stall) const {
  if (!stall || stall_ms_ <= 0) return deadline;
  return std::min(deadline, Clock::now() + std::chrono::milliseconds(stall_ms_));
}

std::string Connection::PeerText() const {
  return peer_address_.empty() || peer_address_ == remote_endpoint_
             ? remote_endpoint_
             : peer_address_ + " (" + remote_endpoint_ + ")";
}

Status Connection::Failed(Status s) {
  Close();
  if (!abandoned_.empty()) return Status::Unavailable(abandoned_ + "; let go of " + PeerText());
  return s;
}

Status Connection::TimedOutOrStalled(std::string_view what, Clock::time_point waited_until,
                                     Clock::time_point deadline) {
  if (waited_until < deadline) {
    return Failed(Status::Unavailable("no byte moved " + std::string(what) + " " + PeerText() +
                                      " for " + std::to_string(stall_ms_) +
                                      " ms (cluster.transfer_stall_ms)"));
  }
  return Failed(Status::TimedOut(std::string(what) + " " + remote_endpoint_ + " timed out"));
}

// Races one socket operation (an awaitable of (error_code, bytes)) against
// `deadline`. A timeout or an error closes the connection: after a partial
// read or write the stream cannot be resumed. A timeout is TimedOut here;
// callers that waited on a stall deadline say so (TimedOutOrStalled).

template <typename Operation>
awaitable<Result<size_t>> Connection::WithDeadline(Operation operation, std::string_view what,
                                                   Clock::time_point deadline) {
  if (!socket_.is_open()) {
    co_return Failed(Status::Unavailable("connection to " + remote_endpoint_ + " is closed"));
  }
  asio::steady_timer timer(socket_.get_executor(), deadline);
  auto result = co_await (std::move(operation) || timer.async_wait(kTuple));
  if (result.index() == 1) {
    co_return Failed(Status::TimedOut(std::string(what) + " " + remote_endpoint_ + " timed out"));
  }
  auto [ec, n] = std::get<0>(result);
  if (ec) {
    if (ec == asio::error::eof && n == 0) {
      co_return Failed(Status::Unavailable("connection closed by " + remote_endpoint_));
    }
    co_return Failed(
        Status::Unavailable(std::string(what) + " " + remote_endpoint_ + ": " + ec.message()));
  }
  last_used_ = std::chrono::steady_clock::now();
  co_return n;
}

awaitable<boost::system::error_code> Connection::WaitSocket(bool write,
                                                            Clock::time_point deadline) {
  if (!socket_.is_open()) co_return asio::error::not_connected;
  asio::steady_timer timer(socket_.get_executor(), deadline);
  const auto type = write ? tcp::socket::wait_write : tcp::socket::wait_read;
  auto result = co_await (socket_.async_wait(type, kTuple) || timer.async_wait(kTuple));
  if (result.index() == 1) co_return asio::error::timed_out;
  auto [ec] = std::get<0>(result);
  co_return ec;
}

awaitable<void> Connection::CountFastPath(size_t n) {
  constexpr int64_t kFastPathYieldBytes = 4 << 20;
  unyielded_bytes_ += static_cast<int64_t>(n);
  if (unyielded_bytes_ < kFastPathYieldBytes) co_return;
  unyielded_bytes_ = 0;
  const auto executor = socket_.get_executor();
  co_await asio::post(executor, asio::use_awaitable);
}

awaitable<Status> Connection::WriteAll(asio::const_buffer header, asio::const_buffer data) {
  if (tls_) {
    MR_CO_RETURN_IF_ERROR(co_await TlsWrite(header, data));
    bytes_sent_ += static_cast<int64_t>(header.size() + data.size());
    co_return Status::OK();
  }
  // The bytes not yet written once `done` of header + data are.
  auto unwritten = [&](size_t done) {
    if (done < header.size()) return std::array<asio::const_buffer, 2>{header + done, data};
    return std::array<asio::const_buffer, 2>{asio::const_buffer(), data + (done - header.size())};
  };
  // Fast path: what fits in the socket's buffer now is written at once, with
  // no timer armed and no wait in epoll; only the rest waits (with the
  // deadline). In a block stream most frames go this way.
  const size_t total = header.size() + data.size();
  size_t done = 0;
  boost::system::error_code ec;
  while (done < total) {
    const size_t n = socket_.write_some(unwritten(done), ec);
    if (ec) break;  // would_block: wait below; another error: the async write reports it
    done += n;
  }
  bytes_sent_ += static_cast<int64_t>(done);
  co_await CountFastPath(done);
  if (done == total) {
    last_used_ = Clock::now();
    co_return Status::OK();
  }
  const Clock::time_point deadline = Deadline();
  if (stall_ms_ <= 0) {  // one wait for the rest
    const std::array<asio::const_buffer, 2> rest = unwritten(done);
    auto n = co_await WithDeadline(asio::async_write(socket_, rest, kTuple), "write to", deadline);
    if (!n.ok()) co_return n.status();
    bytes_sent_ += static_cast<int64_t>(*n);
    co_return Status::OK();
  }
  // A stall bound: each wait ends stall_ms after the last byte moved.
  while (done < total) {
    const Clock::time_point until = WaitDeadline(deadline, /*stall=*/true);
    auto n = co_await WithDeadline(socket_.async_write_some(unwritten(done), kTuple), "write to", until);
    if (!n.ok()) {
      co_return n.status().IsTimedOut() ? TimedOutOrStalled("to", until, deadline) : n.status();
    }
    done += *n;
    bytes_sent_ += static_cast<int64_t>(*n);
  }
  co_return Status::OK();
}

template <typename Buffers>
awaitable<Status> Connection::ReadAll(const Buffers& buffers, Clock::time_point deadline,
                                      bool stall_first) {
  if (tls_) {
    const asio::mutable_buffer buffer = *asio::buffer_sequence_begin(buffers);
    MR_CO_RETURN_IF_ERROR(co_await TlsRead(buffer, deadline, stall_first));
    bytes_received_ += static_cast<int64_t>(buffer.size());
    co_return Status::OK();
  }
  // Fast path: bytes the socket already holds are taken at once, with no
  // timer armed and no wait in epoll; only a buffer they do not fill waits
  // for the rest (with the deadline).
  const asio::mutable_buffer buffer = *asio::buffer_sequence_begin(buffers);
  size_t done = 0;
  boost::system::error_code ec;
  while (done < buffer.size()) {
    const size_t n = socket_.read_some(buffer + done, ec);
    if (ec) break;  // would_block: wait below; eof or an error: the async read reports it
    done += n;
  }
  bytes_received_ += static_cast<int64_t>(done);
  co_await CountFastPath(done);
  if (done == buffer.size()) {
    last_used_ = Clock::now();
    co_return Status::OK();
  }
  if (stall_ms_ <= 0) {  // one wait for the rest
    const asio::mutable_buffer rest = buffer + done;
    auto n = co_await WithDeadline(asio::async_read(socket_, rest, kTuple), "read from", deadline);
    if (!n.ok()) co_return n.status();
    bytes_received_ += static_cast<int64_t>(*n);
    co_return Status::OK();
  }
  // A stall bound: each wait ends stall_ms after the last byte moved (the
  // first one only when `stall_first`).
  while (done < buffer.size()) {
    const Clock::time_point until = WaitDeadline(deadline, stall_first || done > 0);
    auto n = co_await WithDeadline(socket_.async_read_some(buffer + done, kTuple), "read from", until);
    if (!n.ok()) {
      co_return n.status().IsTimedOut() ? TimedOutOrStalled("from", until, deadline) : n.status();
    }
    done += *n;
    bytes_received_ += static_cast<int64_t>(*n);
  }
  co_return Status::OK();
}

awaitable<Status> Connection::ReadGrowing(std::string* out, size_t n, Clock::time_point deadline) {
  if (out->capacity() >= n) {
    // The buffer is already this large (reused across frames): no new memory.
    out->resize(n);
    co_return co_await ReadAll(asio::buffer(*out), deadline, /*stall_first=*/true);
  }
  out->clear();
  while (out->size() < n) {
    const size_t done = out->size();
    const size_t piece = std::min(n - done, kReadPieceBytes);
    out->resize(done + piece);
    MR_CO_RETURN_IF_ERROR(
        co_await ReadAll(asio::buffer(out->data() + done, piece), deadline, /*stall_first=*/true));
  }
  co_return Status::OK();
}

// A client sends requests and receives replies; a server the other way
// round. Replies may be larger (max_reply_bytes).
int64_t Connection::SendLimit() const {
  return client_ ? options_.max_frame_bytes : std::max(options_.max_frame_bytes, options_.max_reply_bytes);
}
int64_t Connection::ReceiveLimit() const {
  return client_ ? std::max(options_.max_frame_bytes, options_.max_reply_bytes) : options_.max_frame_bytes;
}

// Serializes prefix + header into scratch_.
Status Connection::EncodeHeader(const pb::Frame& header, size_t data_len) {
  scratch_.assign(kFramePrefixBytes, '\0');
  header.AppendToString(&scratch_);
  const size_t header_len = scratch_.size() - kFramePrefixBytes;
  if (static_cast<int64_t>(header_len + data_len) > SendLimit()) {
    return Status::InvalidArgument("frame of " + std::to_string(header_len + data_len) + " bytes exceeds " +
                                   (client_ ? "max_frame_bytes" : "max_reply_bytes"));
  }
  EncodeFramePrefix({static_cast<uint32_t>(header_len), static_cast<uint32_t>(data_len)},
                    scratch_.data());
  return Status::OK();
}

awaitable<Status> Connection::Send(const pb::Frame& header, std::span<const char> data) {
  MR_CO_RETURN_IF_ERROR(EncodeHeader(header, data.size()));
  const asio::const_buffer header_bytes = asio::buffer(scratch_);
  const asio::const_buffer data_bytes = asio::buffer(data.data(), data.size());
  const Status sent = co_await WriteAll(header_bytes, data_bytes);
  TrimHeaderBuffer(&scratch_);
  co_return sent;
}

awaitable<Status> Connection::SendFileRange(const pb::Frame& header, int file_fd, int64_t offset,
                                            size_t length, std::span<const char> same_bytes) {
  MR_CO_RETURN_IF_ERROR(EncodeHeader(header, length));
  // The header with MSG_MORE, so it leaves in one segment with the data
  // (the socket has TCP_NODELAY); what does not fit goes the usual way.
  // (No data: no MSG_MORE, which would hold the header back up to 200 ms.)
  const ssize_t sent = ::send(socket_.native_handle(), scratch_.data(), scratch_.size(),
                              (length > 0 ? MSG_MORE : 0) | MSG_NOSIGNAL | MSG_DONTWAIT);
  const size_t head = sent > 0 ? static_cast<size_t>(sent) : 0;
  bytes_sent_ += static_cast<int64_t>(head);
  if (head < scratch_.size()) {
    MR_CO_RETURN_IF_ERROR(co_await WriteAll(asio::buffer(scratch_) + head, {}));
  }
  off_t at = offset;
  size_t left = length;
  while (left > 0) {
    const ssize_t n = ::sendfile(socket_.native_handle(), file_fd, &at, left);
    if (n > 0) {
      left -= static_cast<size_t>(n);
      bytes_sent_ += n;
      co_await CountFastPath(static_cast<size_t>(n));
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      const Clock::time_point deadline = Deadline();
      const Clock::time_point until = WaitDeadline(deadline, /*stall=*/true);
      const boost::system::error_code ec = co_await WaitSocket(/*write=*/true, until);
      if (!ec) continue;
      if (ec == asio::error::timed_out) co_return TimedOutOrStalled("to", until, deadline);
      co_return Failed(Status::Unavailable("write to " + remote_endpoint_ + ": " + ec.message()));
    }
    if (n < 0 && (errno == EINVAL || errno == ENOSYS) && same_bytes.size() == length) {
      const size_t done = length - left;  // the rest from memory
      co_return co_await WriteAll({}, asio::buffer(same_bytes.data() + done, left));
    }
    const std::string why = n == 0 ? "the file ended early" : std::strerror(errno);
    co_return Failed(Status::Unavailable("sendfile to " + remote_endpoint_ + ": " + why));
  }
  last_used_ = Clock::now();
  co_return Status::OK();
}

awaitable<Status> Connection::Receive(pb::Frame* header, std::string* data, Expect expect) {
  char prefix_bytes[kFramePrefixBytes];
  MR_CO_RETURN_IF_ERROR(co_await ReadAll(asio::buffer(prefix_bytes), Deadline(),
                                         /*stall_first=*/expect == Expect::kPrompt));
  auto prefix = DecodeFramePrefix(prefix_bytes, authenticated_ ? ReceiveLimit() : kMaxHandshakeFrameBytes);
  if (!prefix.ok()) {
    Close();
    if (!authenticated_ && !tls_ && static_cast<unsigned char>(prefix_bytes[0]) == 0x16) {
      // A TLS ClientHello where a frame was expected.
      co_return Status::ProtocolError("TLS from " + remote_endpoint_ +
                                      " refused: cluster.tls is \"off\" here");
    }
    co_return prefix.status().WithContext(
        (authenticated_ ? "from " : "before authentication, from ") + remote_endpoint_);
  }
  // One deadline for the rest of the frame, however many pieces it comes in.
  const Clock::time_point deadline = Deadline();
  MR_CO_RETURN_IF_ERROR(co_await ReadGrowing(&header_in_, prefix->header_len, deadline));
  MR_CO_RETURN_IF_ERROR(co_await ReadGrowing(data, prefix->data_len, deadline));
  const bool parsed = header->ParseFromString(header_in_);
  TrimHeaderBuffer(&header_in_);
  if (!parsed) {
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

awaitable<Status> Connection::ReceiveReply(google::protobuf::MessageLite* body, std::string* data,
                                           Expect expect) {
  pb::Frame frame;
  std::string ignored;
  MR_CO_RETURN_IF_ERROR(co_await Receive(&frame, data ? data : &ignored, expect));
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

awaitable<Status> Connection::AuthenticateAsClient(const HostPort& target) {
  client_ = true;
  pb::Hello hello;
  Status s = co_await ReceiveReply(&hello);
  if (!s.ok()) co_return s.WithContext("handshake with " + remote_endpoint_);
  s = CheckHello(hello);
  if (!s.ok()) {
    Close();
    co_return s.WithContext("from " + remote_endpoint_);
  }
  if (options_.tls) {
    s = co_await UpgradeAsClient(target, &hello);
    if (!s.ok()) co_return s;
  }
  pb::AuthProof proof;
  proof.set_client_nonce(RandomBytes(kNonceBytes));
  proof.set_client_mac(ClientMac(options_.secret, hello.server_nonce(), proof.client_nonce()));
  proof.set_peer_name(options_.peer_name.substr(0, kMaxPeerNameBytes));
  MR_CO_RETURN_IF_ERROR(co_await SendReply(proof));
  pb::AuthOk ok;
  s = co_await ReceiveReply(&ok);
  if (!s.ok()) {
    Close();
    co_return s.WithContext("handshake with " + remote_endpoint_);
  }
  s = CheckAuthOk(options_.secret, proof.client_nonce(), hello.server_nonce(), ok);
  if (!s.ok()) {
    Close();
    co_return Status::PermissionDenied("server " + remote_endpoint_ +
                                       " does not know the cluster secret");
  }
  authenticated_ = true;
  co_return Status::OK();
}

awaitable<Status> Connection::AuthenticateAsServer() {
  if (options_.handshake_timeout_ms > 0) {
    handshake_deadline_ = Clock::now() + std::chrono::milliseconds(options_.handshake_timeout_ms);
  }
  pb::Hello hello;
  hello.set_protocol_version(kProtocolVersion);
  hello.set_server_nonce(RandomBytes(kNonceBytes));
  std::string plaintext_refused;  // why plaintext is refused from this peer
  if (options_.tls) {
    hello.set_tls_available(true);
    hello.set_tls_required(!options_.tls->PlaintextAllowedFrom(remote_address_, &plaintext_refused));
  }
  MR_CO_RETURN_IF_ERROR(co_await SendReply(hello));
  if (options_.tls) {
    Status upgraded = co_await UpgradeAsServer(plaintext_refused, &hello);
    if (!upgraded.ok()) co_return upgraded;
  }
  pb::AuthProof proof;
  Status received = co_await ReceiveReply(&proof);
  if (!received.ok() && !options_.tls && received.IsPermissionDenied()) {
    // Only a peer's error frame carries PermissionDenied here, and a client
    // sends one in the handshake only when it requires TLS (UpgradeAsClient).
    tls_refusal_ = "TLS wanted";
    Close();
    co_return Status::PermissionDenied("the client at " + remote_address_ +
                                       " requires TLS, and cluster.tls is \"off\" here");
  }
  if (!received.ok()) co_return received;
  peer_name_ = proof.peer_name().substr(0, kMaxPeerNameBytes);
  const Status checked = CheckAuthProof(options_.secret, hello.server_nonce(), proof);
  if (!checked.ok()) {
    co_await SendError(checked);
    Close();
    co_return checked;
  }
  if (tls_) {
    // The certificate must be the one of the node the peer claims to be.
    const Status named = CheckPeerCertificateName(tls_.get(), peer_name_);
    if (!named.ok()) {
      tls_refusal_ = "certificate name";
      co_await SendError(named);
      Close();
      co_return named;
    }
  }
  pb::AuthOk ok;
  ok.set_server_mac(ServerMac(options_.secret, proof.client_nonce(), hello.server_nonce()));
  MR_CO_RETURN_IF_ERROR(co_await SendReply(ok));
  authenticated_ = true;
  co_return Status::OK();
}

awaitable<Result<unsigned char>> Connection::PeekByte() {
  unsigned char first = 0;
  auto n = co_await WithDeadline(
      socket_.async_receive(asio::buffer(&first, 1), tcp::socket::message_peek, kTuple),
      "read from", Deadline());
  if (!n.ok()) co_return n.status();
  if (*n == 0) {
    Close();
    co_return Status::Unavailable("connection closed by " + remote_endpoint_);
  }
  co_return first;
}

}  // namespace mr

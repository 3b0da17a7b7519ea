// RPC over Boost.Asio TCP with C++20 coroutines.
//
// Start here for networking. A Connection owns one authenticated socket and
// moves whole frames (see frame.h); every read, write, connect and resolve
// races a deadline of `RpcOptions::timeout_ms`, and a connection whose
// deadline expires or that sees a malformed frame is closed. Calls on one
// connection are strictly sequential: request, reply (or request, reply,
// stream of frames) — there is no multiplexing, so one connection serves one
// caller at a time.
//
// RpcServer accepts connections, runs the handshake, and dispatches each
// request frame to the handler registered for its method. A handler either
// returns a Status (the server replies with it) or streams frames itself.
//
// Thread-safety: a Connection is used by one coroutine at a time. RpcServer's
// Handle() must be called before Start(); handlers run on the executor given
// to the server (the master uses a one-thread io_context, so its handlers
// never run concurrently).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <unordered_map>

#include <boost/asio.hpp>
#include <google/protobuf/message_lite.h>

#include "common/config.h"
#include "common/status.h"
#include "proto/rpc.pb.h"

namespace mr {

namespace asio = boost::asio;
using asio::awaitable;
using asio::ip::tcp;

struct RpcOptions {
  int timeout_ms = 30000;
  int64_t max_frame_bytes = 4 << 20;
  std::string secret;
  std::string peer_name;   // how this side names itself in the handshake

  static RpcOptions FromConfig(const ClusterConfig& config, std::string peer_name);
};

class Connection {
 public:
  Connection(tcp::socket socket, RpcOptions options);
  ~Connection();
  Connection(const Connection&) = delete;
  Connection& operator=(const Connection&) = delete;

  // Sends one frame. `data` may be empty.
  awaitable<Status> Send(const pb::Frame& header, std::span<const char> data = {});
  // Receives one frame; `data` is resized to the frame's bulk bytes.
  awaitable<Status> Receive(pb::Frame* header, std::string* data);

  // A request frame for `method` carrying `body`.
  awaitable<Status> SendRequest(std::string_view method,
                                const google::protobuf::MessageLite& body,
                                std::span<const char> data = {});
  // An OK reply (or stream frame) carrying `body`.
  awaitable<Status> SendReply(const google::protobuf::MessageLite& body,
                              std::span<const char> data = {});
  // An error reply carrying `status`. REQUIRES: !status.ok().
  awaitable<Status> SendError(const Status& status);
  // Receives a reply or stream frame and parses its body into `body`. Returns
  // the remote status when the peer replied with an error, a transport status
  // when the connection failed, ProtocolError when the body does not parse.
  awaitable<Status> ReceiveReply(google::protobuf::MessageLite* body, std::string* data = nullptr);
  // SendRequest then ReceiveReply.
  awaitable<Status> Call(std::string_view method, const google::protobuf::MessageLite& request,
                         google::protobuf::MessageLite* reply);

  // Client side of the handshake (see auth.h). Closes on failure.
  awaitable<Status> AuthenticateAsClient();
  // Server side of the handshake. Closes on failure.
  awaitable<Status> AuthenticateAsServer();

  void Close();
  bool is_open() const { return socket_.is_open(); }
  // "host:port" of the other end, and the name it gave in the handshake.
  const std::string& remote_endpoint() const { return remote_endpoint_; }
  const std::string& peer_name() const { return peer_name_; }
  int64_t bytes_sent() const { return bytes_sent_; }
  int64_t bytes_received() const { return bytes_received_; }
  const RpcOptions& options() const { return options_; }
  // True when the connection is open and was used within half the idle
  // timeout, so the server cannot have closed it for idleness. Callers that
  // cache connections reconnect otherwise (a request written to a connection
  // the server just closed fails only when the reply is read).
  bool IsFresh() const;
  tcp::socket& socket() { return socket_; }

 private:
  template <typename Operation>
  awaitable<Result<size_t>> WithDeadline(Operation operation, std::string_view what);
  template <typename Buffers>
  awaitable<Status> WriteAll(const Buffers& buffers);
  template <typename Buffers>
  awaitable<Status> ReadAll(const Buffers& buffers);
  Status EncodeHeader(const pb::Frame& header, size_t data_len);

  tcp::socket socket_;
  RpcOptions options_;
  std::string remote_endpoint_;
  std::string peer_name_;
  std::chrono::steady_clock::time_point last_used_ = std::chrono::steady_clock::now();
  int64_t bytes_sent_ = 0;
  int64_t bytes_received_ = 0;
  std::string scratch_;    // serialized outgoing headers
  std::string header_in_;  // incoming headers
};

// Resolves and connects to `address` and authenticates, all under deadlines.
awaitable<Result<std::unique_ptr<Connection>>> Connect(const HostPort& address,
                                                       const RpcOptions& options);

// One request on an authenticated server connection.
struct ServerCall {
  Connection& conn;
  const pb::Frame& request;   // request.method(), request.body()
  std::string& data;          // bulk bytes that came with the request
  bool replied = false;       // set by a handler that sent its own reply

  template <typename Message>
  bool Parse(Message* m) const {
    return m->ParseFromString(request.body());
  }
};

class RpcServer {
 public:
  // Handlers return OK after replying themselves (call.replied = true), or
  // any Status for the server to send as the reply (OK → empty reply).
  using Handler = std::function<awaitable<Status>(ServerCall&)>;

  RpcServer(asio::any_io_executor executor, RpcOptions options, std::string name);
  ~RpcServer();

  void Handle(const std::string& method, Handler handler);

  // A handler for request/reply methods with protobuf messages.
  template <typename Request, typename Reply>
  void HandleUnary(const std::string& method,
                   std::function<awaitable<Status>(const Request&, Reply*, ServerCall&)> fn) {
    Handle(method, [fn = std::move(fn)](ServerCall& call) -> awaitable<Status> {
      Request request;
      if (!call.Parse(&request)) co_return Status::ProtocolError("malformed request body");
      Reply reply;
      Status s = co_await fn(request, &reply, call);
      if (!s.ok()) co_return s;
      call.replied = true;
      co_return co_await call.conn.SendReply(reply);
    });
  }

  // Binds and listens. Port 0 picks a free port (see port()).
  Status Listen(const HostPort& address);
  uint16_t port() const { return port_; }
  // Starts accepting on the executor.
  void Start();
  // Stops accepting and closes every open connection.
  void Stop();

  int64_t rejected_connections() const { return rejected_; }

 private:
  awaitable<void> AcceptLoop();
  awaitable<void> Serve(std::shared_ptr<Connection> conn);

  asio::any_io_executor executor_;
  RpcOptions options_;
  std::string name_;
  tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  std::unordered_map<std::string, Handler> handlers_;
  std::mutex mu_;
  std::unordered_map<Connection*, std::weak_ptr<Connection>> open_;
  std::atomic<int64_t> rejected_{0};
  std::atomic<bool> stopped_{false};
};

// Runs `fn` to completion on a fresh io_context in this thread (for mrctl and
// tests). Exceptions become Internal. Anything that holds a socket (a
// Connection, a DfsClient) must be created inside `fn`: the io_context is
// destroyed when RunSync returns, and a socket outliving it is a
// use-after-free.
Status RunSync(std::function<awaitable<Status>()> fn);

}  // namespace mr

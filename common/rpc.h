// RPC over Boost.Asio TCP with C++20 coroutines.
//
// Start here for networking. A Connection owns one authenticated socket and
// moves whole frames (see frame.h); every wait to read, write, connect and
// resolve races a deadline of `RpcOptions::timeout_ms`, and a connection whose
// deadline expires or that sees a malformed frame is closed. Bytes the
// socket already holds (or has room for) move at once, without a timer or a
// trip through epoll: in a block stream that is most frames, and it cut the
// reader's system calls by three quarters. Until the
// handshake has succeeded a connection accepts only frames of at most
// kMaxHandshakeFrameBytes (auth.h), and a server gives the peer
// handshake_timeout_ms to finish it. A connection made for a bulk transfer
// (a block read or write, a shuffle fetch: Connect with a stall bound,
// cluster.transfer_stall_ms) also fails with Unavailable, naming the peer,
// when no byte moves for that long in any wait but those its caller marks
// Expect::kSlowStart, so a peer that hangs is let go in seconds rather than
// timeout_ms. Every connection Connect() makes is watched in Peers()
// (common/peer_registry.h), which shuts it down when the master declares
// its peer dead. A frame's bytes are read in pieces of at
// most kReadPieceBytes, the buffer growing as they arrive, so a prefix alone
// never makes the receiver allocate the size it announces. Calls on one
// connection are strictly sequential: request, reply (or request, reply,
// stream of frames) — there is no multiplexing, so one connection serves one
// caller at a time.
//
// RpcServer accepts connections, runs the handshake, and dispatches each
// request frame to the handler registered for its method. It holds at most
// max_unauthenticated_connections peers in the handshake (at most
// max_unauthenticated_per_address from one address): past either cap a new
// connection is still admitted and the oldest handshake of the address
// holding the most (of its own address, past the per-address cap) is
// closed, so a flood churns itself and never locks out a peer that can
// authenticate; when accept() fails (out of descriptors) it waits 100 ms, doubling
// to 1 s, before trying again. Refusals and failures are logged once per
// 10 s with a count. A handler either
// returns a Status (the server replies with it) or streams frames itself.
//
// Thread-safety: a Connection is used by one coroutine at a time; only
// Abort() may be called from elsewhere meanwhile. RpcServer's
// Handle() must be called before Start(); handlers run on the executor given
// to the server (the master uses a one-thread io_context, so its handlers
// never run concurrently).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>

#include <boost/asio.hpp>
#include <boost/asio/ssl.hpp>
#include <google/protobuf/message_lite.h>
#include <openssl/ssl.h>

#include "common/config.h"
#include "common/log.h"
#include "common/status.h"
#include "common/tls.h"
#include "proto/rpc.pb.h"

namespace mr {

namespace asio = boost::asio;
using asio::awaitable;
using asio::ip::tcp;

// The most bytes a Connection reads into a frame's buffer before they have
// arrived.
inline constexpr size_t kReadPieceBytes = 256 << 10;
// The most a connection keeps of a frame header's buffers between frames
// (a header holds its message's body). A rare larger one (a register
// reply listing every member, a job's record) is freed once used: a
// master of 8,000 workers' connections kept each its largest reply, a
// members' list as long as the fleet, O(workers²) bytes (issue 29). The
// data buffers of block transfers are the caller's and are kept.
inline constexpr size_t kKeptHeaderBytes = 64 << 10;
// Frees `buffer` when it holds more than kKeptHeaderBytes.
inline void TrimHeaderBuffer(std::string* buffer) {
  if (buffer->capacity() > kKeptHeaderBytes) std::string().swap(*buffer);
}

struct RpcOptions {
  int timeout_ms = 30000;
  int64_t max_frame_bytes = 4 << 20;
  // The largest frame a server sends and a client receives once
  // authenticated (cluster.max_reply_bytes): replies may be larger than
  // requests. Taken as max_frame_bytes when smaller.
  int64_t max_reply_bytes = 128 << 20;
  std::string secret;
  std::string peer_name;   // how this side names itself in the handshake
  // Servers only (see the [cluster] keys of the same names in config.h): the
  // time a new connection gets to authenticate, and how many connections may
  // wait in the handshake, in all and from one source address.
  int handshake_timeout_ms = 5000;
  int max_unauthenticated_connections = 64;
  int max_unauthenticated_per_address = 32;
  // The process's TLS policy (tls.h); nullptr = tls "off": no TLS at all.
  std::shared_ptr<const TlsPolicy> tls;
  // The stall bound bulk transfers pass to Connect(), in ms
  // (cluster.transfer_stall_ms; see Connection::Expect). 0 = none.
  int transfer_stall_ms = 0;

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
  // Sends one frame whose data is `length` bytes of the file `file_fd` from
  // `offset`, with sendfile(2): the kernel moves the file's page-cache pages
  // to the socket without a copy through this process. `same_bytes`, if not
  // empty, holds those bytes in memory: they are sent instead where the file
  // cannot be sent from (sendfile fails with EINVAL or ENOSYS: a file system
  // without splice support). An Unavailable when the file ends before
  // `length` (the frame is then cut short: the connection is closed).
  // REQUIRES: !encrypted(); SIGPIPE ignored (sendfile cannot be told
  // MSG_NOSIGNAL; the worker ignores it); `same_bytes` empty or `length` long.
  awaitable<Status> SendFileRange(const pb::Frame& header, int file_fd, int64_t offset,
                                  size_t length, std::span<const char> same_bytes = {});
  // How long a Receive may wait for the first byte of its frame, on a
  // connection with a stall bound (stall_ms() > 0; without one, every wait
  // is up to timeout_ms). Once a frame has begun, and in every write, a
  // wait in which no byte moves for stall_ms() fails with Unavailable.
  enum class Expect {
    // A frame the peer sends at once: a handshake message, a reply the
    // server sends before any slow work, the next frame of a stream. Up to
    // stall_ms().
    kPrompt,
    // A frame the peer may take its time to prepare: the first data frame
    // of a block read (the worker reads it from disk) or of a shuffle fetch
    // (it may recompress the segment), the replies of a pipeline write
    // (each node connects to the next; at the end every node commits). Up
    // to timeout_ms; a peer hung there is let go when the master declares
    // it dead (peer_registry.h).
    kSlowStart,
  };
  // Receives one frame; `data` is resized to the frame's bulk bytes.
  awaitable<Status> Receive(pb::Frame* header, std::string* data, Expect expect = Expect::kPrompt);

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
  awaitable<Status> ReceiveReply(google::protobuf::MessageLite* body, std::string* data = nullptr,
                                 Expect expect = Expect::kPrompt);
  // SendRequest then ReceiveReply.
  awaitable<Status> Call(std::string_view method, const google::protobuf::MessageLite& request,
                         google::protobuf::MessageLite* reply);

  // Client side of the handshake (see auth.h), encrypted when the TLS policy
  // wants it for `target` (the address dialled; its host is what the
  // server's certificate must name) or the server requires it. Closes on
  // failure.
  awaitable<Status> AuthenticateAsClient(const HostPort& target = {});
  // Server side of the handshake, under handshake_timeout_ms from this call.
  // Closes on failure.
  awaitable<Status> AuthenticateAsServer();
  // True after either side's handshake has succeeded; from then on frames up
  // to max_frame_bytes are accepted, by a client up to max_reply_bytes.
  bool authenticated() const { return authenticated_; }
  // True when the connection runs over TLS.
  bool encrypted() const { return tls_ != nullptr; }
  // Server: why TLS refused the peer, in a few words from a bounded set ("TLS
  // required", "certificate name", OpenSSL's verify error, "TLS handshake");
  // empty when TLS refused nothing. RpcServer throttles its log per kind.
  const std::string& tls_refusal() const { return tls_refusal_; }

  // The no-progress bound of this connection's waits (see Expect), in ms;
  // 0 = none: the stall_ms given to Connect(). A connection a server
  // accepted has none.
  int stall_ms() const { return stall_ms_; }
  void set_stall_ms(int ms) { stall_ms_ = ms; }
  // Connect(): watches this connection in Peers() under `address`, the
  // address dialled, until Close().
  void WatchPeer(const std::string& address);

  void Close();
  // Shuts the socket down (shutdown(2)) if it is still open: the coroutine
  // using this connection then sees the peer gone, as when it hangs up, and
  // closes it itself. Unlike Close() (Asio's sockets are not thread-safe),
  // callable from any thread while a coroutine on another uses the
  // connection: what RpcServer does to a stranger it evicts, or at Stop().
  void Abort();
  bool is_open() const { return socket_.is_open(); }
  // True when the peer has sent bytes not yet received, without waiting: a
  // streaming writer's cue that the other end answered early, which in a
  // stream of request frames means it refused them. Over TLS only bytes
  // already decrypted count (the socket may hold TLS records that are not
  // data), so a TLS writer mostly learns at its last frame.
  bool HasPendingInput();
  // "host:port" of the other end, and the name it gave in the handshake.
  const std::string& remote_endpoint() const { return remote_endpoint_; }
  const std::string& peer_name() const { return peer_name_; }
  int64_t bytes_sent() const { return bytes_sent_; }
  int64_t bytes_received() const { return bytes_received_; }
  // The bytes its header buffers hold between frames (kKeptHeaderBytes).
  size_t retained_header_bytes() const { return scratch_.capacity() + header_in_.capacity(); }
  const RpcOptions& options() const { return options_; }
  // True when the connection is open and was used within half the idle
  // timeout, so the server cannot have closed it for idleness. Callers that
  // cache connections reconnect otherwise (a request written to a connection
  // the server just closed fails only when the reply is read).
  bool IsFresh() const;
  tcp::socket& socket() { return socket_; }

 private:
  using Clock = std::chrono::steady_clock;
  // When a wait starting now must end: timeout_ms from now, and no later than
  // the handshake deadline while unauthenticated.
  Clock::time_point Deadline() const;
  // The deadline of one wait within `deadline`: stall_ms() from now when
  // `stall` (and a stall bound is set), else `deadline`.
  Clock::time_point WaitDeadline(Clock::time_point deadline, bool stall) const;
  // "address (ip:port)" of the peer: the address dialled, when known.
  std::string PeerText() const;
  // Closes, and returns `s`, or Unavailable with Peers()' reason when it
  // shut this connection down (the master declared the peer dead).
  Status Failed(Status s);
  // Closes after a wait that ended at `waited_until`: a stall (Unavailable,
  // naming the peer and cluster.transfer_stall_ms) when that came before
  // the frame's `deadline`, else TimedOut. `direction`: "from" or "to".
  Status TimedOutOrStalled(std::string_view direction, Clock::time_point waited_until,
                           Clock::time_point deadline);
  template <typename Operation>
  awaitable<Result<size_t>> WithDeadline(Operation operation, std::string_view what,
                                         Clock::time_point deadline);
  // Writes a frame's serialized header, then its data.
  awaitable<Status> WriteAll(asio::const_buffer header, asio::const_buffer data);
  // Fills `buffers` by `deadline`; with a stall bound, each wait also ends
  // stall_ms() after the last byte came (the first wait only when
  // `stall_first`).
  template <typename Buffers>
  awaitable<Status> ReadAll(const Buffers& buffers, Clock::time_point deadline, bool stall_first);
  // Counts `n` fast-path bytes; after every kFastPathYieldBytes, lets the
  // io_context run other handlers once (a stream whose socket is always
  // ready would otherwise hold its thread).
  awaitable<void> CountFastPath(size_t n);
  // Reads `n` bytes into `out`, growing it by at most kReadPieceBytes ahead
  // of the bytes that have arrived.
  awaitable<Status> ReadGrowing(std::string* out, size_t n, Clock::time_point deadline);
  Status EncodeHeader(const pb::Frame& header, size_t data_len);
  // The largest frame this side sends / accepts once authenticated.
  int64_t SendLimit() const;
  int64_t ReceiveLimit() const;
  // The TLS part of the handshake (rpc_tls.cc), after the plaintext Hello.
  // Client: switches to TLS when its policy or the Hello requires it, then
  // reads the server's second Hello into `hello`; refuses a server without
  // TLS (telling it why). Server: switches to TLS when the client's first
  // byte starts a TLS record (sending a new Hello), else refuses plaintext
  // when `hello` requires TLS (`plaintext_refused` says why). Close on failure.
  awaitable<Status> UpgradeAsClient(const HostPort& target, pb::Hello* hello);
  awaitable<Status> UpgradeAsServer(const std::string& plaintext_refused, pb::Hello* hello);
  // Runs the TLS handshake on the socket as client (verifying that the
  // server's certificate names `host`) or server, under the deadline.
  awaitable<Status> StartTls(bool server, const std::string& host);
  // Server: the first byte the client sent, without consuming it.
  awaitable<Result<unsigned char>> PeekByte();
  // TLS I/O (rpc_tls.cc): OpenSSL on the socket's descriptor, waiting for
  // the socket only when OpenSSL asks to. TlsRead fills `buffer`; TlsWrite
  // sends a frame (its header shares the first record with the data) and
  // flushes the write buffer. Close on failure.
  awaitable<Status> TlsRead(asio::mutable_buffer buffer, Clock::time_point deadline,
                            bool stall_first);
  awaitable<Status> TlsWrite(asio::const_buffer header, asio::const_buffer data);
  awaitable<Status> TlsWriteBytes(const char* data, size_t size, Clock::time_point deadline);
  awaitable<Status> TlsFlush(Clock::time_point deadline);
  // The loop under TlsRead and TlsWriteBytes: calls `op(done, &n)` (an
  // SSL_read_ex or SSL_write_ex of the bytes after `done`) until `size`
  // bytes are done, waiting for the socket whenever OpenSSL asks. `what`
  // ("read from", "write to") names the direction in errors. The stall
  // bound as in ReadAll.
  awaitable<Status> TlsTransfer(size_t size, const std::function<int(size_t done, size_t* n)>& op,
                                std::string_view what, Clock::time_point deadline,
                                bool stall_first);
  // Waits until the socket is writable (`write`) or readable; timed_out at
  // `deadline`. For waits the kernel or OpenSSL asks for (EAGAIN,
  // SSL_ERROR_WANT_WRITE / WANT_READ) outside Asio's own operations.
  awaitable<boost::system::error_code> WaitSocket(bool write, Clock::time_point deadline);
  // Closes and turns the failure of an SSL call (`ret`, its SSL_get_error
  // `ssl_error`) into a Status like WithDeadline's.
  Status TlsFailed(int ret, int ssl_error, std::string_view what);

  tcp::socket socket_;
  // Held while the descriptor closes and by Abort(), which reads its number
  // from another thread.
  std::mutex close_mu_;
  // OpenSSL on socket_'s descriptor once TLS has started; declared after
  // socket_, so freed first (its BIOs do not close the descriptor).
  struct SslFree {
    void operator()(SSL* ssl) const { SSL_free(ssl); }
  };
  std::unique_ptr<SSL, SslFree> tls_;
  RpcOptions options_;
  std::string remote_address_;  // the IP alone
  std::string tls_refusal_;
  std::string remote_endpoint_;
  std::string peer_name_;
  bool authenticated_ = false;
  bool client_ = false;         // this side dialled (AuthenticateAsClient)
  int stall_ms_ = 0;            // see stall_ms()
  std::string peer_address_;    // the address dialled (WatchPeer), or ""
  bool watched_ = false;        // in Peers() until Close()
  std::string abandoned_;       // why Peers() shut this connection down, once it did
  Clock::time_point handshake_deadline_ = Clock::time_point::max();
  std::chrono::steady_clock::time_point last_used_ = std::chrono::steady_clock::now();
  int64_t bytes_sent_ = 0;
  int64_t bytes_received_ = 0;
  // Bytes moved by the fast paths (ReadAll, WriteAll) since this
  // connection's coroutine last let others run; see CountFastPath().
  int64_t unyielded_bytes_ = 0;
  std::string scratch_;    // serialized outgoing headers
  std::string header_in_;  // incoming headers
  std::string tls_first_record_;  // TLS: a frame's header and the start of its data
};

// Resolves and connects to `address` and authenticates, all under deadlines.
// `stall_ms` > 0 (bulk transfers: RpcOptions::transfer_stall_ms, a multiple
// for a pipeline) bounds the TCP connect and, from the handshake on, every
// wait by that much time without a byte moving (Connection::Expect). A peer
// Peers() holds dead is refused at once (Unavailable, with the reason).
awaitable<Result<std::unique_ptr<Connection>>> Connect(const HostPort& address,
                                                       const RpcOptions& options,
                                                       int stall_ms = 0);

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
  // Called after every handled call with its method, result (unknown
  // methods as "unknown") and the seconds from its arrival to its handler's
  // end; for /metrics (common/metrics.h). Set before Start(); called on the
  // connection's executor, so it must be thread-safe where the server runs
  // on several threads. Default: none.
  using CallObserver = std::function<void(const std::string& method, const Status& result, double seconds)>;
  void set_call_observer(CallObserver observer) { observer_ = std::move(observer); }

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
  // Stops accepting and shuts every open connection down (Abort()): each
  // one's coroutine then closes it.
  void Stop();

  // Connections that failed the handshake (wrong secret, bad or oversized
  // frame, handshake timeout).
  int64_t rejected_connections() const { return rejected_; }
  // Connections in the handshake closed to make room for a newer one because
  // a cap on unauthenticated connections was reached.
  int64_t refused_connections() const { return refused_; }
  // Failed accept() calls (EMFILE and the like).
  int64_t accept_errors() const { return accept_errors_; }
  // Connections open now that have not authenticated yet.
  int unauthenticated_connections() const { return unauthenticated_; }

 private:
  awaitable<void> AcceptLoop();
  // A connection in the handshake, by admission order (its ticket).
  struct Handshaking {
    std::weak_ptr<Connection> conn;
    std::string address;  // source address, no port
  };
  // Gives `conn` from `address` (no port) a handshake slot, closing the
  // oldest connection of the biggest holder when the budget is full (logged,
  // throttled); returns its ticket. REQUIRES: mu_ not held.
  uint64_t AdmitUnauthenticated(const std::shared_ptr<Connection>& conn, const std::string& address,
                                const std::string& endpoint);
  // The handshake of `ticket` ended (either way); a no-op once evicted.
  void ReleaseUnauthenticated(uint64_t ticket);
  // REQUIRES for the *Locked helpers: mu_ held.
  // Forgets the oldest handshake from `address` ("": of the addresses
  // holding the most) and returns it to be closed; null when none is left.
  std::shared_ptr<Connection> EvictOldestLocked(const std::string& address);
  void ForgetLocked(std::map<uint64_t, Handshaking>::iterator it);
  awaitable<void> Serve(std::shared_ptr<Connection> conn, uint64_t ticket);

  asio::any_io_executor executor_;
  // The accept loop's and Stop()'s: they share the acceptor.
  asio::strand<asio::any_io_executor> accept_strand_;
  RpcOptions options_;
  std::string name_;
  tcp::acceptor acceptor_;
  uint16_t port_ = 0;
  std::unordered_map<std::string, Handler> handlers_;
  CallObserver observer_;
  std::mutex mu_;
  std::unordered_map<Connection*, std::weak_ptr<Connection>> open_;
  std::atomic<int64_t> rejected_{0};
  std::atomic<int64_t> refused_{0};
  std::atomic<int64_t> accept_errors_{0};
  std::atomic<int> unauthenticated_{0};
  std::unordered_map<std::string, int> unauthenticated_by_address_;  // guarded by mu_
  std::map<uint64_t, Handshaking> handshaking_;                      // guarded by mu_
  uint64_t last_ticket_ = 0;                                          // guarded by mu_
  asio::steady_timer backoff_timer_;
  LogThrottle refused_log_{std::chrono::seconds(10)};
  LogThrottle rejected_log_{std::chrono::seconds(10)};
  LogThrottle accept_log_{std::chrono::seconds(10)};
  // One throttle per kind of TLS refusal (Connection::tls_refusal()), so an
  // expired certificate is logged even while plaintext peers are refused.
  std::unordered_map<std::string, std::unique_ptr<LogThrottle>> tls_refused_logs_;  // guarded by mu_
  std::atomic<bool> stopped_{false};
};

// Runs `fn` to completion on a fresh io_context in this thread (for mrctl and
// tests). Exceptions become Internal. Anything that holds a socket (a
// Connection, a DfsClient) must be created inside `fn`: the io_context is
// destroyed when RunSync returns, and a socket outliving it is a
// use-after-free.
Status RunSync(std::function<awaitable<Status>()> fn);

}  // namespace mr

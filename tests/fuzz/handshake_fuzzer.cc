// libFuzzer harness: both sides of the handshake (common/auth.h, run by
// Connection::AuthenticateAsServer / AuthenticateAsClient in rpc.cc).
//
// The side under test is a real Connection on one end of a socketpair; the
// harness plays the other side with the input bytes. Input: a mode byte,
// then the peer's bytes.
//   mode & 1 == 0: the server side under test; the bytes are the client's.
//   mode & 1 == 1: the client side under test; the bytes are the server's.
//   mode & 2: repair — the harness decodes the first frame of the bytes and,
//     if its body parses as the expected message, puts the right MAC in it
//     (server side) or answers the client's proof with the right AuthOk
//     (client side), so the accepting paths are fuzzed too.
//
// Checks: without repair the side under test refuses (a random peer cannot
// know the MAC of a fresh nonce); with repair it accepts exactly when the
// message is well-formed (server: an OK frame holding a 32-byte client
// nonce; client: an OK frame holding a version-1 Hello with a 32-byte
// nonce), and then its own message carries the right MAC. Before accepting, a server sends its Hello and at most one
// error. Nothing hangs: both ends half-close, every wait has a deadline.
#include <sys/socket.h>

#include <cstdint>
#include <string>

#include <spdlog/spdlog.h>

#include "common/auth.h"
#include "common/frame.h"
#include "common/rpc.h"
#include "tests/fuzz/rpc_driver.h"

namespace mr::fuzz {
namespace {

constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
constexpr int64_t kMaxFrame = 4 << 20;

RpcOptions Options(const std::string& name) {
  RpcOptions o;
  o.secret = kSecret;
  o.timeout_ms = 5000;
  o.peer_name = name;
  return o;
}

// Reads frames until the side under test closes. A deadline is a hang.
awaitable<void> Drain(Connection& conn, std::vector<pb::Frame>* frames) {
  for (;;) {
    pb::Frame frame;
    std::string data;
    Status s = co_await conn.Receive(&frame, &data);
    if (s.IsTimedOut()) Fail("the side under test neither answered nor closed");
    if (!s.ok()) co_return;
    frames->push_back(std::move(frame));
  }
}

awaitable<void> WriteAndHalfClose(Connection& conn, std::string bytes) {
  co_await asio::async_write(conn.socket(), asio::buffer(bytes), kTuple);
  boost::system::error_code ec;
  conn.socket().shutdown(tcp::socket::shutdown_send, ec);
}

// The first frame of `bytes`, if one decodes.
bool FirstFrame(std::string_view bytes, pb::Frame* header, std::string* data, size_t* used) {
  auto n = DecodeFrame(bytes, kMaxFrame, header, data);
  if (!n.ok() || *n == 0) return false;
  *used = *n;
  return true;
}

struct Outcome {
  bool finished = false;         // the side under test returned
  Status status;                 // of the side under test
  std::string peer_name;         // server side: the name the client gave
  std::vector<pb::Frame> sent;   // frames the side under test sent (server: after Hello)
};

// Lets the side under test's coroutine return (it has closed its end, or
// Drain would not have returned; `out` lives in the caller's frame).
awaitable<void> WaitFinished(const Outcome& out) {
  for (int i = 0; !out.finished; ++i) {
    if (i == 1000) Fail("the side under test closed but did not return");
    co_await asio::post(co_await asio::this_coro::executor, asio::use_awaitable);
  }
}

// Server side under test; the peer (the fuzzer) is the client.
awaitable<void> FuzzServer(Connection& server, Connection& peer, std::string bytes, bool repair) {
  Outcome out;
  bool expect_ok = false;
  pb::AuthProof proof;
  pb::Hello hello;
  asio::co_spawn(co_await asio::this_coro::executor,
                 [](Connection& server, Outcome& out) -> awaitable<void> {
                   out.status = co_await server.AuthenticateAsServer();
                   out.peer_name = server.peer_name();
                   out.finished = true;
                   server.Close();
                 }(server, out),
                 asio::detached);
  pb::Frame first;
  std::string data;
  Status s = co_await peer.Receive(&first, &data);
  if (!s.ok() || !hello.ParseFromString(first.body()) || hello.server_nonce().size() != kNonceBytes) {
    Fail("no Hello from the server: " + s.ToString());
  }
  pb::Frame header;
  size_t used = 0;
  if (repair && FirstFrame(bytes, &header, &data, &used) && proof.ParseFromString(header.body())) {
    proof.set_client_mac(ClientMac(kSecret, hello.server_nonce(), proof.client_nonce()));
    header.set_body(proof.SerializeAsString());
    bytes = EncodeFrame(header, data) + bytes.substr(used);
    expect_ok = header.status_code() == 0 && proof.client_nonce().size() == kNonceBytes;
  }
  co_await WriteAndHalfClose(peer, std::move(bytes));
  co_await Drain(peer, &out.sent);
  co_await WaitFinished(out);
  if (out.status.IsTimedOut()) Fail("server side timed out: " + out.status.ToString());
  if (out.status.ok() != expect_ok) {
    Fail(std::string("server side ") + (out.status.ok() ? "accepted" : "refused") +
         (repair ? " a repaired proof: " : " a fuzzed proof: ") + out.status.ToString());
  }
  if (expect_ok) {
    pb::AuthOk ok;
    if (out.sent.size() != 1 || out.sent[0].status_code() != 0 ||
        !ok.ParseFromString(out.sent[0].body()) ||
        ok.server_mac() != ServerMac(kSecret, proof.client_nonce(), hello.server_nonce())) {
      Fail("server accepted but did not send the right AuthOk");
    }
    if (out.peer_name != proof.peer_name().substr(0, 64)) Fail("peer name not kept");
  } else if (out.sent.size() > 1 || (out.sent.size() == 1 && out.sent[0].status_code() == 0)) {
    Fail("server refused but sent " + std::to_string(out.sent.size()) + " frame(s) after Hello");
  }
}

// Client side under test; the peer (the fuzzer) is the server.
awaitable<void> FuzzClient(Connection& client, Connection& peer, std::string bytes, bool repair) {
  Outcome out;
  asio::co_spawn(co_await asio::this_coro::executor,
                 [](Connection& client, Outcome& out) -> awaitable<void> {
                   out.status = co_await client.AuthenticateAsClient();
                   out.finished = true;
                   client.Close();
                 }(client, out),
                 asio::detached);
  pb::Frame header;
  std::string data;
  size_t used = 0;
  pb::Hello hello;
  bool expect_ok = false;
  if (repair && FirstFrame(bytes, &header, &data, &used)) {
    expect_ok = header.status_code() == 0 && hello.ParseFromString(header.body()) &&
                hello.protocol_version() == kProtocolVersion &&
                hello.server_nonce().size() == kNonceBytes;
    // Only the Hello: the harness answers the proof itself.
    bytes.resize(used);
    co_await asio::async_write(peer.socket(), asio::buffer(bytes), kTuple);
    pb::Frame proof_frame;
    Status s = co_await peer.Receive(&proof_frame, &data);
    if (s.IsTimedOut()) Fail("client neither sent a proof nor closed");
    pb::AuthProof proof;
    if (s.ok()) {
      if (!expect_ok) Fail("client answered a malformed Hello");
      if (!proof.ParseFromString(proof_frame.body()) ||
          proof.client_mac() !=
              ClientMac(kSecret, hello.server_nonce(), proof.client_nonce())) {
        Fail("client sent a wrong proof");
      }
      pb::AuthOk ok;
      ok.set_server_mac(ServerMac(kSecret, proof.client_nonce(), hello.server_nonce()));
      co_await peer.SendReply(ok);
    }
    co_await WriteAndHalfClose(peer, "");
  } else {
    co_await WriteAndHalfClose(peer, std::move(bytes));
  }
  co_await Drain(peer, &out.sent);
  co_await WaitFinished(out);
  if (out.status.IsTimedOut()) Fail("client side timed out: " + out.status.ToString());
  if (out.status.ok() != expect_ok) {
    Fail(std::string("client side ") + (out.status.ok() ? "accepted" : "refused") +
         (repair ? " a repaired handshake: " : " a fuzzed handshake: ") + out.status.ToString());
  }
}

}  // namespace
}  // namespace mr::fuzz

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  spdlog::set_level(spdlog::level::off);
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mr::fuzz;
  using namespace mr;
  if (size == 0) return 0;
  static asio::io_context io(1);
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) Fail("socketpair failed");
  tcp::socket a(io), b(io);
  a.assign(tcp::v4(), fds[0]);
  b.assign(tcp::v4(), fds[1]);
  Connection under_test(std::move(a), Options("under-test"));
  Connection peer(std::move(b), Options("peer"));
  std::string bytes(reinterpret_cast<const char*>(data) + 1, size - 1);
  const bool repair = data[0] & 2;
  bool done = false;
  auto task = (data[0] & 1) ? FuzzClient(under_test, peer, std::move(bytes), repair)
                            : FuzzServer(under_test, peer, std::move(bytes), repair);
  asio::co_spawn(io, std::move(task), [&](std::exception_ptr e) {
    if (e) Fail("harness coroutine threw");
    done = true;
  });
  io.restart();
  while (!done && io.run_one() > 0) {
  }
  if (!done) Fail("handshake stalled with no pending work");
  // Let the side under test finish its own coroutine before its Connection goes.
  io.restart();
  io.run();
  return 0;
}

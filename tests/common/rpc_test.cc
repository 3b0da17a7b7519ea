// Calls over real sockets on 127.0.0.1: unary calls and their errors, the
// handshake and its secret, malformed and oversized frames, streams of
// frames, and Stop(). SendFileRange is in rpc_send_file_test.cc; limits on
// unauthenticated peers, timeouts and the accept back-off in
// rpc_limits_test.cc; the fixture in rpc_fixture.h.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>

#include <spdlog/spdlog.h>

#include "common/auth.h"
#include "common/frame.h"
#include "common/rpc.h"
#include "proto/dfs.pb.h"
#include "tests/common/rpc_fixture.h"

namespace mr {
namespace {

using namespace std::chrono_literals;
using namespace asio::experimental::awaitable_operators;
using namespace rpc_testing;
using Clock = std::chrono::steady_clock;

TEST_F(RpcTest, UnaryRoundTrip) {
  // The basic path: connect, authenticate, request, reply, on one connection.
  MakeServer();
  Start();
  std::string peer;
  Status s = RunSync([&]() -> awaitable<Status> {
    HostPort address = Address();
    RpcOptions options = Options(kSecret);
    auto conn = co_await Connect(address, options);
    if (!conn.ok()) co_return conn.status();
    pb::PathRequest request;
    request.set_path("/a/b c");
    pb::ListReply reply;
    MR_CO_RETURN_IF_ERROR(co_await (*conn)->Call("test.Echo", request, &reply));
    if (reply.entries_size() != 1) co_return Status::Internal("want one entry");
    peer = reply.entries(0).name();
    // Several calls in sequence on the same connection.
    for (int i = 0; i < 5; ++i) {
      MR_CO_RETURN_IF_ERROR(co_await CallEcho(**conn, "/" + std::to_string(i)));
    }
    co_return Status::OK();
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(peer, "echo:/a/b c");
  EXPECT_EQ(server_->rejected_connections(), 0);
}

TEST_F(RpcTest, RequestBulkDataReachesHandler) {
  // Bulk bytes sent with a request arrive in call.data untouched.
  MakeServer().HandleUnary<pb::PathRequest, pb::ListReply>(
      "test.Size",
      [](const pb::PathRequest&, pb::ListReply* reply, ServerCall& call) -> awaitable<Status> {
        reply->add_entries()->set_name(std::to_string(call.data.size()) + ":" +
                                       call.data.substr(0, 3) +
                                       call.data.substr(call.data.size() - 3));
        co_return Status::OK();
      });
  Start();
  std::string got;
  Status s = RunSync([&]() -> awaitable<Status> {
    HostPort address = Address();
    RpcOptions options = Options(kSecret);
    auto conn = co_await Connect(address, options);
    if (!conn.ok()) co_return conn.status();
    std::string bulk(100000, 'x');
    bulk.replace(0, 3, "abc");
    bulk.replace(bulk.size() - 3, 3, "xyz");
    MR_CO_RETURN_IF_ERROR(co_await (*conn)->SendRequest("test.Size", pb::PathRequest(), bulk));
    pb::ListReply reply;
    MR_CO_RETURN_IF_ERROR(co_await (*conn)->ReceiveReply(&reply));
    got = reply.entries(0).name();
    co_return Status::OK();
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(got, "100000:abcxyz");
}

TEST_F(RpcTest, HandlerErrorArrivesWithCodeAndMessage) {
  // A remote failure must look to the caller like the same local Status.
  MakeServer().HandleUnary<pb::PathRequest, pb::ListReply>(
      "test.Fail",
      [](const pb::PathRequest& request, pb::ListReply*, ServerCall&) -> awaitable<Status> {
        co_return Status::FailedPrecondition("directory '" + request.path() + "' is not empty");
      });
  Start();
  Status remote;
  Status s = RunSync([&]() -> awaitable<Status> {
    HostPort address = Address();
    RpcOptions options = Options(kSecret);
    auto conn = co_await Connect(address, options);
    if (!conn.ok()) co_return conn.status();
    pb::PathRequest request;
    request.set_path("/d");
    pb::ListReply reply;
    remote = co_await (*conn)->Call("test.Fail", request, &reply);
    // An error reply is a normal reply: the connection goes on.
    co_return co_await CallEcho(**conn, "/after");
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(remote.IsFailedPrecondition()) << remote.ToString();
  EXPECT_EQ(remote.message(), "directory '/d' is not empty");
}

TEST_F(RpcTest, HandlerExceptionBecomesInternal) {
  // A throwing handler must not take the server down; the caller sees Internal.
  MakeServer().Handle("test.Throw", [](ServerCall&) -> awaitable<Status> {
    throw std::runtime_error("kaboom");
    co_return Status::OK();
  });
  Start();
  Status remote;
  Status s = RunSync([&]() -> awaitable<Status> {
    HostPort address = Address();
    RpcOptions options = Options(kSecret);
    auto conn = co_await Connect(address, options);
    if (!conn.ok()) co_return conn.status();
    pb::Empty reply;
    remote = co_await (*conn)->Call("test.Throw", pb::Empty(), &reply);
    co_return co_await CallEcho(**conn, "/after");
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(remote.code(), Status::Code::kInternal) << remote.ToString();
  EXPECT_NE(remote.message().find("kaboom"), std::string::npos) << remote.message();
}

TEST_F(RpcTest, UnknownMethodIsInvalidArgumentAndConnectionStaysUsable) {
  // A typo in a method name is the caller's error, not a reason to drop the link.
  MakeServer();
  Start();
  Status unknown;
  Status s = RunSync([&]() -> awaitable<Status> {
    HostPort address = Address();
    RpcOptions options = Options(kSecret);
    auto conn = co_await Connect(address, options);
    if (!conn.ok()) co_return conn.status();
    pb::ListReply reply;
    unknown = co_await (*conn)->Call("no.SuchMethod", pb::PathRequest(), &reply);
    co_return co_await CallEcho(**conn, "/still-works");
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(unknown.IsInvalidArgument()) << unknown.ToString();
  EXPECT_NE(unknown.message().find("no.SuchMethod"), std::string::npos);
}

TEST_F(RpcTest, MalformedRequestBodyIsProtocolErrorReply) {
  // A request body that does not parse is answered with an error, connection kept.
  MakeServer();
  Start();
  Status bad;
  Status s = RunSync([&]() -> awaitable<Status> {
    HostPort address = Address();
    RpcOptions options = Options(kSecret);
    auto conn = co_await Connect(address, options);
    if (!conn.ok()) co_return conn.status();
    pb::Frame frame;
    frame.set_method("test.Echo");
    frame.set_body(std::string("\x0f\x0f", 2));  // invalid wire type
    MR_CO_RETURN_IF_ERROR(co_await (*conn)->Send(frame));
    pb::ListReply reply;
    bad = co_await (*conn)->ReceiveReply(&reply);
    co_return co_await CallEcho(**conn, "/after");
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(bad.IsProtocolError()) << bad.ToString();
}

TEST_F(RpcTest, WrongSecretIsRejectedAndServerKeepsServing) {
  // A client without the secret gets PermissionDenied and is counted; others are unaffected.
  MakeServer();
  Start();
  Status s = ConnectAndEcho("wrong secret");
  EXPECT_TRUE(s.IsPermissionDenied()) << s.ToString();
  EXPECT_TRUE(WaitFor([&] { return server_->rejected_connections() == 1; }))
      << server_->rejected_connections();
  s = ConnectAndEcho(kSecret);
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(server_->rejected_connections(), 1);
}

TEST_F(RpcTest, ServerWithOtherSecretFailsTheHandshake) {
  // Secrets must match on both sides: a client with "our" secret cannot use a foreign server.
  MakeServer(Options("the other cluster's secret"));
  Start();
  Status s = ConnectAndEcho(kSecret);
  EXPECT_TRUE(s.IsPermissionDenied()) << s.ToString();
  EXPECT_TRUE(WaitFor([&] { return server_->rejected_connections() == 1; }));
}

// How the hand-written server below answers an AuthProof.
enum class FakeAuth { kCorrect, kWrongSecret, kReflectClientMac, kOldProtocol };

// Accepts one connection and runs the server side of the handshake by hand,
// so the *client's* check of the server is exercised. Owns its acceptor.
awaitable<Status> FakeServer(tcp::acceptor acceptor, std::string secret, FakeAuth mode) {
  auto [aec, socket] = co_await acceptor.async_accept(kTuple);
  if (aec) co_return Status::Unavailable(aec.message());
  Connection conn(std::move(socket), Options(secret));
  pb::Hello hello;
  hello.set_protocol_version(mode == FakeAuth::kOldProtocol ? kProtocolVersion + 1
                                                            : kProtocolVersion);
  hello.set_server_nonce(RandomBytes(kNonceBytes));
  MR_CO_RETURN_IF_ERROR(co_await conn.SendReply(hello));
  if (mode != FakeAuth::kOldProtocol) {
    pb::AuthProof proof;
    MR_CO_RETURN_IF_ERROR(co_await conn.ReceiveReply(&proof));
    pb::AuthOk ok;
    switch (mode) {
      case FakeAuth::kCorrect:
        ok.set_server_mac(ServerMac(secret, proof.client_nonce(), hello.server_nonce()));
        break;
      case FakeAuth::kWrongSecret:
        ok.set_server_mac(ServerMac("guess", proof.client_nonce(), hello.server_nonce()));
        break;
      case FakeAuth::kReflectClientMac:
        ok.set_server_mac(proof.client_mac());
        break;
      case FakeAuth::kOldProtocol:
        break;
    }
    MR_CO_RETURN_IF_ERROR(co_await conn.SendReply(ok));
  }
  // Wait (bounded by the connection timeout) for the client to hang up.
  pb::Frame frame;
  std::string data;
  co_await conn.Receive(&frame, &data);
  co_return Status::OK();
}

TEST_F(RpcTest, ClientVerifiesTheServerKnowsTheSecret) {
  // Mutual auth: a server that accepts anyone but cannot prove the secret is refused.
  struct Case {
    FakeAuth mode;
    Status::Code want;
  };
  const Case cases[] = {
      {FakeAuth::kCorrect, Status::Code::kOk},  // control: the fake server is otherwise right
      {FakeAuth::kWrongSecret, Status::Code::kPermissionDenied},
      {FakeAuth::kReflectClientMac, Status::Code::kPermissionDenied},
      {FakeAuth::kOldProtocol, Status::Code::kProtocolError},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(static_cast<int>(c.mode));
    tcp::acceptor acceptor(io_, {asio::ip::make_address("127.0.0.1"), 0});
    const uint16_t port = acceptor.local_endpoint().port();
    auto fake_done = std::make_shared<std::promise<Status>>();
    asio::co_spawn(io_, FakeServer(std::move(acceptor), kSecret, c.mode),
                   [fake_done](std::exception_ptr e, Status s) {
                     fake_done->set_value(e ? Status::Internal("fake server threw") : s);
                   });
    Status s = RunSync([&]() -> awaitable<Status> {
      HostPort address{"127.0.0.1", port};
      RpcOptions options = Options(kSecret);
      auto conn = co_await Connect(address, options);
      co_return conn.status();
    });
    EXPECT_EQ(s.code(), c.want) << s.ToString();
    auto done = fake_done->get_future();
    ASSERT_EQ(done.wait_for(3s), std::future_status::ready);
    EXPECT_TRUE(done.get().ok());
  }
}

TEST_F(RpcTest, OversizedFrameBeforeHandshakeClosesOnlyThatConnection) {
  // A prefix announcing 100 MB is refused from the prefix alone, before any allocation.
  MakeServer();
  Start();
  Status s = RunSync([&]() -> awaitable<Status> {
    MR_CO_ASSIGN_OR_RETURN(tcp::socket raw, co_await RawConnect(server_->port()));
    char prefix[kFramePrefixBytes];
    EncodeFramePrefix({0, 100u << 20}, prefix);
    MR_CO_RETURN_IF_ERROR(co_await WriteRaw(raw, std::string(prefix, sizeof prefix)));
    co_return co_await ExpectClosed(raw, 3s);
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(WaitFor([&] { return server_->rejected_connections() == 1; }));
  s = ConnectAndEcho(kSecret);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST_F(RpcTest, OversizedFrameAfterHandshakeClosesOnlyThatConnection) {
  // An authenticated peer is held to max_frame_bytes too; other clients carry on.
  MakeServer();
  Start();
  Status s = RunSync([&]() -> awaitable<Status> {
    HostPort address = Address();
    RpcOptions options = Options(kSecret);
    MR_CO_ASSIGN_OR_RETURN(auto conn, co_await Connect(address, options));
    // A second, well-behaved client connected at the same time.
    MR_CO_ASSIGN_OR_RETURN(auto other, co_await Connect(address, options));
    char prefix[kFramePrefixBytes];
    EncodeFramePrefix({16, 100u << 20}, prefix);
    MR_CO_RETURN_IF_ERROR(co_await WriteRaw(conn->socket(), std::string(prefix, sizeof prefix)));
    MR_CO_RETURN_IF_ERROR(co_await ExpectClosed(conn->socket(), 3s));
    co_return co_await CallEcho(*other, "/other");
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(server_->rejected_connections(), 0);  // it had authenticated
  s = ConnectAndEcho(kSecret);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST_F(RpcTest, RepliesPastMaxFrameBytesReachTheClientUpToMaxReplyBytes) {
  // A job of 10,000 maps has a record past max_frame_bytes: replies may be
  // larger than requests (max_reply_bytes), on both sides; past that, the
  // server refuses to send and the client's call fails, not the server.
  RpcOptions options = Options(kSecret);
  options.max_frame_bytes = 256 << 10;
  options.max_reply_bytes = 1 << 20;
  MakeServer(options).HandleUnary<pb::PathRequest, pb::ListReply>(
      "test.Big", [](const pb::PathRequest& request, pb::ListReply* reply, ServerCall&) -> awaitable<Status> {
        const size_t bytes = std::stoul(request.path());
        reply->add_entries()->set_name(std::string(bytes, 'x'));
        co_return Status::OK();
      });
  Start();
  const auto call = [&](size_t reply_bytes, std::string padding) {
    return RunSync([&]() -> awaitable<Status> {
      MR_CO_ASSIGN_OR_RETURN(auto conn, co_await Connect(Address(), options));
      pb::PathRequest request;
      request.set_path(std::to_string(reply_bytes) + padding);
      pb::ListReply reply;
      MR_CO_RETURN_IF_ERROR(co_await conn->Call("test.Big", request, &reply));
      if (reply.entries_size() != 1 || reply.entries(0).name().size() != reply_bytes) {
        co_return Status::Internal("a reply of the wrong size");
      }
      co_return co_await CallEcho(*conn, "/after");  // the connection still works
    });
  };
  Status s = call(768 << 10, "");  // 3 × max_frame_bytes
  EXPECT_TRUE(s.ok()) << s.ToString();
  s = call(2 << 20, "");  // past max_reply_bytes: refused by the server
  EXPECT_FALSE(s.ok());
  s = call(16, " " + std::string(300 << 10, 'p'));  // a request is held to max_frame_bytes
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(ConnectAndEcho(kSecret).ok());
}

TEST_F(RpcTest, AConnectionDoesNotKeepTheBuffersOfARareLargeFrame) {
  // A server of thousands of connections must not keep, on each, the
  // buffer of the largest frame it ever sent or received on it.
  MakeServer().HandleUnary<pb::PathRequest, pb::ListReply>(
      "test.Big", [](const pb::PathRequest& request, pb::ListReply* reply, ServerCall& call) -> awaitable<Status> {
        if (request.path() == "retained") {
          reply->add_entries()->set_name(std::to_string(call.conn.retained_header_bytes()));
        } else {
          reply->add_entries()->set_name(std::string(std::stoul(request.path()), 'x'));
        }
        co_return Status::OK();
      });
  Start();
  size_t server_kept = 0, client_kept = 0;
  Status s = RunSync([&]() -> awaitable<Status> {
    MR_CO_ASSIGN_OR_RETURN(auto conn, co_await Connect(Address(), Options(kSecret)));
    pb::PathRequest request;
    pb::ListReply reply;
    request.set_path(std::to_string(1 << 20));
    MR_CO_RETURN_IF_ERROR(co_await conn->Call("test.Big", request, &reply));
    request.set_path("retained");
    MR_CO_RETURN_IF_ERROR(co_await conn->Call("test.Big", request, &reply));
    server_kept = std::stoul(reply.entries(0).name());
    client_kept = conn->retained_header_bytes();
    co_return Status::OK();
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_LE(server_kept, 2 * kKeptHeaderBytes) << "the 1 MiB reply's buffer was kept";
  EXPECT_LE(client_kept, 2 * kKeptHeaderBytes);
}

TEST_F(RpcTest, MalformedHeaderClosesOnlyThatConnection) {
  // A valid prefix followed by bytes that are not a Frame ends that connection only.
  MakeServer();
  Start();
  Status s = RunSync([&]() -> awaitable<Status> {
    HostPort address = Address();
    RpcOptions options = Options(kSecret);
    MR_CO_ASSIGN_OR_RETURN(auto conn, co_await Connect(address, options));
    MR_CO_ASSIGN_OR_RETURN(auto other, co_await Connect(address, options));
    const std::string garbage = "\x0f\x0f\x0f\x0f";  // wire type 7 does not exist
    char prefix[kFramePrefixBytes];
    EncodeFramePrefix({static_cast<uint32_t>(garbage.size()), 0}, prefix);
    MR_CO_RETURN_IF_ERROR(
        co_await WriteRaw(conn->socket(), std::string(prefix, sizeof prefix) + garbage));
    MR_CO_RETURN_IF_ERROR(co_await ExpectClosed(conn->socket(), 3s));
    co_return co_await CallEcho(*other, "/other");
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
  s = ConnectAndEcho(kSecret);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST_F(RpcTest, MalformedHeaderBeforeHandshakeIsRejected) {
  // Garbage in place of the AuthProof frame fails the handshake and closes.
  MakeServer();
  Start();
  Status s = RunSync([&]() -> awaitable<Status> {
    MR_CO_ASSIGN_OR_RETURN(tcp::socket raw, co_await RawConnect(server_->port()));
    char prefix[kFramePrefixBytes];
    EncodeFramePrefix({3, 0}, prefix);
    MR_CO_RETURN_IF_ERROR(
        co_await WriteRaw(raw, std::string(prefix, sizeof prefix) + "\xff\xff\xff"));
    co_return co_await ExpectClosed(raw, 3s);
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(WaitFor([&] { return server_->rejected_connections() == 1; }));
  EXPECT_TRUE(ConnectAndEcho(kSecret).ok());
}

TEST_F(RpcTest, SilentPeerIsClosedAfterTimeout) {
  // A peer that connects and never speaks must not hold a server connection forever.
  MakeServer(Options(kSecret, /*timeout_ms=*/300));
  Start();
  std::chrono::milliseconds elapsed{};
  Status s = RunSync([&]() -> awaitable<Status> {
    const auto start = Clock::now();
    MR_CO_ASSIGN_OR_RETURN(tcp::socket raw, co_await RawConnect(server_->port()));
    Status closed = co_await ExpectClosed(raw, 3s);
    elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    co_return closed;
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_GE(elapsed, 250ms) << "closed before the timeout, not because of it";
  EXPECT_LT(elapsed, 3s);
  EXPECT_TRUE(WaitFor([&] { return server_->rejected_connections() == 1; }));
}

TEST_F(RpcTest, StreamingHandlerFramesArriveInOrderWithBulkIntact) {
  // Block reads stream several frames per request; order and bytes must be exact.
  constexpr size_t kMiB = 1 << 20;
  MakeServer().Handle("test.Stream", [](ServerCall& call) -> awaitable<Status> {
    call.replied = true;
    for (int i = 0; i < 3; ++i) {
      pb::ListReply frame;
      frame.add_entries()->set_name("part " + std::to_string(i));
      std::string bulk(kMiB, static_cast<char>('A' + i));
      bulk[kMiB - 1] = static_cast<char>(i);  // a distinct last byte too
      MR_CO_RETURN_IF_ERROR(co_await call.conn.SendReply(frame, bulk));
    }
    co_return Status::OK();
  });
  Start();
  Status s = RunSync([&]() -> awaitable<Status> {
    HostPort address = Address();
    RpcOptions options = Options(kSecret);
    MR_CO_ASSIGN_OR_RETURN(auto conn, co_await Connect(address, options));
    MR_CO_RETURN_IF_ERROR(co_await conn->SendRequest("test.Stream", pb::Empty()));
    for (int i = 0; i < 3; ++i) {
      pb::ListReply frame;
      std::string bulk;
      MR_CO_RETURN_IF_ERROR(co_await conn->ReceiveReply(&frame, &bulk));
      std::string want(kMiB, static_cast<char>('A' + i));
      want[kMiB - 1] = static_cast<char>(i);
      if (frame.entries_size() != 1 || frame.entries(0).name() != "part " + std::to_string(i)) {
        co_return Status::Internal("frame " + std::to_string(i) + ": " + frame.ShortDebugString());
      }
      if (bulk != want)
        co_return Status::Internal("bulk of frame " + std::to_string(i) + " differs");
    }
    // The stream ended cleanly: the connection serves the next request.
    co_return co_await CallEcho(*conn, "/after-stream");
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST_F(RpcTest, StreamFailingMidwayClosesTheConnection) {
  // The client cannot tell where a broken stream stopped, so the server hangs up.
  MakeServer().Handle("test.Broken", [](ServerCall& call) -> awaitable<Status> {
    call.replied = true;
    MR_CO_RETURN_IF_ERROR(co_await call.conn.SendReply(pb::Empty(), std::string(10, 'x')));
    co_return Status::IOError("disk vanished");
  });
  Start();
  Status second;
  Status s = RunSync([&]() -> awaitable<Status> {
    HostPort address = Address();
    RpcOptions options = Options(kSecret);
    MR_CO_ASSIGN_OR_RETURN(auto conn, co_await Connect(address, options));
    MR_CO_RETURN_IF_ERROR(co_await conn->SendRequest("test.Broken", pb::Empty()));
    pb::Empty frame;
    std::string bulk;
    MR_CO_RETURN_IF_ERROR(co_await conn->ReceiveReply(&frame, &bulk));
    second = co_await conn->ReceiveReply(&frame, &bulk);
    co_return Status::OK();
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(second.IsUnavailable()) << second.ToString();
}

TEST_F(RpcTest, StopClosesOpenConnectionsAndStopsAccepting) {
  // Shutdown must not leave clients waiting for their full timeout.
  MakeServer();
  Start();
  Status after_stop;
  Status reconnect;
  std::chrono::milliseconds elapsed{};
  Status s = RunSync([&]() -> awaitable<Status> {
    HostPort address = Address();
    RpcOptions options = Options(kSecret, /*timeout_ms=*/3000);
    MR_CO_ASSIGN_OR_RETURN(auto conn, co_await Connect(address, options));
    MR_CO_RETURN_IF_ERROR(co_await CallEcho(*conn, "/before"));
    const auto start = Clock::now();
    server_->Stop();
    pb::Empty frame;
    after_stop = co_await conn->ReceiveReply(&frame);
    elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start);
    auto again = co_await Connect(address, options);
    reconnect = again.status();
    co_return Status::OK();
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(after_stop.IsUnavailable()) << after_stop.ToString();
  EXPECT_LT(elapsed, 2s);
  EXPECT_FALSE(reconnect.ok());
}

TEST(RunSyncTest, ExceptionBecomesInternal) {
  // mrctl relies on RunSync never letting an exception escape.
  Status s = RunSync([]() -> awaitable<Status> {
    throw std::runtime_error("escaped");
    co_return Status::OK();
  });
  EXPECT_EQ(s.code(), Status::Code::kInternal);
  EXPECT_EQ(s.message(), "escaped");
}

}  // namespace
}  // namespace mr

// Hung peers over real sockets on 127.0.0.1 (docs/reliability.md, "A hung
// peer is let go at once"): a transfer connection (Connect with a stall
// bound) lets go of a peer that moves no byte for stall_ms, long before
// rpc_timeout_ms (10 minutes here, so nothing below passes by waiting it
// out); a slow start the caller marks kSlowStart is not a stall; and
// Peers().SetDead lets go at once of a peer the master declared dead, from
// another thread, and of nothing else. The fixture is in rpc_fixture.h.
#include <gtest/gtest.h>

#include <chrono>
#include <string>
#include <thread>

#include "common/peer_registry.h"
#include "common/rpc.h"
#include "proto/dfs.pb.h"
#include "tests/common/rpc_fixture.h"

namespace mr {
namespace {

using namespace std::chrono_literals;
using namespace asio::experimental::awaitable_operators;
using namespace rpc_testing;

constexpr int kHugeTimeoutMs = 600000;  // rpc_timeout_ms: never reached by a passing test
constexpr int kStallMs = 300;
constexpr auto kGuard = 20s;  // the test's own bound: far below kHugeTimeoutMs

// Runs `op`; TimedOut("still waiting") if it has not ended within kGuard
// (then the caller's connection is left to the fixture to close).
awaitable<Status> Guarded(awaitable<Status> op) {
  asio::steady_timer guard(co_await asio::this_coro::executor, kGuard);
  auto r = co_await (std::move(op) || guard.async_wait(kTuple));
  if (r.index() == 1) co_return Status::TimedOut("still waiting after 20 s");
  co_return std::get<0>(r);
}

class RpcStallTest : public RpcTest {
 protected:
  // A server whose "test.Stream" handler sends a header frame, waits
  // `before_first` ms, sends one data frame, then sends nothing more
  // (waiting up to 60 s) unless `end` is set, in which case it ends.
  void StartStreamServer(int before_first, bool end) {
    MakeServer(Options(kSecret, kHugeTimeoutMs))
        .Handle("test.Stream", [before_first, end](ServerCall& call) -> awaitable<Status> {
          call.replied = true;
          MR_CO_RETURN_IF_ERROR(co_await call.conn.SendReply(pb::Empty()));
          asio::steady_timer wait(co_await asio::this_coro::executor,
                                  std::chrono::milliseconds(before_first));
          co_await wait.async_wait(kTuple);
          MR_CO_RETURN_IF_ERROR(co_await call.conn.SendReply(pb::Empty(), std::string(1000, 'x')));
          if (end) co_return Status::OK();
          wait.expires_after(60s);
          co_await wait.async_wait(kTuple);
          co_return Status::OK();
        });
    Start();
  }

  // Connects with the stall bound, asks for the stream and reads the
  // header and the first data frame (kSlowStart); then `next` frames.
  Status ReadStream(int next, Status* last) {
    return RunSync([&]() -> awaitable<Status> {
      HostPort address = Address();
      RpcOptions options = Options(kSecret, kHugeTimeoutMs);
      MR_CO_ASSIGN_OR_RETURN(auto conn, co_await Connect(address, options, kStallMs));
      MR_CO_RETURN_IF_ERROR(co_await conn->SendRequest("test.Stream", pb::Empty()));
      pb::Empty frame;
      std::string data;
      MR_CO_RETURN_IF_ERROR(co_await conn->ReceiveReply(&frame, &data));
      MR_CO_RETURN_IF_ERROR(
          co_await conn->ReceiveReply(&frame, &data, Connection::Expect::kSlowStart));
      for (int i = 0; i < next; ++i) {
        *last = co_await Guarded(conn->ReceiveReply(&frame, &data));
        if (!last->ok()) break;
      }
      co_return Status::OK();
    });
  }
};

TEST_F(RpcStallTest, PeerThatAcceptsAndSendsNothingIsLetGoAfterTheStall) {
  // A listener that accepts (the kernel does, even for a frozen process)
  // and never sends its Hello.
  tcp::acceptor silent(io_, {asio::ip::make_address("127.0.0.1"), 0});
  const uint16_t port = silent.local_endpoint().port();
  Status connected = RunSync([&]() -> awaitable<Status> {
    const HostPort address{"127.0.0.1", port};
    RpcOptions options = Options(kSecret, kHugeTimeoutMs);
    auto connect = [&]() -> awaitable<Status> {
      auto conn = co_await Connect(address, options, kStallMs);
      co_return conn.status();
    };
    co_return co_await Guarded(connect());
  });
  EXPECT_TRUE(connected.IsUnavailable()) << connected.ToString();
  EXPECT_NE(connected.message().find("cluster.transfer_stall_ms"), std::string::npos)
      << connected.ToString();
  EXPECT_NE(connected.message().find("127.0.0.1:" + std::to_string(port)), std::string::npos)
      << "the peer is named: " << connected.ToString();
}

TEST_F(RpcStallTest, StreamThatStopsMidwayIsLetGoAfterTheStall) {
  StartStreamServer(/*before_first=*/0, /*end=*/false);
  Status next;
  Status s = ReadStream(/*next=*/1, &next);
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(next.IsUnavailable()) << next.ToString();
  EXPECT_NE(next.message().find("no byte moved from 127.0.0.1:"), std::string::npos)
      << next.ToString();
}

TEST_F(RpcStallTest, SlowStartIsNotAStall) {
  // The first data frame comes after five stall periods (a worker reading
  // the block from disk); the caller marked that wait kSlowStart.
  StartStreamServer(/*before_first=*/5 * kStallMs, /*end=*/true);
  Status unused;
  Status s = ReadStream(/*next=*/0, &unused);
  EXPECT_TRUE(s.ok()) << s.ToString();
}

TEST_F(RpcStallTest, PeerDeclaredDeadIsLetGoAtOnceAndUsedAgainOnceLive) {
  // The handler never sends its first data frame: a kSlowStart wait, which
  // only the master's verdict ends.
  StartStreamServer(/*before_first=*/60000, /*end=*/true);
  const std::string peer = Address().ToString();
  const std::string why = "worker w9 (" + peer + ") was declared dead by the master";
  std::thread verdict([&] {
    std::this_thread::sleep_for(500ms);
    Peers().SetDead({{"127.0.0.1:1", "another"}, {peer, why}});
  });
  Status s = RunSync([&]() -> awaitable<Status> {
    HostPort address = Address();
    RpcOptions options = Options(kSecret, kHugeTimeoutMs);
    MR_CO_ASSIGN_OR_RETURN(auto conn, co_await Connect(address, options, kStallMs));
    MR_CO_RETURN_IF_ERROR(co_await conn->SendRequest("test.Stream", pb::Empty()));
    pb::Empty frame;
    std::string data;
    MR_CO_RETURN_IF_ERROR(co_await conn->ReceiveReply(&frame, &data));
    co_return co_await Guarded(conn->ReceiveReply(&frame, &data, Connection::Expect::kSlowStart));
  });
  verdict.join();
  EXPECT_TRUE(s.IsUnavailable()) << s.ToString();
  EXPECT_NE(s.message().find(why), std::string::npos) << s.ToString();

  // While dead, it is not dialled; once the master lists it live, it is.
  Status refused = ConnectAndEcho(kSecret);
  EXPECT_TRUE(refused.IsUnavailable()) << refused.ToString();
  EXPECT_NE(refused.message().find(why), std::string::npos) << refused.ToString();
  Peers().SetDead({});
  Status again = ConnectAndEcho(kSecret);
  EXPECT_TRUE(again.ok()) << again.ToString();
}

TEST_F(RpcStallTest, ConnectionWithoutAStallBoundWaitsOnAsBefore) {
  // The master link and mrctl's calls have no stall bound: a reply slower
  // than a stall period still arrives.
  MakeServer(Options(kSecret, kHugeTimeoutMs))
      .Handle("test.Slow", [](ServerCall& call) -> awaitable<Status> {
        asio::steady_timer wait(co_await asio::this_coro::executor, 5 * std::chrono::milliseconds(kStallMs));
        co_await wait.async_wait(kTuple);
        co_return Status::OK();
      });
  Start();
  Status s = RunSync([&]() -> awaitable<Status> {
    HostPort address = Address();
    RpcOptions options = Options(kSecret, kHugeTimeoutMs);
    options.transfer_stall_ms = kStallMs;  // known, but not asked for by this Connect
    MR_CO_ASSIGN_OR_RETURN(auto conn, co_await Connect(address, options));
    pb::Empty reply;
    co_return co_await Guarded(conn->Call("test.Slow", pb::Empty(), &reply));
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
}

}  // namespace
}  // namespace mr

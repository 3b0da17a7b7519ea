// RpcServer's limits over real sockets on 127.0.0.1: what an
// unauthenticated peer may send and how long it may take, how many may wait
// in the handshake (in all and from one address), the idle timeout, and the
// accept back-off when the process runs out of file descriptors (in a child
// process). The fixture is in rpc_fixture.h.
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

// Reads until the peer closes; returns how many bytes came first (0 for a
// connection refused before the Hello). TimedOut if still open after `limit`.
awaitable<Result<int64_t>> BytesUntilClosed(tcp::socket& socket, std::chrono::milliseconds limit) {
  asio::steady_timer timer(socket.get_executor(), limit);
  char buf[4096];
  int64_t total = 0;
  for (;;) {
    auto r =
        co_await (socket.async_read_some(asio::buffer(buf), kTuple) || timer.async_wait(kTuple));
    if (r.index() == 1) co_return Status::TimedOut("peer kept the connection open");
    auto [ec, n] = std::get<0>(r);
    total += static_cast<int64_t>(n);
    if (ec) co_return total;
  }
}

// Resident set size of this process, from /proc/self/status (kB).
int64_t VmRssKb() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::stoll(line.substr(6));
  }
  return -1;
}

RpcOptions Caps(int timeout_ms, int handshake_ms, int max_unauth, int per_address) {
  RpcOptions o = Options(kSecret, timeout_ms);
  o.handshake_timeout_ms = handshake_ms;
  o.max_unauthenticated_connections = max_unauth;
  o.max_unauthenticated_per_address = per_address;
  return o;
}

TEST_F(RpcTest, PreAuthFrameLargerThanTheHandshakeIsRefusedWithoutAllocating) {
  // Issue 10 item 4: before authenticating, a peer may send only the small
  // handshake frames. A prefix announcing 4 MiB (within max_frame_bytes) must
  // close the connection at once, not make the server allocate 4 MiB and wait
  // for the bytes: 32 such peers would otherwise pin 128 MiB.
  constexpr int kPeers = 32;
  MakeServer(Caps(/*timeout_ms=*/20000, /*handshake_ms=*/20000, kPeers, kPeers));
  Start();
  const int64_t rss_before = VmRssKb();
  int64_t rss_during = 0;
  int closed = 0;
  Status s = RunSync([&]() -> awaitable<Status> {
    std::vector<tcp::socket> peers;
    char prefix[kFramePrefixBytes];
    EncodeFramePrefix({0, (4u << 20) - 64}, prefix);
    for (int i = 0; i < kPeers; ++i) {
      MR_CO_ASSIGN_OR_RETURN(tcp::socket raw, co_await RawConnect(server_->port()));
      MR_CO_RETURN_IF_ERROR(co_await WriteRaw(raw, std::string(prefix, sizeof prefix)));
      peers.push_back(std::move(raw));
    }
    // The server's timeouts are 20 s: a close within 2 s is the frame cap.
    const auto deadline = Clock::now() + 2s;
    for (auto& raw : peers) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
          std::max(deadline - Clock::now(), Clock::duration(1ms)));
      auto got = co_await BytesUntilClosed(raw, left);
      if (got.ok()) ++closed;
    }
    rss_during = VmRssKb();  // the unfixed server still holds 32 buffers here
    co_return Status::OK();
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(closed, kPeers);
  EXPECT_LT(rss_during - rss_before, 32 * 1024) << "kB grown while " << kPeers
                                                << " peers announced 4 MiB frames";
  EXPECT_TRUE(WaitFor([&] { return server_->rejected_connections() == kPeers; }))
      << server_->rejected_connections();
  EXPECT_TRUE(ConnectAndEcho(kSecret).ok());
}

TEST_F(RpcTest, AFullHandshakeBudgetClosesTheOldestAndLetsTheSecretsHolderIn) {
  // Issue 28 item 7: at most max_unauthenticated_connections peers sit in
  // the handshake, but a full budget locks nobody out: each newcomer is let
  // in and the oldest silent peer is closed (logged once per interval). On
  // the old code the newcomers, the secret's holder too, were refused.
  MakeServer(Caps(20000, 20000, /*max_unauth=*/4, /*per_address=*/4));
  Start();
  std::vector<int64_t> oldest_bytes;  // what each of the first silent peers read before its close
  Status legit_while_full;
  Status s = RunSync([&]() -> awaitable<Status> {
    std::vector<tcp::socket> silent;
    asio::steady_timer pause(co_await asio::this_coro::executor);
    for (int i = 0; i < 4; ++i) {
      MR_CO_ASSIGN_OR_RETURN(tcp::socket raw, co_await RawConnect(server_->port()));
      silent.push_back(std::move(raw));
      // Wait (bounded) until the server holds it, so admission order is known.
      for (int k = 0; k < 200 && server_->unauthenticated_connections() < i + 1; ++k) {
        pause.expires_after(10ms);
        co_await pause.async_wait(kTuple);
      }
    }
    for (int i = 0; i < 2; ++i) {
      MR_CO_ASSIGN_OR_RETURN(tcp::socket raw, co_await RawConnect(server_->port()));
      silent.push_back(std::move(raw));
      auto got = co_await BytesUntilClosed(silent[static_cast<size_t>(i)], 2s);
      oldest_bytes.push_back(got.ok() ? *got : -1);
    }
    HostPort address = Address();
    RpcOptions options = Options(kSecret);
    auto conn = co_await Connect(address, options);
    legit_while_full = conn.status();  // (no co_await inside ?: with GCC 12)
    if (conn.ok()) legit_while_full = co_await CallEcho(**conn, "/while-full");
    co_return Status::OK();  // the silent sockets close here
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(legit_while_full.ok()) << legit_while_full.ToString();
  ASSERT_EQ(oldest_bytes.size(), 2u);
  for (int64_t b : oldest_bytes) EXPECT_GT(b, 0) << "the oldest got its Hello, then was closed";
  EXPECT_EQ(server_->refused_connections(), 3);
  EXPECT_EQ(log_->Count("closed the oldest"), 1) << log_->All();
  EXPECT_TRUE(WaitFor([&] { return server_->unauthenticated_connections() == 0; }));
}

TEST_F(RpcTest, OneAddressPastItsCapChurnsOnlyItsOwnConnections) {
  // Item 4, and issue 28 item 7: one source address cannot take every
  // handshake slot; past its cap its own oldest is closed, and a peer on
  // another address (127.0.0.1 here) still gets in.
  MakeServer(Caps(20000, 20000, /*max_unauth=*/8, /*per_address=*/2));
  Start();
  int64_t first = -2;
  Status s = RunSync([&]() -> awaitable<Status> {
    MR_CO_ASSIGN_OR_RETURN(tcp::socket a, co_await RawConnect(server_->port(), "127.0.0.2"));
    asio::steady_timer pause(co_await asio::this_coro::executor);
    for (int i = 0; i < 200 && server_->unauthenticated_connections() < 1; ++i) {
      pause.expires_after(10ms);
      co_await pause.async_wait(kTuple);
    }
    MR_CO_ASSIGN_OR_RETURN(tcp::socket b, co_await RawConnect(server_->port(), "127.0.0.2"));
    for (int i = 0; i < 200 && server_->unauthenticated_connections() < 2; ++i) {
      pause.expires_after(10ms);
      co_await pause.async_wait(kTuple);
    }
    MR_CO_ASSIGN_OR_RETURN(tcp::socket c, co_await RawConnect(server_->port(), "127.0.0.2"));
    auto got = co_await BytesUntilClosed(a, 2s);
    first = got.ok() ? *got : -1;
    HostPort address = Address();
    RpcOptions options = Options(kSecret);
    MR_CO_ASSIGN_OR_RETURN(auto conn, co_await Connect(address, options));
    co_return co_await CallEcho(*conn, "/other-address");
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
  EXPECT_GT(first, 0) << "the first connection from 127.0.0.2 must be closed after its Hello";
  EXPECT_EQ(server_->refused_connections(), 1);
  EXPECT_EQ(log_->Count("max_unauthenticated_per_address"), 1) << log_->All();
}

// A stranger from `from`: holds an idle connection (reading the Hello) and
// opens another as soon as the server closes it, until *stop.
awaitable<void> ReopeningStranger(uint16_t port, std::string from, const bool* stop, int* opened) {
  asio::steady_timer pause(co_await asio::this_coro::executor);
  while (!*stop) {
    auto raw = co_await RawConnect(port, from);
    if (!raw.ok()) {
      pause.expires_after(10ms);
      co_await pause.async_wait(kTuple);
      continue;
    }
    ++*opened;
    while (!*stop) {
      auto got = co_await BytesUntilClosed(*raw, 100ms);
      if (got.ok()) break;  // the server closed it: open another
    }
  }
}

// Starts `per_address` ReopeningStrangers from each of `addresses` source
// addresses, 127.0.0.2 onwards, on this coroutine's executor.
awaitable<void> SpawnStrangers(uint16_t port, int addresses, int per_address, const bool* stop,
                               int* opened) {
  auto executor = co_await asio::this_coro::executor;
  for (int k = 0; k < addresses; ++k) {
    for (int i = 0; i < per_address; ++i) {
      asio::co_spawn(executor, ReopeningStranger(port, "127.0.0." + std::to_string(2 + k), stop, opened),
                     asio::detached);
    }
  }
}

// The calls of a client with the secret, each on a new connection.
struct SecretCalls {
  int served = 0;
  int failed = 0;
  std::string last_error;

  awaitable<void> CallOnce(HostPort address, RpcOptions options, std::string path) {
    auto conn = co_await Connect(address, options);
    Status call = conn.status();
    if (conn.ok()) call = co_await CallEcho(**conn, path);
    if (call.ok()) {
      ++served;
    } else {
      ++failed;
      last_error = call.ToString();
    }
  }
};

TEST_F(RpcTest, StrangersFromManyAddressesReopeningNeverLockOutTheSecretsHolder) {
  // Issue 28 item 7, reduced (the full size is the fault scenario
  // flood-addresses): 60 idle strangers from 10 addresses against a budget
  // of 16, each reopened as soon as it is dropped. Every one of 10 calls
  // from 127.0.0.1 with the secret gets in: with fewer stranger addresses
  // than the budget, some address always holds more than the caller's one.
  // On the old code, which refused newcomers while the budget was full,
  // they did not.
  MakeServer(Caps(20000, 20000, /*max_unauth=*/16, /*per_address=*/4));
  Start();
  bool stop = false;
  int opened = 0;
  SecretCalls calls;
  Status s = RunSync([&]() -> awaitable<Status> {
    co_await SpawnStrangers(server_->port(), /*addresses=*/10, /*per_address=*/6, &stop, &opened);
    asio::steady_timer pause(co_await asio::this_coro::executor);
    for (int i = 0; i < 200 && opened < 60; ++i) {  // every stranger in (bounded)
      pause.expires_after(10ms);
      co_await pause.async_wait(kTuple);
    }
    for (int i = 0; i < 10; ++i) co_await calls.CallOnce(Address(), Options(kSecret), "/flooded");
    stop = true;
    co_return Status::OK();
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_EQ(calls.served, 10) << "last error: " << calls.last_error;
  EXPECT_GT(opened, 60) << "the strangers were dropped and came back";
  EXPECT_LE(server_->unauthenticated_connections(), 16);
}

TEST_F(RpcTest, EvictionsOnAServerOfSeveralThreadsNeverBreakItsAcceptLoop) {
  // Issue 28 item 7, the race that had 816d123 reverted: mr-worker runs its
  // io_context on several threads (--threads), so an eviction that closed
  // the oldest stranger's socket from the accept loop's thread raced that
  // connection's own coroutine on another (under the full flood a worker
  // logged 'accept failed: Bad file descriptor' and died). Here 24 idle
  // strangers from 4 addresses, each reopened as soon as it is dropped,
  // churn a budget of 8 on four server threads for a few thousand
  // evictions, while a client with the secret keeps calling: every call is
  // served, accept() never fails, and the server still serves afterwards.
  // Run under -fsanitize=thread it also shows the data race on the socket.
  MakeServer(Caps(20000, 20000, /*max_unauth=*/8, /*per_address=*/4));
  AddServerThreads(3);
  Start();
  constexpr int64_t kEvictions = 3000;
  bool stop = false;
  int opened = 0;
  SecretCalls calls;
  Status s = RunSync([&]() -> awaitable<Status> {
    co_await SpawnStrangers(server_->port(), /*addresses=*/4, /*per_address=*/6, &stop, &opened);
    const auto deadline = Clock::now() + 15s;  // a bound, not an expectation
    while (server_->refused_connections() < kEvictions && Clock::now() < deadline) {
      co_await calls.CallOnce(Address(), Options(kSecret, /*timeout_ms=*/10000), "/churning");
    }
    stop = true;
    co_return Status::OK();
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_GE(server_->refused_connections(), kEvictions) << "the strangers did not churn enough";
  EXPECT_EQ(calls.failed, 0) << calls.served << " served; last error: " << calls.last_error;
  EXPECT_GT(calls.served, 0);
  EXPECT_EQ(server_->accept_errors(), 0);
  EXPECT_EQ(log_->Count("accept failed"), 0) << log_->All();
  EXPECT_TRUE(ConnectAndEcho(kSecret).ok()) << "the server stopped serving";
  EXPECT_TRUE(WaitFor([&] { return server_->unauthenticated_connections() == 0; }));
}

TEST_F(RpcTest, HandshakeMustFinishWithinHandshakeTimeout) {
  // Item 4: a peer that never authenticates is closed after
  // handshake_timeout_ms, long before the 20 s rpc_timeout_ms.
  MakeServer(Caps(/*timeout_ms=*/20000, /*handshake_ms=*/300, 64, 16));
  Start();
  Status silent, dripping;
  Status s = RunSync([&]() -> awaitable<Status> {
    MR_CO_ASSIGN_OR_RETURN(tcp::socket raw, co_await RawConnect(server_->port()));
    silent = co_await ExpectClosed(raw, 5s);
    // A peer that keeps sending a byte at a time (each read making progress)
    // is held to the same deadline.
    MR_CO_ASSIGN_OR_RETURN(tcp::socket slow, co_await RawConnect(server_->port()));
    char prefix[kFramePrefixBytes];
    EncodeFramePrefix({100, 0}, prefix);
    MR_CO_RETURN_IF_ERROR(co_await WriteRaw(slow, std::string(prefix, sizeof prefix)));
    asio::steady_timer pause(co_await asio::this_coro::executor);
    for (int i = 0; i < 100; ++i) {
      pause.expires_after(50ms);
      co_await pause.async_wait(kTuple);
      auto [ec, n] = co_await asio::async_write(slow, asio::buffer("x", 1), kTuple);
      if (ec) break;
    }
    dripping = co_await ExpectClosed(slow, 1s);
    co_return Status::OK();
  });
  ASSERT_TRUE(s.ok()) << s.ToString();
  EXPECT_TRUE(silent.ok()) << silent.ToString();
  EXPECT_TRUE(dripping.ok()) << dripping.ToString();
  EXPECT_TRUE(WaitFor([&] { return server_->rejected_connections() == 2; }));
}

TEST_F(RpcTest, IdleAuthenticatedConnectionIsClosedAfterRpcTimeout) {
  // Item 4 check: after the handshake the idle limit is rpc_timeout_ms.
  MakeServer(Caps(/*timeout_ms=*/300, /*handshake_ms=*/300, 64, 16));
  Start();
  Status s = RunSync([&]() -> awaitable<Status> {
    HostPort address = Address();
    RpcOptions options = Options(kSecret, 5000);
    MR_CO_ASSIGN_OR_RETURN(auto conn, co_await Connect(address, options));
    MR_CO_RETURN_IF_ERROR(co_await CallEcho(*conn, "/once"));
    co_return co_await ExpectClosed(conn->socket(), 5s);
  });
  EXPECT_TRUE(s.ok()) << s.ToString();
}

// ---- accept back-off when the process runs out of file descriptors (item 5)

// Counts log lines that mention accept(); keeps nothing else.
class AcceptLineCounter : public spdlog::sinks::base_sink<std::mutex> {
 public:
  int64_t lines = 0;

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    lines += std::string_view(msg.payload.data(), msg.payload.size()).find("accept") !=
             std::string_view::npos;
  }
  void flush_() override {}
};

int CountOpenFds() {
  int n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n - 1;  // the iterator's own
}

double CpuSeconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec + (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// The child: a server whose RLIMIT_NOFILE leaves room for two connections.
// Sends its port on `out`, serves until a byte arrives on `in` (at most 30 s),
// then sends "accept_errors log_lines cpu_ms wall_ms".
[[noreturn]] void RunStarvedServer(int in, int out) {
  auto counter = std::make_shared<AcceptLineCounter>();
  spdlog::set_default_logger(std::make_shared<spdlog::logger>("child", counter));
  asio::io_context io;
  auto server = std::make_unique<RpcServer>(io.get_executor(), Options(kSecret), "starved");
  server->HandleUnary<pb::PathRequest, pb::ListReply>("test.Echo", Echo);
  if (!server->Listen({"127.0.0.1", 0}).ok()) ::_exit(3);
  server->Start();
  io.poll();
  rlimit limit{};
  limit.rlim_cur = limit.rlim_max = static_cast<rlim_t>(CountOpenFds() + 2);
  if (::setrlimit(RLIMIT_NOFILE, &limit) != 0) ::_exit(4);
  const uint16_t port = server->port();
  if (::write(out, &port, sizeof port) != sizeof port) ::_exit(5);
  const auto start = Clock::now();
  const double cpu_start = CpuSeconds();
  ::fcntl(in, F_SETFL, O_NONBLOCK);
  char byte;
  while (::read(in, &byte, 1) != 1 && Clock::now() - start < 30s) io.run_for(20ms);
  const auto wall_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count();
  const int64_t cpu_ms = static_cast<int64_t>((CpuSeconds() - cpu_start) * 1000);
  char report[128];
  const int n = std::snprintf(report, sizeof report, "%lld %lld %lld %lld",
                              static_cast<long long>(server->accept_errors()),
                              static_cast<long long>(counter->lines),
                              static_cast<long long>(cpu_ms), static_cast<long long>(wall_ms));
  if (::write(out, report, n) != n) ::_exit(6);
  ::_exit(0);
}

TEST(AcceptBackoffTest, OutOfFileDescriptorsBacksOffAndKeepsServing) {
  // Item 5: with RLIMIT_NOFILE exhausted, accept() fails with EMFILE while
  // the connection stays queued; the server must back off (not spin a core
  // and write a line per attempt), keep serving the connection it has, and
  // accept again once descriptors are free. Runs the server in a child
  // process so the lowered limit does not touch the test runner.
  int to_child[2], from_child[2];
  ASSERT_EQ(::pipe(to_child), 0);
  ASSERT_EQ(::pipe(from_child), 0);
  const pid_t pid = ::fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    ::close(to_child[1]);
    ::close(from_child[0]);
    RunStarvedServer(to_child[0], from_child[1]);
  }
  ::close(to_child[0]);
  ::close(from_child[1]);
  auto read_child = [&](char* buf, size_t size) -> ssize_t {
    pollfd p{from_child[0], POLLIN, 0};
    if (::poll(&p, 1, 40000) != 1) return -1;
    return ::read(from_child[0], buf, size);
  };
  uint16_t port = 0;
  ASSERT_EQ(read_child(reinterpret_cast<char*>(&port), sizeof port), sizeof port);

  Status during, after;
  Status s = RunSync([&]() -> awaitable<Status> {
    HostPort address{"127.0.0.1", port};
    RpcOptions options = Options(kSecret, /*timeout_ms=*/5000);
    MR_CO_ASSIGN_OR_RETURN(auto conn, co_await Connect(address, options));
    MR_CO_RETURN_IF_ERROR(co_await CallEcho(*conn, "/before"));
    // Queue more connections than the child has descriptors for.
    std::vector<tcp::socket> flood;
    for (int i = 0; i < 8; ++i) {
      MR_CO_ASSIGN_OR_RETURN(tcp::socket raw, co_await RawConnect(port));
      flood.push_back(std::move(raw));
    }
    asio::steady_timer pause(co_await asio::this_coro::executor, 1500ms);
    co_await pause.async_wait(kTuple);
    during = co_await CallEcho(*conn, "/during");
    flood.clear();  // frees the child's descriptors as it reads the closes
    auto again = co_await Connect(address, options);
    if (!again.ok()) {
      after = again.status();
    } else {
      after = co_await CallEcho(**again, "/after");
    }
    co_return Status::OK();
  });
  const char quit = 'q';
  ASSERT_EQ(::write(to_child[1], &quit, 1), 1);
  char report[128] = {};
  const ssize_t n = read_child(report, sizeof report - 1);
  int status = 0;
  ::waitpid(pid, &status, 0);
  ::close(to_child[1]);
  ::close(from_child[0]);
  ASSERT_TRUE(s.ok()) << s.ToString();
  ASSERT_GT(n, 0) << "child exit status " << status;
  long long errors = 0, lines = 0, cpu_ms = 0, wall_ms = 0;
  std::printf("child (accept_errors log_lines cpu_ms wall_ms): %s\n", report);
  ASSERT_EQ(std::sscanf(report, "%lld %lld %lld %lld", &errors, &lines, &cpu_ms, &wall_ms), 4)
      << report;
  EXPECT_TRUE(during.ok()) << during.ToString();
  EXPECT_TRUE(after.ok()) << after.ToString();
  EXPECT_GE(errors, 1) << "the child never ran out of descriptors: the test proves nothing";
  // Back-off from 100 ms doubling to 1 s: a handful of attempts in a few
  // seconds, where a spinning loop makes hundreds of thousands.
  EXPECT_LE(errors, 40) << report;
  EXPECT_LE(lines, 3) << report;
  // A spinning loop burns what CPU it gets (a third of a core on a loaded
  // test machine); backing off costs next to nothing.
  EXPECT_LT(cpu_ms * 5, wall_ms) << "cpu_ms wall_ms: " << cpu_ms << " " << wall_ms;
}

}  // namespace
}  // namespace mr

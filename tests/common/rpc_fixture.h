// What the RPC tests share (rpc_test.cc, rpc_limits_test.cc): real sockets
// on 127.0.0.1, a server on an io_context in a background thread (RpcTest),
// clients run with RunSync() in the test thread, raw-socket helpers for
// peers that misbehave, and a log sink to count what the server logged.
// Every wait is bounded by a Connection timeout or an explicit deadline.
#pragma once

#include <gtest/gtest.h>

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include "common/rpc.h"
#include "proto/dfs.pb.h"

namespace mr::rpc_testing {

using namespace std::chrono_literals;
using namespace asio::experimental::awaitable_operators;
using Clock = std::chrono::steady_clock;

inline constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);
inline constexpr const char* kSecret = "correct horse battery staple";

inline RpcOptions Options(std::string secret, int timeout_ms = 2000) {
  RpcOptions o;
  o.secret = std::move(secret);
  o.timeout_ms = timeout_ms;
  o.peer_name = "rpc_test";
  return o;
}

// Polls `pred` until true or `limit` passes.
inline bool WaitFor(const std::function<bool()>& pred, std::chrono::milliseconds limit = 2s) {
  const auto deadline = Clock::now() + limit;
  while (Clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(5ms);
  }
  return pred();
}

// Reads and discards until the peer closes. OK on EOF or reset; TimedOut if
// the connection is still open after `limit`.
inline awaitable<Status> ExpectClosed(tcp::socket& socket, std::chrono::milliseconds limit) {
  asio::steady_timer timer(socket.get_executor(), limit);
  char buf[4096];
  for (;;) {
    auto r =
        co_await (socket.async_read_some(asio::buffer(buf), kTuple) || timer.async_wait(kTuple));
    if (r.index() == 1) co_return Status::TimedOut("peer kept the connection open");
    auto [ec, n] = std::get<0>(r);
    if (ec) co_return Status::OK();  // eof, or reset: either way closed
  }
}

// A plain TCP socket connected to `port`, no handshake; from `from` (another
// loopback address stands for another host) when given.
inline awaitable<Result<tcp::socket>> RawConnect(uint16_t port, std::string from = "") {
  tcp::socket socket(co_await asio::this_coro::executor);
  if (!from.empty()) {
    boost::system::error_code ec;
    socket.open(tcp::v4(), ec);
    if (!ec) socket.bind({asio::ip::make_address(from), 0}, ec);
    if (ec) co_return Status::Unavailable("bind " + from + ": " + ec.message());
  }
  asio::steady_timer timer(socket.get_executor(), 2s);
  auto r = co_await (socket.async_connect({asio::ip::make_address("127.0.0.1"), port}, kTuple) ||
                     timer.async_wait(kTuple));
  if (r.index() == 1) co_return Status::TimedOut("raw connect");
  if (auto [ec] = std::get<0>(r); ec) co_return Status::Unavailable(ec.message());
  co_return std::move(socket);
}

inline awaitable<Status> WriteRaw(tcp::socket& socket, std::string bytes) {
  auto [ec, n] = co_await asio::async_write(socket, asio::buffer(bytes), kTuple);
  if (ec) co_return Status::Unavailable(ec.message());
  co_return Status::OK();
}



// Keeps every log line in memory, so tests can count what the server logged.
class CaptureSink : public spdlog::sinks::base_sink<std::mutex> {
 public:
  // Lines containing `needle`.
  int Count(const std::string& needle) {
    std::lock_guard lock(mutex_);
    int n = 0;
    for (const auto& l : lines_) n += l.find(needle) != std::string::npos;
    return n;
  }
  std::string All() {
    std::lock_guard lock(mutex_);
    std::string out;
    for (const auto& l : lines_) out += l + "\n";
    return out;
  }

 protected:
  void sink_it_(const spdlog::details::log_msg& msg) override {
    if (lines_.size() < 100000) lines_.emplace_back(msg.payload.data(), msg.payload.size());
  }
  void flush_() override {}

 private:
  std::vector<std::string> lines_;
};

// The echo handler used by most tests: entry name = "echo:" + path.
inline awaitable<Status> Echo(const pb::PathRequest& request, pb::ListReply* reply, ServerCall& call) {
  reply->add_entries()->set_name("echo:" + request.path());
  co_return Status::OK();
}

// One echo call on an open connection; checks the reply.
inline awaitable<Status> CallEcho(Connection& conn, std::string path) {
  pb::PathRequest request;
  request.set_path(path);
  pb::ListReply reply;
  MR_CO_RETURN_IF_ERROR(co_await conn.Call("test.Echo", request, &reply));
  if (reply.entries_size() != 1 || reply.entries(0).name() != "echo:" + path) {
    co_return Status::Internal("unexpected echo reply: " + reply.ShortDebugString());
  }
  co_return Status::OK();
}

class RpcTest : public ::testing::Test {
 protected:
  void SetUp() override {
    previous_logger_ = spdlog::default_logger();
    auto logger = std::make_shared<spdlog::logger>("rpc_test", log_);
    logger->set_level(spdlog::level::debug);
    spdlog::set_default_logger(logger);
    thread_ = std::thread([this] { io_.run(); });
  }

  void TearDown() override {
    if (server_) {
      server_->Stop();
      // Stop() posts its work; wait (bounded) until it has run.
      auto drained = std::make_shared<std::promise<void>>();
      asio::post(io_, [drained] { drained->set_value(); });
      drained->get_future().wait_for(2s);
    }
    work_.reset();
    io_.stop();
    thread_.join();
    for (auto& t : more_threads_) t.join();
    server_.reset();
    spdlog::set_default_logger(previous_logger_);
  }

  // A server with the echo handler; more handlers may be added before Start().
  RpcServer& MakeServer(RpcOptions options = Options(kSecret)) {
    server_ = std::make_unique<RpcServer>(io_.get_executor(), std::move(options), "test-server");
    server_->HandleUnary<pb::PathRequest, pb::ListReply>("test.Echo", Echo);
    return *server_;
  }

  void Start() {
    Status s = server_->Listen({"127.0.0.1", 0});
    ASSERT_TRUE(s.ok()) << s.ToString();
    ASSERT_NE(server_->port(), 0);
    server_->Start();
  }

  HostPort Address() const { return {"127.0.0.1", server_->port()}; }

  // Runs the server's io_context on `n` more threads, as mr-worker does
  // (--threads): its connections' coroutines then move between threads.
  void AddServerThreads(int n) {
    for (int i = 0; i < n; ++i) more_threads_.emplace_back([this] { io_.run(); });
  }

  // Connects with `secret` and runs one echo call.
  Status ConnectAndEcho(std::string secret) {
    return RunSync([&]() -> awaitable<Status> {
      HostPort address = Address();
      RpcOptions options = Options(secret);
      auto conn = co_await Connect(address, options);
      if (!conn.ok()) co_return conn.status();
      co_return co_await CallEcho(**conn, "/ping");
    });
  }

  asio::io_context io_;
  asio::executor_work_guard<asio::io_context::executor_type> work_ = asio::make_work_guard(io_);
  std::thread thread_;
  std::vector<std::thread> more_threads_;  // AddServerThreads()
  std::unique_ptr<RpcServer> server_;
  std::shared_ptr<CaptureSink> log_ = std::make_shared<CaptureSink>();
  std::shared_ptr<spdlog::logger> previous_logger_;
};

}  // namespace mr::rpc_testing

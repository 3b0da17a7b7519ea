#include "common/process.h"

#include <csignal>
#include <thread>
#include <vector>

#include <boost/asio/signal_set.hpp>
#include <spdlog/spdlog.h>

namespace mr {

void RunUntilSignal(boost::asio::io_context& io, int threads, std::function<void()> stop) {
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int signo) {
    if (ec) return;
    spdlog::info("signal {}: shutting down", signo);
    stop();
    io.stop();
  });
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back([&] { io.run(); });
  io.run();
  for (auto& t : pool) t.join();
  spdlog::info("stopped");
}

}  // namespace mr

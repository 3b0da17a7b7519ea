#include "common/process.h"

#include <sys/stat.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <thread>
#include <vector>

#include <boost/asio/signal_set.hpp>
#include <spdlog/spdlog.h>

#include "common/log.h"

namespace mr {

Status PreparePrivateDataDir(const std::string& data_dir) {
  ::umask(077);
  std::error_code ec;
  std::filesystem::create_directories(data_dir, ec);  // 0700 under the umask
  if (ec) return Status::IOError("cannot create '" + data_dir + "': " + ec.message());
  if (::chmod(data_dir.c_str(), 0700) != 0) {
    return Status::IOError("cannot make '" + data_dir + "' private: " + std::strerror(errno));
  }
  return Status::OK();
}

void RunUntilSignal(boost::asio::io_context& io, int threads, std::function<void()> stop) {
  boost::asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int signo) {
    if (ec) return;
    spdlog::info("signal {}: shutting down", signo);
    stop();
    io.stop();
  });
  // SIGHUP: logrotate moved the log file away; reopen it at its path.
  boost::asio::signal_set hangup(io, SIGHUP);
  std::function<void()> wait_hangup = [&] {
    hangup.async_wait([&](const boost::system::error_code& ec, int) {
      if (ec) return;
      if (Status s = ReopenLogFile(); !s.ok()) {
        spdlog::error("SIGHUP: {}", s.message());  // still the old file, if any
      } else {
        spdlog::info("SIGHUP: log file reopened");
      }
      wait_hangup();
    });
  };
  wait_hangup();
  std::vector<std::thread> pool;
  for (int i = 1; i < threads; ++i) pool.emplace_back([&] { io.run(); });
  io.run();
  for (auto& t : pool) t.join();
  spdlog::info("stopped");
}

}  // namespace mr

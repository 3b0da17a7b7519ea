// mr-master: the JobTracker + NameNode process.
#include <cstdio>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "common/config.h"
#include "common/log.h"
#include "common/process.h"
#include "common/tls.h"
#include "master/master.h"

int main(int argc, char** argv) {
  CLI::App app{"mr-master: membership, DFS namespace and (later) job scheduling"};
  std::string config_path, log_file, log_level;
  app.add_option("-c,--config", config_path, "cluster file (TOML)")->required();
  app.add_option("--log-file", log_file, "log file (default: <master.data_dir>/master.log)");
  app.add_option("--log-level", log_level, "trace|debug|info|warn|error (default: [log] level)");
  CLI11_PARSE(app, argc, argv);

  auto config = mr::LoadClusterConfig(config_path);
  if (!config.ok()) {
    std::fprintf(stderr, "mr-master: %s\n", config.status().message().c_str());
    return 2;
  }
  if (auto s = mr::InitProcessTls(*config, "master", config->master.datacenter, /*server=*/true,
                                  /*check_own=*/true);
      !s.ok()) {
    std::fprintf(stderr, "mr-master: %s\n", s.message().c_str());
    return 2;
  }
  if (auto s = mr::PreparePrivateDataDir(config->master.data_dir); !s.ok()) {
    std::fprintf(stderr, "mr-master: %s\n", s.message().c_str());
    return 1;
  }
  if (log_file.empty()) log_file = config->master.data_dir + "/master.log";
  if (auto s = mr::InitLogging("master", log_file, log_level.empty() ? config->log.level : log_level);
      !s.ok()) {
    std::fprintf(stderr, "mr-master: %s\n", s.message().c_str());
    return 2;
  }

  boost::asio::io_context io(1);  // one thread: the master's state needs no locks
  auto master = mr::master::Master::Create(*config, io);
  mr::Status started = master.ok() ? (*master)->Start() : master.status();
  if (!started.ok()) {
    spdlog::info("cannot start: {}", started.ToString());  // the log file only; stderr gets one line
    std::fprintf(stderr, "mr-master: %s\n", started.message().c_str());
    return started.IsInvalidArgument() ? 2 : 1;  // 2: the cluster file is wrong
  }
  mr::RunUntilSignal(io, 1, [&] { (*master)->Stop(); });
  return 0;
}

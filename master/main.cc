// mr-master: the JobTracker + NameNode process.
#include <cstdio>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "common/config.h"
#include "common/log.h"
#include "common/process.h"
#include "common/version.h"
#include "master/master.h"

int main(int argc, char** argv) {
  CLI::App app{
      "mr-master: the master of an mr cluster: worker membership and liveness, the DFS "
      "namespace (RocksDB in master.data_dir), and the JobTracker with its scheduling policy "
      "and job history. Workers and mrctl connect to master.address."};
  app.footer(
      "Runs until SIGINT or SIGTERM; SIGHUP reopens the log file (for logrotate). Under "
      "systemd (stderr is the journal) every line goes to the journal with its level and no "
      "log file is written.\n\n"
      "Exit status: 0 after a clean stop, 1 when it cannot start, 2 when the cluster file "
      "is wrong.\n\n"
      "Files: /etc/mr/cluster.toml (the cluster file, see docs/config.md), "
      "/var/lib/mr (the state directory of the packaged systemd unit mr-master.service).");
  app.set_version_flag("--version", mr::VersionLine("mr-master"));
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
  if (auto s = mr::PreparePrivateDataDir(config->master.data_dir); !s.ok()) {
    std::fprintf(stderr, "mr-master: %s\n", s.message().c_str());
    return 1;
  }
  if (log_file.empty()) log_file = config->master.data_dir + "/master.log";
  mr::LogOptions log_options = config->log;
  if (!log_level.empty()) log_options.level = log_level;
  if (auto s = mr::InitLogging("master", log_file, log_options); !s.ok()) {
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

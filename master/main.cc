// mr-master: the JobTracker + NameNode process.
#include <string>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "common/config.h"
#include "common/log.h"
#include "common/process.h"
#include "common/version.h"
#include "common/cli_support.h"
#include "common/tls.h"
#include "master/master.h"

int main(int argc, char** argv) {
  CLI::App app{
      "mr-master: the master of an mr cluster: worker membership and liveness, the DFS "
      "namespace (RocksDB in master.data_dir), and the JobTracker with its scheduling policy "
      "and job history. Workers and mrctl connect to master.address."};
  app.footer(std::string(mr::kDaemonSignalsAndLoggingHelp) +
             "Exit status:\n"
             "  0  stopped cleanly\n"
             "  1  could not start (address in use, data_dir not writable, ...)\n"
             "  2  bad usage, or the cluster file is wrong (one line says which key)\n\n"
             "Files:\n"
             "  /etc/mr/cluster.toml  the cluster file of the packaged unit mr-master.service\n"
             "  /var/lib/mr           the unit's state directory; master.data_dir lives under it");
  app.set_version_flag("--version", mr::VersionLine("mr-master"));
  std::string config_path, log_file, log_level;
  app.add_option("-c,--config", config_path, "cluster file (TOML)")->required();
  app.add_option("--log-file", log_file, "log file (default: <master.data_dir>/master.log)");
  app.add_option("--log-level", log_level, "trace|debug|info|warn|error (default: [log] level)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return mr::tools::ReportParseError(app, e, "mr-master");  // 2: bad usage
  }

  auto config = mr::LoadClusterConfig(config_path);
  if (!config.ok()) {
    mr::ReportStartupError("mr-master", config.status().message());
    return 2;
  }
  if (auto s = mr::InitProcessTls(*config, "master", config->master.datacenter, /*server=*/true,
                                  /*check_own=*/true);
      !s.ok()) {
    mr::ReportStartupError("mr-master", s.message());
    return 2;
  }
  if (auto s = mr::PreparePrivateDataDir(config->master.data_dir); !s.ok()) {
    mr::ReportStartupError("mr-master", s.message());
    return 1;
  }
  if (log_file.empty()) log_file = config->master.data_dir + "/master.log";
  mr::LogOptions log_options = config->log;
  if (!log_level.empty()) log_options.level = log_level;
  if (auto s = mr::InitLogging("master", log_file, log_options); !s.ok()) {
    mr::ReportStartupError("mr-master", s.message());
    return 2;
  }

  boost::asio::io_context io(1);  // one thread: the master's state needs no locks
  auto master = mr::master::Master::Create(*config, io);
  mr::Status started = master.ok() ? (*master)->Start() : master.status();
  if (!started.ok()) {
    mr::ReportStartupError("mr-master", started.message());
    return started.IsInvalidArgument() ? 2 : 1;  // 2: the cluster file is wrong
  }
  mr::RunUntilSignal(io, 1, [&] { (*master)->Stop(); });
  return 0;
}

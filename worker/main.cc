// mr-worker: the TaskTracker + DataNode process.
#include <string>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "common/config.h"
#include "common/log.h"
#include "common/process.h"
#include "common/version.h"
#include "worker/worker.h"

int main(int argc, char** argv) {
  CLI::App app{
      "mr-worker: a worker of an mr cluster: stores DFS blocks on local disk and serves them, "
      "runs map and reduce tasks, and serves map output to reducers. Its [[worker]] entry in "
      "the cluster file, chosen by --id, gives its address, datacenter, slots and data_dir."};
  app.footer(
      std::string(mr::kDaemonSignalsAndLoggingHelp) +
      "Exit status:\n"
      "  0  stopped cleanly\n"
      "  1  could not start (address in use, data_dir not writable, ...)\n"
      "  2  the cluster file is wrong, or has no worker with this id\n\n"
      "Files:\n"
      "  /etc/mr/cluster.toml  the cluster file of the packaged unit mr-worker@ID.service\n"
      "  /var/lib/mr           the unit's state directory; the worker's data_dir lives under it");
  app.set_version_flag("--version", mr::VersionLine("mr-worker"));
  std::string config_path, id, log_file, log_level;
  int threads = 2;
  app.add_option("-c,--config", config_path, "cluster file (TOML)")->required();
  app.add_option("--id", id, "this worker's id in the cluster file")->required();
  app.add_option("--threads", threads, "I/O threads")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  app.add_option("--log-file", log_file, "log file (default: <data_dir>/worker.log)");
  app.add_option("--log-level", log_level, "trace|debug|info|warn|error (default: [log] level)");
  CLI11_PARSE(app, argc, argv);

  auto config = mr::LoadClusterConfig(config_path);
  if (!config.ok()) {
    mr::ReportStartupError("mr-worker", config.status().message());
    return 2;
  }
  const mr::WorkerOptions* self = config->FindWorker(id);
  if (!self) {
    mr::ReportStartupError("mr-worker", "worker '" + id + "' is not in " + config_path);
    return 2;
  }
  if (auto s = mr::PreparePrivateDataDir(self->data_dir); !s.ok()) {
    mr::ReportStartupError("mr-worker", s.message());
    return 1;
  }
  if (log_file.empty()) log_file = self->data_dir + "/worker.log";
  mr::LogOptions log_options = config->log;
  if (!log_level.empty()) log_options.level = log_level;
  if (auto s = mr::InitLogging("worker " + id, log_file, log_options); !s.ok()) {
    mr::ReportStartupError("mr-worker", s.message());
    return 2;
  }

  boost::asio::io_context io(threads);
  auto worker = mr::worker::Worker::Create(*config, id, io);
  mr::Status started = worker.ok() ? (*worker)->Start() : worker.status();
  if (!started.ok()) {
    mr::ReportStartupError("mr-worker", started.message());
    return 1;
  }
  mr::RunUntilSignal(io, threads, [&] { (*worker)->Stop(); });
  return 0;
}

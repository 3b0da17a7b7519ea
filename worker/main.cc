// mr-worker: the TaskTracker + DataNode process.
#include <cstdio>
#include <filesystem>
#include <string>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "common/config.h"
#include "common/log.h"
#include "common/process.h"
#include "common/version.h"
#include "common/cli_support.h"
#include "worker/identity.h"
#include "common/tls.h"
#include "worker/worker.h"

int main(int argc, char** argv) {
  CLI::App app{
      "mr-worker: a worker of an mr cluster: stores DFS blocks on local disk and serves them, "
      "runs map and reduce tasks, and serves map output to reducers. It registers with the "
      "master under --id; a [[worker]] entry with that id in the cluster file, when there is "
      "one, gives its address, datacenter, slots and data_dir, and flags override them."};
  app.footer(
      std::string(mr::kDaemonSignalsAndLoggingHelp) +
      "Exit status:\n"
      "  0  stopped cleanly\n"
      "  1  could not start (address in use, data_dir not writable, ...)\n"
      "  2  bad usage, the cluster file or the flags are wrong (restarting cannot help)\n"
      "  3  the master refused this worker (another secret, TLS or labels than the master's):\n"
      "     the packaged unit starts it again 5 s later, so it rejoins once they agree\n\n"
      "Files:\n"
      "  /etc/mr/cluster.toml  the cluster file of the packaged unit mr-worker@ID.service\n"
      "  /var/lib/mr           the unit's state directory; the worker's data_dir lives under it");
  app.set_version_flag("--version", mr::VersionLine("mr-worker"));
  std::string config_path, log_file, log_level;
  mr::worker::WorkerFlags f;
  int threads = 2;
  app.add_option("-c,--config", config_path, "cluster file (TOML)")->required();
  app.add_option("--id", f.id, "this worker's id")->required();
  app.add_option("--datacenter", f.datacenter, "datacenter label (default: its [[worker]] entry)");
  app.add_option("--rack", f.rack, "rack label (default: its [[worker]] entry, or none)");
  app.add_option("--advertise", f.advertise, "HOST:PORT others connect to (default: its [[worker]] address)");
  app.add_option("--bind", f.bind, "HOST:PORT to listen on, e.g. 0.0.0.0:7100 (default: the advertised one)");
  app.add_option("--data-dir", f.data_dir, "blocks, tasks and log (default: its [[worker]] data_dir, or ./mr-data/<id>)");
  app.add_option("--map-slots", f.map_slots, "concurrent map tasks (default: entry, or 2)")->check(CLI::Range(1, 1 << 20));
  app.add_option("--reduce-slots", f.reduce_slots, "concurrent reduce tasks (default: entry, or 1)")->check(CLI::Range(0, 1 << 20));
  app.add_option("--capacity-bytes", f.capacity_bytes, "bytes of blocks it accepts, 0 = unlimited (default: entry, or 0)")
      ->check(CLI::NonNegativeNumber);
  app.add_option("--threads", threads, "I/O threads")->check(CLI::Range(1, 64))->capture_default_str();
  app.add_option("--log-file", log_file, "log file (default: <data_dir>/worker.log)");
  app.add_option("--log-level", log_level, "trace|debug|info|warn|error (default: [log] level)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return mr::tools::ReportParseError(app, e, "mr-worker");  // 2: bad usage
  }
  f.rack_given = app.count("--rack") > 0;

  auto config = mr::LoadClusterConfig(config_path);
  if (!config.ok()) {
    mr::ReportStartupError("mr-worker", config.status().message());
    return 2;
  }
  const std::string config_name = std::filesystem::path(config_path).filename().string();
  auto self = mr::worker::ResolveWorkerIdentity(*config, f, config_name);
  if (!self.ok()) {
    mr::ReportStartupError("mr-worker", self.status().message());
    return 2;
  }
  if (auto s = mr::InitProcessTls(*config, f.id, self->datacenter, /*server=*/true, /*check_own=*/true);
      !s.ok()) {
    mr::ReportStartupError("mr-worker", s.message());
    return 2;
  }
  if (auto s = mr::PreparePrivateDataDir(self->data_dir); !s.ok()) {
    mr::ReportStartupError("mr-worker", s.message());
    return 1;
  }
  if (log_file.empty()) log_file = self->data_dir + "/worker.log";
  mr::LogOptions log_options = config->log;
  if (!log_level.empty()) log_options.level = log_level;
  if (auto s = mr::InitLogging("worker " + f.id, log_file, log_options); !s.ok()) {
    mr::ReportStartupError("mr-worker", s.message());
    return 2;
  }

  boost::asio::io_context io(threads);
  auto worker = mr::worker::Worker::Create(*config, *self, io);
  if (worker.ok()) (*worker)->set_on_refused([&io] { io.stop(); });
  mr::Status started = worker.ok() ? (*worker)->Start() : worker.status();
  if (!started.ok()) {
    mr::ReportStartupError("mr-worker", started.message());
    return started.IsInvalidArgument() ? 2 : 1;
  }
  mr::RunUntilSignal(io, threads, [&] { (*worker)->Stop(); });
  if (mr::Status refused = (*worker)->refused(); !refused.ok()) {
    std::fprintf(stderr, "mr-worker: the master refused this worker: %s\n", refused.message().c_str());
    return 3;  // not 2: the master's side may change (a rotated secret), docs/deploy.md
  }
  return 0;
}

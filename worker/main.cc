// mr-worker: the TaskTracker + DataNode process.
#include <cstdio>

#include <CLI/CLI.hpp>
#include <spdlog/spdlog.h>

#include "common/config.h"
#include "common/log.h"
#include "common/process.h"
#include "common/tls.h"
#include "worker/worker.h"

int main(int argc, char** argv) {
  CLI::App app{"mr-worker: stores blocks and (later) runs map and reduce tasks"};
  std::string config_path, id, log_file, log_level;
  int threads = 2;
  app.add_option("-c,--config", config_path, "cluster file (TOML)")->required();
  app.add_option("--id", id, "this worker's id in the cluster file")->required();
  app.add_option("--threads", threads, "I/O threads")->check(CLI::Range(1, 64))->capture_default_str();
  app.add_option("--log-file", log_file, "log file (default: <data_dir>/worker.log)");
  app.add_option("--log-level", log_level, "trace|debug|info|warn|error (default: [log] level)");
  CLI11_PARSE(app, argc, argv);

  auto config = mr::LoadClusterConfig(config_path);
  if (!config.ok()) {
    std::fprintf(stderr, "mr-worker: %s\n", config.status().message().c_str());
    return 2;
  }
  const mr::WorkerOptions* self = config->FindWorker(id);
  if (!self) {
    std::fprintf(stderr, "mr-worker: worker '%s' is not in %s\n", id.c_str(), config_path.c_str());
    return 2;
  }
  if (auto s = mr::InitProcessTls(*config, id, self->datacenter, /*server=*/true, /*check_own=*/true);
      !s.ok()) {
    std::fprintf(stderr, "mr-worker: %s\n", s.message().c_str());
    return 2;
  }
  if (auto s = mr::PreparePrivateDataDir(self->data_dir); !s.ok()) {
    std::fprintf(stderr, "mr-worker: %s\n", s.message().c_str());
    return 1;
  }
  if (log_file.empty()) log_file = self->data_dir + "/worker.log";
  if (auto s = mr::InitLogging("worker " + id, log_file,
                               log_level.empty() ? config->log.level : log_level);
      !s.ok()) {
    std::fprintf(stderr, "mr-worker: %s\n", s.message().c_str());
    return 2;
  }

  boost::asio::io_context io(threads);
  auto worker = mr::worker::Worker::Create(*config, id, io);
  mr::Status started = worker.ok() ? (*worker)->Start() : worker.status();
  if (!started.ok()) {
    spdlog::info("cannot start: {}", started.ToString());  // the log file only; stderr gets one line
    std::fprintf(stderr, "mr-worker: %s\n", started.message().c_str());
    return 1;
  }
  mr::RunUntilSignal(io, threads, [&] { (*worker)->Stop(); });
  return 0;
}

// bench/master_scale: one real mr-master against an emulated fleet of
// thousands of workers (fleet.h), or with a big namespace. Started by
// bench/master_scale.sh for the sweep; the suite runs a small jobs run
// (tests/bench/master_scale_test.sh).
#include <CLI/CLI.hpp>
#include <spdlog/sinks/stdout_color_sinks.h>
#include <spdlog/spdlog.h>

#include "bench/master_scale/scenarios.h"

int main(int argc, char** argv) {
  mr::bench::ScaleOptions o;
  std::string run = "jobs";
  CLI::App app{"One real mr-master against an emulated fleet (docs/benchmarks.md, \"Master at scale\")"};
  app.add_option("run", run, "jobs | join | namespace")->check(CLI::IsMember({"jobs", "join", "namespace"}));
  app.add_option("--config", o.config_path, "cluster file of the master")->required();
  app.add_option("--master", o.master_binary, "the mr-master binary")->required();
  app.add_option("--log", o.log_path, "the master's log file")->required();
  app.add_option("--perf-out", o.perf_out, "perf record -g the master over the window into this file");
  app.add_option("--workers", o.fleet.workers, "emulated workers")->check(CLI::Range(1, 20000));
  app.add_option("--map-slots", o.fleet.map_slots)->check(CLI::Range(1, 64));
  app.add_option("--reduce-slots", o.fleet.reduce_slots)->check(CLI::Range(0, 64));
  app.add_option("--map-ms", o.fleet.map_ms, "mean drawn map time")->check(CLI::PositiveNumber);
  app.add_option("--reduce-ms", o.fleet.reduce_ms, "mean drawn merge time")->check(CLI::PositiveNumber);
  app.add_option("--seed", o.fleet.seed);
  app.add_option("--jobs", o.jobs)->check(CLI::Range(1, 10000));
  app.add_option("--maps", o.maps, "maps in all")->check(CLI::Range(1, 10000000));
  app.add_option("--reducers", o.reducers, "per job")->check(CLI::Range(0, 10000));
  app.add_option("--warmup-s", o.warmup_s)->check(CLI::Range(0, 3600));
  app.add_option("--window-s", o.window_s)->check(CLI::Range(1, 3600));
  app.add_option("--stop-workers", o.stop_workers, "stopped at the window's start")->check(CLI::Range(0, 1000));
  app.add_flag("--until-done", o.until_done, "after the window, wait for every job to end");
  app.add_flag("--check-views", o.fleet.check_views,
               "jobs: at the end, every worker's view of the members must be the master's list");
  app.add_option("--done-timeout-s", o.done_timeout_s)->check(CLI::Range(1, 36000));
  app.add_option("--files", o.files)->check(CLI::Range(int64_t{1}, int64_t{100000000}));
  app.add_option("--blocks-per-file", o.blocks_per_file)->check(CLI::Range(0, 100000));
  app.add_option("--dir-entries", o.dir_entries)->check(CLI::Range(int64_t{1}, int64_t{100000000}));
  app.add_option("--ops", o.ops, "operations per NNThroughputBenchmark phase")->check(CLI::Range(int64_t{1}, int64_t{100000000}));
  app.add_option("--clients", o.clients)->check(CLI::Range(1, 256));
  app.add_option("--build-clients", o.build_clients,
                 "namespace: connections building it (0 = --clients)")->check(CLI::Range(0, 256));
  CLI11_PARSE(app, argc, argv);
  if (o.jobs > o.maps) {
    std::fprintf(stderr, "master_scale: --jobs %d is more than --maps %d\n", o.jobs, o.maps);
    return 2;
  }
  // Figures go to stdout as one JSON line; every log line to stderr.
  spdlog::set_default_logger(spdlog::stderr_color_mt("master_scale"));
  spdlog::set_level(spdlog::level::warn);
  const bool ok = run == "jobs"   ? mr::bench::RunJobs(o)
                  : run == "join" ? mr::bench::RunJoin(o)
                                  : mr::bench::RunNamespace(o);
  return ok ? 0 : 1;
}

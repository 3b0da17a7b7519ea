// mr-workload: a scenario file's workload on a live cluster (sim/live_runner.h,
// docs/workloads.md). Parses arguments and calls RunLiveWorkload.
#include <CLI/CLI.hpp>
#include <filesystem>
#include <iostream>

#include "common/version.h"
#include "sim/live_report.h"
#include "sim/live_runner.h"

namespace {

// `name` beside this binary (installed), or in the build tree
// (../BUILD_DIR), else from $PATH.
std::string DefaultTool(const std::string& name, const std::string& build_dir) {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec).parent_path();
  for (const auto& p : {self / name, self.parent_path() / build_dir / name}) {
    if (!ec && std::filesystem::exists(p)) return p.string();
  }
  return name;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{
      "mr-workload: run a scenario file's workload (sim/scenarios/*.toml) on a live cluster"};
  app.set_version_flag("--version", mr::VersionLine("mr-workload"));
  app.require_subcommand(1);
  mr::sim::LiveRunOptions o;
  o.mrctl = DefaultTool("mrctl", "tools");
  o.mr_local = DefaultTool("mr-local", "jobs");
  std::vector<std::string> sets;
  auto* run = app.add_subcommand(
      "run",
      "generate and put the inputs, submit at the scenario's times, wait, write OUT/jobs.csv");
  run->add_option("FILE", o.file, "scenario file with a [live] table")->required();
  run->add_option("--scheduler", o.scheduler,
                  "switch the master to this policy first (mrctl scheduler set)");
  run->add_option("-p,--param", o.scheduler_params,
                  "a --scheduler parameter NAME=VALUE (repeatable)");
  run->add_option("--out", o.out_dir, "directory for jobs.csv, jobs.json (and inputs/)")
      ->capture_default_str();
  run->add_flag("--dry-run", o.dry_run,
                "print the job list (CSV, as `mr-sim jobs`) and run nothing");
  run->add_flag("--commands", o.commands, "with --dry-run: also print the mrctl commands");
  run->add_option("--config", o.config, "cluster file for mrctl (default: mrctl's discovery)");
  run->add_option("--mrctl", o.mrctl, "the mrctl binary")->capture_default_str();
  run->add_option("--dfs-root", o.dfs_root,
                  "DFS directory of the inputs and outputs (default: /workload/NAME/<unix ms>)");
  run->add_flag("--keep-inputs", o.keep_inputs, "keep the generated inputs in OUT/inputs");
  run->add_option("--timeout", o.timeout_s, "seconds the submitted jobs may take in all")
      ->capture_default_str();
  run->add_option("--before-jobs", o.before_jobs,
                  "shell command to run after the puts, just before the first submission");
  run->add_option("--after-jobs", o.after_jobs,
                  "shell command to run when every job has ended, before records and --verify");
  run->add_flag("--verify", o.verify,
                "compare every succeeded job's output with mr-local's on the same input");
  run->add_option("--mr-local", o.mr_local, "the oracle binary, for --verify")
      ->capture_default_str();
  run->add_option("--oracle-cache", o.oracle_cache,
                  "with --verify: reuse mr-local outputs kept in this directory across runs");
  run->add_option("--set", sets, "override a scenario key, e.g. --set live.time_scale=10");
  std::string report_dir, report_workload;
  auto* report = app.add_subcommand(
      "report", "turn bench/live_policies.sh's DIR into DIR/report.md, *.csv and *.svg");
  report->add_option("DIR", report_dir, "the --out directory of bench/live_policies.sh")
      ->required();
  report->add_option("--workload", report_workload, "the scenario file the runs used")->required();
  app.footer("Exit status: 0 every job succeeded, 1 a job or a cluster call failed, 2 bad input.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (e.get_exit_code() == 0) return app.exit(e);
    std::cerr << "mr-workload: " << e.what() << " (mr-workload --help for usage)\n";
    return 2;
  }
  if (report->parsed()) {
    const mr::Status s = mr::sim::WriteLiveReport(report_dir, report_workload);
    if (!s.ok()) {
      std::cerr << "mr-workload: " << s.ToString() << "\n";
      return s.IsIOError() ? 1 : 2;
    }
    std::cout << report_dir << "/report.md\n";
    return 0;
  }
  for (const std::string& s : sets) {
    auto ov = mr::sim::ParseOverride(s);
    if (!ov.ok()) {
      std::cerr << "mr-workload: " << ov.status().message() << "\n";
      return 2;
    }
    o.set.push_back(*ov);
  }
  return mr::sim::RunLiveWorkload(o, std::cout, std::cerr);
}

// The mr-sim command line (see cli.h).
#include "sim/cli.h"

#include <CLI/CLI.hpp>

#include "common/version.h"
#include "sim/output.h"
#include "sim/report.h"
#include "sim/runner.h"
#include "sim/scenario_file.h"
#include "sim/simulator.h"

namespace mr::sim {

int RunCli(int argc, const char* const* argv, std::ostream& out, std::ostream& err) {
  CLI::App app{"mr-sim: the scheduler/ policies on a simulated cluster of 30 to 500 nodes"};
  app.set_version_flag("--version", VersionLine("mr-sim"));
  app.footer(
      "mr-sim COMMAND --help describes a command; docs/simulator.md describes scenario files.\n\n"
      "Exit status:\n"
      "  0  success\n"
      "  2  a bad scenario file, option or output directory");
  app.require_subcommand(1);
  std::string file, csv_dir, report_dir;
  std::vector<std::string> sets, params, only, added, speculators;
  bool json = false, timing = false, quiet = false;
  auto add_run_options = [&](CLI::App* cmd) {
    cmd->add_option("FILE", file, "scenario file (sim/scenarios/*.toml)")->required();
    cmd->add_flag("--json", json, "print {\"runs\": [...]} instead of a table");
    cmd->add_option("--csv", csv_dir, "also write runs.csv, jobs.csv, backlog.csv into DIR");
    cmd->add_option("--set", sets, "override a scenario key, e.g. --set cluster.nodes=50");
    cmd->add_option("--only", only, "run only the scheduler with this label or name");
    cmd->add_option("--add-scheduler", added,
                    "add a policy to the scenario's list: NAME[:LABEL][,KEY=VALUE...]");
    cmd->add_option("--speculator", speculators,
                    "host this speculator beside every policy: NAME[,KEY=VALUE...] "
                    "(none, hadoop, late; replaces the file's [speculation])");
    cmd->add_flag("--timing", timing, "add wall-clock figures (output no longer reproducible)");
    cmd->add_flag("--quiet", quiet, "no progress lines on stderr");
  };
  CLI::App* run = app.add_subcommand("run", "run a scenario (with its own [sweep], if any)");
  add_run_options(run);
  CLI::App* sweep = app.add_subcommand("sweep", "run a scenario over parameter values");
  add_run_options(sweep);
  sweep->add_option("--param", params, "NAME=v1,v2,... (a dotted scenario key)")->required();
  CLI::App* report =
      app.add_subcommand("report", "turn DIR/*.json runs into DIR/report.md + SVG charts");
  report->add_option("DIR", report_dir, "directory of mr-sim run --json outputs")->required();
  CLI::App* jobs = app.add_subcommand(
      "jobs", "print the scenario's concrete job list (CSV), as mr-workload runs it live");
  jobs->add_option("FILE", file, "scenario file (sim/scenarios/*.toml)")->required();
  jobs->add_option("--set", sets, "override a scenario key, e.g. --set seed=2");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    // As mrctl: --help prints and exits 0; a usage error exits 2, here with
    // one line like every other mr-sim error.
    if (e.get_exit_code() == 0) return app.exit(e, out, err);
    err << "mr-sim: " << e.what() << " (mr-sim --help for usage)\n";
    return 2;
  }

  auto fail = [&err](const Status& s) {
    err << "mr-sim: " << s.message() << "\n";
    return 2;
  };
  if (report->parsed()) {
    Status s = WriteReport(report_dir);
    return s.ok() ? 0 : fail(s);
  }
  PlanOptions options;
  for (const std::string& s : sets) {
    auto o = ParseOverride(s);
    if (!o.ok()) return fail(o.status());
    options.set.push_back(*o);
  }
  for (const std::string& a : added) {
    auto o = ParseAddScheduler(a);
    if (!o.ok()) return fail(o.status());
    options.set.push_back(*o);
  }
  for (const std::string& a : speculators) {
    auto o = ParseSpeculatorOption(a);
    if (!o.ok()) return fail(o.status());
    options.set.push_back(*o);
  }
  if (jobs->parsed()) {
    auto sc = LoadScenario(file, options.set);
    if (!sc.ok()) return fail(sc.status());
    auto list = PlanJobs(*sc);
    if (!list.ok()) return fail(list.status().WithContext(file));
    out << JobListCsv(*list);
    return 0;
  }
  for (const std::string& p : params) {
    auto axis = ParseSweepAxis(p);
    if (!axis.ok()) return fail(axis.status());
    options.params.push_back(*axis);
  }
  options.only = only;
  options.timed = timing;
  if (!quiet)
    options.progress = [&err](const std::string& what) { err << "mr-sim: " << what << "\n"; };
  auto runs = RunScenarioFile(file, options);
  if (!runs.ok()) return fail(runs.status());
  out << (json ? RunsToJson(*runs) : RunsToText(*runs));
  if (!csv_dir.empty()) {
    Status s = WriteCsv(csv_dir, *runs);
    if (!s.ok()) return fail(s);
  }
  return 0;
}

}  // namespace mr::sim

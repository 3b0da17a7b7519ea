// mr-sim: run scheduling policies on a simulated cluster (docs/simulator.md).
//   mr-sim run FILE [--json] [--csv DIR] [--set KEY=VALUE]... [--only LABEL]...
//   mr-sim sweep FILE --param NAME=v1,v2,... [same options]
//   mr-sim report DIR
#include <CLI/CLI.hpp>

#include <iostream>

#include "sim/output.h"
#include "sim/report.h"
#include "sim/runner.h"

int main(int argc, char** argv) {
  CLI::App app{"mr-sim: the scheduler/ policies on a simulated cluster of 30 to 500 nodes"};
  app.require_subcommand(1);
  std::string file, csv_dir, report_dir;
  std::vector<std::string> sets, params, only;
  bool json = false, timing = false, quiet = false;
  auto add_run_options = [&](CLI::App* cmd) {
    cmd->add_option("FILE", file, "scenario file (sim/scenarios/*.toml)")->required();
    cmd->add_flag("--json", json, "print {\"runs\": [...]} instead of a table");
    cmd->add_option("--csv", csv_dir, "also write runs.csv, jobs.csv, backlog.csv into DIR");
    cmd->add_option("--set", sets, "override a scenario key, e.g. --set cluster.nodes=50");
    cmd->add_option("--only", only, "run only the scheduler with this label or name");
    cmd->add_flag("--timing", timing, "add wall-clock figures (output no longer reproducible)");
    cmd->add_flag("--quiet", quiet, "no progress lines on stderr");
  };
  CLI::App* run = app.add_subcommand("run", "run a scenario (with its own [sweep], if any)");
  add_run_options(run);
  CLI::App* sweep = app.add_subcommand("sweep", "run a scenario over parameter values");
  add_run_options(sweep);
  sweep->add_option("--param", params, "NAME=v1,v2,... (a dotted scenario key)")->required();
  CLI::App* report = app.add_subcommand("report", "turn DIR/*.json runs into DIR/report.md + SVG charts");
  report->add_option("DIR", report_dir, "directory of mr-sim run --json outputs")->required();
  CLI11_PARSE(app, argc, argv);

  auto fail = [](const mr::Status& s) {
    std::cerr << "mr-sim: " << s.message() << "\n";
    return 2;
  };
  if (report->parsed()) {
    mr::Status s = mr::sim::WriteReport(report_dir);
    return s.ok() ? 0 : fail(s);
  }
  mr::sim::PlanOptions options;
  for (const std::string& s : sets) {
    auto o = mr::sim::ParseOverride(s);
    if (!o.ok()) return fail(o.status());
    options.set.push_back(*o);
  }
  for (const std::string& p : params) {
    auto axis = mr::sim::ParseSweepAxis(p);
    if (!axis.ok()) return fail(axis.status());
    options.params.push_back(*axis);
  }
  options.only = only;
  options.timed = timing;
  if (!quiet) options.progress = [](const std::string& what) { std::cerr << "mr-sim: " << what << "\n"; };
  auto runs = mr::sim::RunScenarioFile(file, options);
  if (!runs.ok()) return fail(runs.status());
  std::cout << (json ? mr::sim::RunsToJson(*runs) : mr::sim::RunsToText(*runs));
  if (!csv_dir.empty()) {
    mr::Status s = mr::sim::WriteCsv(csv_dir, *runs);
    if (!s.ok()) return fail(s);
  }
  return 0;
}

// mr-local: runs a job in this process on local files, the single-process
// oracle for cluster output (jobs/local_runner.h).
//
//   mr-local JOB --input PATH... --output DIR [--reducers R] [--split-bytes N]
//            [--param k=v]...
//   mr-local streaming --mapper CMD [--reducer CMD] [--combiner CMD]
//            [--file PATH]... --input ... --output ...
//
// Exit codes: 0 success, 1 the job failed, 2 bad usage.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <vector>

#include "common/version.h"
#include "jobs/job.h"
#include "jobs/local_runner.h"
#include "jobs/local_streaming.h"

int main(int argc, char** argv) {
  using namespace mr::jobs;
  std::string footer = "Jobs:";
  for (const JobInfo* info : RegisteredJobs()) {
    footer += "\n  " + info->name + ": " + info->description;
    for (const ParamSpec& p : info->params) {
      footer += "\n      --param " + p.name + "=" +
                (p.default_value.empty() ? "..." : p.default_value) + "  " + p.help;
    }
  }
  CLI::App app{
      "mr-local: runs a MapReduce job in one process on local files, with the same job code "
      "as a cluster; the oracle that cluster output is compared with."};
  footer +=
      "\n\nExit status:\n"
      "  0  the job succeeded\n"
      "  1  the job failed while running\n"
      "  2  bad usage: unknown job or parameter, missing input, existing output";
  app.footer(footer);
  app.set_version_flag("--version", mr::VersionLine("mr-local"));
  std::string job, output;
  std::vector<std::string> inputs, params;
  StreamingFlags streaming;
  LocalRunOptions options;
  app.add_option("job", job, "job name (listed below)")->required();
  app.add_option("--input", inputs, "input files or directories")->required();
  app.add_option("--output", output, "output directory (must not exist)")->required();
  app.add_option("--reducers", options.reducers, "reduce tasks; 0 for a map-only job")
      ->capture_default_str();
  app.add_option("--split-bytes", options.split_bytes, "input bytes per map task")
      ->capture_default_str();
  app.add_option("--param", params, "job parameter k=v (repeatable)");
  AddStreamingFlags(app, streaming);
  CLI11_PARSE(app, argc, argv);

  for (const std::string& kv : params) {
    const size_t eq = kv.find('=');
    if (eq == std::string::npos) {
      std::fprintf(stderr, "mr-local: --param '%s' is not k=v\n", kv.c_str());
      return 2;
    }
    options.params[kv.substr(0, eq)] = kv.substr(eq + 1);
  }
  mr::Status s = RunLocalWithFiles(job, inputs, output, streaming, options);
  if (!s.ok()) {
    std::fprintf(stderr, "mr-local: %s\n", s.message().c_str());
    // 2: the request was wrong (unknown job or parameter, missing input,
    // existing output); 1: the job failed while running.
    return s.IsInvalidArgument() || s.IsNotFound() || s.IsAlreadyExists() ? 2 : 1;
  }
  return 0;
}

// The jobs the suite runs, taken from the job registry (jobs/registry.cc), so
// a job added there is run by the task-runner and cluster tests with no test
// edits. Used by tests/worker/task_runner_test.cc and
// tests/integration/job_integration_test.cc.
//
// A built-in job has hand-picked cases (kBuiltinCases: its input kind and
// params, e.g. Grep's pattern). A registered job the table does not name (a
// student's) runs on generated text with its default params, and with
// combiner=true and combiner=false when it has a `combiner` param. Its
// answer is compared with mr-local's (RunLocal), the oracle everywhere else;
// mr-local itself is checked against a shell pipeline in
// tests/jobs/local_runner_test.cc, and against jobs/oracles/NAME.sh when the
// job ships one (docs/writing-a-job.md, "Its oracle").
#pragma once

#include <set>
#include <string>
#include <vector>

#include "jobs/job.h"

namespace mr::testing {

struct RegisteredJobCase {
  std::string job;
  std::string input;    // "text", "web", "dna" or "docs" (a directory of text and web)
  jobs::Params params;  // besides the defaults
  // Non-empty when the job cannot be run without knowing more (a required
  // parameter): the test fails with this line.
  std::string problem;
};

// "k=v,k2=v2", as mrctl -p and the job fixtures take it.
inline std::string ParamsText(const jobs::Params& params) {
  std::string s;
  for (const auto& [k, v] : params) s += (s.empty() ? "" : ",") + k + "=" + v;
  return s;
}

// Every registered job's cases, in registry order.
inline std::vector<RegisteredJobCase> RegisteredJobCases() {
  static const std::vector<RegisteredJobCase> kBuiltinCases = {
      {"grep", "web", {{"pattern", "<[a-z]+>"}}, ""},
      {"invertedindex", "docs", {}, ""},
      {"permu", "dna", {}, ""},
      {"permu", "dna", {{"combiner", "true"}}, ""},
      {"sequencecount", "text", {}, ""},
      {"sort", "text", {}, ""},
      {"wordcount", "text", {}, ""},
      {"wordcount", "web", {{"combiner", "false"}}, ""},
  };
  std::vector<RegisteredJobCase> cases;
  for (const jobs::JobInfo* info : jobs::RegisteredJobs()) {
    // Hosts of code that comes with the submission (streaming, plugin) have
    // no code of their own to test here: tests/jobs/streaming_test.cc and
    // tests/integration/{streaming,plugin}_integration_test.cc run them
    // with users' commands and .so files.
    if (info->runs_user_code || info->code_hash_of != nullptr) continue;
    bool known = false;
    for (const RegisteredJobCase& c : kBuiltinCases) {
      if (c.job != info->name) continue;
      cases.push_back(c);
      known = true;
    }
    if (known) continue;
    bool has_combiner_param = false;
    std::string problem;
    for (const jobs::ParamSpec& p : info->params) {
      if (p.name == "combiner") has_combiner_param = true;
      if (p.default_value.empty() && p.help.rfind("required", 0) == 0) {
        problem = "job '" + info->name + "' has the required parameter '" + p.name +
                  "': add a case for it to kBuiltinCases in tests/jobs/job_cases.h";
      }
    }
    if (has_combiner_param) {
      cases.push_back({info->name, "text", {{"combiner", "true"}}, problem});
      cases.push_back({info->name, "text", {{"combiner", "false"}}, problem});
    } else {
      cases.push_back({info->name, "text", {}, problem});
    }
  }
  return cases;
}

}  // namespace mr::testing

// `mrctl job logs` (mrctl_logs.cc): task attempts' logs from the workers.
#pragma once

#include <functional>

#include <CLI/CLI.hpp>

#include "tools/mrctl_common.h"

namespace mr::tools {

// Adds `logs` under mrctl's `job` command.
void AddJobLogsCommand(CLI::App& job, Target& target, std::function<int()>* action);

}  // namespace mr::tools

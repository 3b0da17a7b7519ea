// Checking a plug-in job at submission (`mrctl job run ./myjob.so`): its
// .so is loaded in a child process, `mr-task --describe` (a plug-in's code
// never runs in mrctl: a bad one could crash it, and its static
// constructors run at load), which prints the plug-in's name and
// parameters. A .so that cannot be loaded, or a parameter it does not
// know, fails `job run` with one line before any attempt runs; the job is
// then listed under the plug-in's own name (the `plugin_name` parameter).
#pragma once

#include <string>

#include "common/status.h"
#include "jobs/job.h"

namespace mr::tools {

struct PluginDescription {
  std::string name;
  std::string description;
  std::vector<jobs::ParamSpec> params;
  bool open_params = false;
};

// Asks `mr-task --describe so_path` (mr-task beside this executable, or in
// the build tree's worker/). InvalidArgument with the loader's one line
// (no entry point, another API version, ...).
Result<PluginDescription> DescribePlugin(const std::string& so_path);

// Checks the plug-in's own parameters in `params` (those the job "plugin"
// does not reserve) against `plugin`, then sets `plugin_name`.
// InvalidArgument naming the plug-in and listing its parameters.
Status CheckPluginParams(const PluginDescription& plugin, jobs::Params* params);

}  // namespace mr::tools

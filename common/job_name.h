// The name a job is listed under (job list, job show, the status pages):
// a plug-in job's own name, which mrctl found at submission (its
// `plugin_name` parameter; tools/plugin_describe.h), else the registered
// job's name.
#pragma once

#include <string>

#include "proto/job.pb.h"

namespace mr::master {

inline std::string ShownJobName(const pb::JobSpec& spec) {
  if (spec.job() == "plugin") {
    auto it = spec.params().find("plugin_name");
    if (it != spec.params().end() && !it->second.empty()) return it->second;
  }
  return spec.job();
}

}  // namespace mr::master

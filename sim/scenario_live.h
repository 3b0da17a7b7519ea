// Internal to sim/: reads a scenario file's [live] table into
// Scenario::live (scenario_live.cc documents the table). Called by
// ParseScenario after the job types are read.
#pragma once

#include <toml++/toml.h>

#include "common/status.h"
#include "sim/scenario.h"

namespace mr::sim {

// InvalidArgument naming the key for an unknown key, a wrong type, an
// out-of-range value, or a live job of an unknown or repeated type.
Status ReadLive(const toml::table& root, Scenario* sc);

}  // namespace mr::sim

// Scenario files: TOML text -> Scenario, strictly (an unknown key, a wrong
// type or an out-of-range value is InvalidArgument naming the key by its
// full path, "workload.load must be in [0, 10] (got 12)"), with overrides
// applied to the TOML before it is read — which is how `mr-sim sweep
// --param` and the scenario's own [sweep] table work, and how tests run a
// shipped scenario at a reduced size. The format is docs/simulator.md,
// "Writing a scenario".
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "sim/scenario.h"

namespace mr::sim {

// KEY=VALUE: a dotted path into the file ("workload.load",
// "schedulers.0.params.delay_ms") and a TOML value ("0.6", "true",
// "\"fair\""; text that is not TOML is taken as a string).
struct Override {
  std::string key;
  std::string value;
};

// Parses `text` (`origin` names it in errors; `dir` is where relative trace
// paths start) after applying `overrides` in order. Checks every scheduler
// name and its parameters against the registry.
Result<Scenario> ParseScenario(const std::string& text, const std::string& origin,
                               const std::string& dir, const std::vector<Override>& overrides);

// Reads and parses a file.
Result<Scenario> LoadScenario(const std::string& path, const std::vector<Override>& overrides);

// Reads a whole file.
Result<std::string> ReadTextFile(const std::string& path);

// "KEY=VALUE" -> Override; InvalidArgument without '='.
Result<Override> ParseOverride(const std::string& text);

// mr-sim --add-scheduler "NAME[:LABEL][,KEY=VALUE...]" -> the override that
// appends that row to the scenario's [[schedulers]] (key "schedulers.+"; a
// "+" index appends to an array). The label defaults to the name; a VALUE
// is read as TOML, else as a string. InvalidArgument for a malformed text;
// the name and parameters are checked against the registry with the rest of
// the file. Note: an override of schedulers.N.name drops the row's file
// label unless schedulers.N.label is also set.
Result<Override> ParseAddScheduler(const std::string& text);

// mr-sim --speculator "NAME[,KEY=VALUE...]" -> the override that replaces
// the scenario's [speculation] table (key "speculation"). A row's own
// `speculation` still wins for that row. Checked like --add-scheduler.
Result<Override> ParseSpeculatorOption(const std::string& text);

}  // namespace mr::sim

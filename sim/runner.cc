// The run plan of a scenario file (see runner.h).
#include "sim/runner.h"

#include <algorithm>
#include <sstream>

#include "sim/simulator.h"

namespace mr::sim {

Result<SweepAxis> ParseSweepAxis(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0 || eq + 1 == text.size()) {
    return Status::InvalidArgument("expected NAME=v1,v2,... (got '" + text + "')");
  }
  SweepAxis axis{text.substr(0, eq), {}};
  std::istringstream in(text.substr(eq + 1));
  for (std::string v; std::getline(in, v, ',');) {
    if (v.empty()) return Status::InvalidArgument("empty value in '" + text + "'");
    axis.second.push_back(v);
  }
  return axis;
}

Result<std::vector<RunResult>> RunScenarioFile(const std::string& path, const PlanOptions& options) {
  auto base = LoadScenario(path, options.set);
  if (!base.ok()) return base.status();
  // The file's axes, less those --set pins, then the --param axes.
  std::vector<SweepAxis> axes;
  for (const SweepAxis& a : base->sweep) {
    const bool pinned = std::any_of(options.set.begin(), options.set.end(),
                                    [&](const Override& o) {
                                      return o.key == a.first || a.first.rfind(o.key + ".", 0) == 0;
                                    });
    if (!options.no_sweep && !pinned) axes.push_back(a);
  }
  for (const SweepAxis& p : options.params) {
    auto it = std::find_if(axes.begin(), axes.end(), [&](const SweepAxis& a) { return a.first == p.first; });
    if (it != axes.end()) {
      it->second = p.second;
    } else {
      axes.push_back(p);
    }
  }
  for (const std::string& only : options.only) {
    const bool known = std::any_of(base->schedulers.begin(), base->schedulers.end(),
                                   [&](const SchedulerRun& s) { return s.label == only || s.name == only; });
    if (!known) return Status::InvalidArgument(path + ": no scheduler labelled or named '" + only + "'");
  }

  std::vector<RunResult> runs;
  std::vector<size_t> at(axes.size(), 0);  // odometer over the axes, last one fastest
  while (true) {
    std::vector<Override> overrides = options.set;
    std::map<std::string, std::string> sweep;
    for (size_t i = 0; i < axes.size(); ++i) {
      overrides.push_back({axes[i].first, axes[i].second[at[i]]});
      sweep[axes[i].first] = axes[i].second[at[i]];
    }
    auto sc = LoadScenario(path, overrides);
    if (!sc.ok()) return sc.status();
    auto workload = MakeWorkload(*sc);
    if (!workload.ok()) return workload.status().WithContext(path);
    for (const SchedulerRun& s : sc->schedulers) {
      if (!options.only.empty() &&
          std::find_if(options.only.begin(), options.only.end(), [&](const std::string& o) {
            return o == s.label || o == s.name;
          }) == options.only.end()) {
        continue;
      }
      if (options.progress) {
        std::string what = sc->name + " / " + s.label;
        for (const auto& [k, v] : sweep) what += " " + k + "=" + v;
        options.progress(what);
      }
      auto r = RunOne(*sc, *workload, s, options.timed);
      if (!r.ok()) return r.status();
      r->sweep = sweep;
      runs.push_back(std::move(r).value());
    }
    size_t i = axes.size();
    while (i > 0 && ++at[i - 1] == axes[i - 1].second.size()) at[--i] = 0;
    if (i == 0) break;
  }
  return runs;
}

}  // namespace mr::sim

// The [live] table of a scenario file: what mr-workload needs to run the
// same workload on a live cluster (docs/workloads.md). mr-sim reads and
// checks it but never uses it.
//
//   [live]
//   block_mb = 0.25                  # live DFS block size
//   time_scale = 50                  # submit times ÷ 50
//   datacenters = ["dc1", "dc2"]     # job datacenter 0, 1, ... (default: the cluster's, sorted)
//   [[live.jobs]]
//   type = "grep"                    # a [[job_types]] name
//   job = "grep"                     # the registered job
//   input = "web"                    # text | web | dna (default: the type's input_type)
//   params = { pattern = "<[a-z]+>" }
#include "sim/scenario_live.h"

#include "sim/scenario_reader.h"

namespace mr::sim {

using scenario_internal::Invalid;
using scenario_internal::Reader;

Status ReadLive(const toml::table& root, Scenario* sc) {
  const toml::node* node = root.get("live");
  if (node == nullptr) return Status::OK();
  if (!node->is_table()) return Invalid("'live' must be a table");
  const Reader r(node->as_table(), "live");
  LiveSpec& live = sc->live;
  MR_RETURN_IF_ERROR(r.Keys({"block_mb", "time_scale", "jobs", "datacenters"}));
  MR_RETURN_IF_ERROR(r.Double("block_mb", 1.0 / 16, 1024, &live.block_mb));
  MR_RETURN_IF_ERROR(r.Double("time_scale", 1e-3, 1e6, &live.time_scale));
  if (const toml::node* dcs = r.Get("datacenters")) {
    if (!dcs->is_array()) return Invalid("'live.datacenters' must be an array of names");
    for (const toml::node& e : *dcs->as_array()) {
      if (!e.is_string()) return Invalid("'live.datacenters' must be an array of names");
      live.datacenters.push_back(e.as_string()->get());
    }
  }
  std::vector<Reader> jobs;
  MR_RETURN_IF_ERROR(r.Tables("jobs", &jobs));
  for (const Reader& j : jobs) {
    LiveJob job;
    MR_RETURN_IF_ERROR(j.Keys({"type", "job", "input", "params"}));
    MR_RETURN_IF_ERROR(j.String("type", &job.type));
    MR_RETURN_IF_ERROR(j.String("job", &job.job));
    const int type = sc->JobTypeIndex(job.type);
    if (type < 0) return Invalid(j.Name("type") + ": unknown job type '" + job.type + "'");
    if (live.Find(job.type) != nullptr) {
      return Invalid(j.Name("type") + ": job type '" + job.type + "' is given twice");
    }
    if (job.job.empty()) return Invalid(j.Name("job") + " is required");
    job.input = sc->job_types[static_cast<size_t>(type)].input_type;
    MR_RETURN_IF_ERROR(j.OneOf("input", {"text", "web", "dna"}, &job.input));
    if (const toml::node* p = j.Get("params")) {
      if (!p->is_table()) return Invalid(j.Name("params") + " must be a table of strings");
      for (const auto& [key, value] : *p->as_table()) {
        if (!value.is_string()) {
          return Invalid(j.Name("params") + "." + std::string(key.str()) + " must be a string");
        }
        job.params[std::string(key.str())] = value.as_string()->get();
      }
    }
    live.jobs.push_back(std::move(job));
  }
  return Status::OK();
}

}  // namespace mr::sim

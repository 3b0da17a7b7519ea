// Workload generation: block placement, popularity, job sizes, types and
// arrivals (see workload.h). Everything draws from the "workload" stream of
// the scenario seed, in a fixed order, so it is the same for every policy.
#include "sim/workload.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <functional>
#include <sstream>
#include <string_view>

namespace mr::sim {
namespace {

using sched::ClusterState;
using sched::NodeId;

// The rack of a node for placement: its rack, else its datacenter.
int PlacementRack(const ClusterState& s, NodeId n) {
  const sched::Node& node = s.node(n);
  return node.rack >= 0 ? node.rack : -1 - node.datacenter;
}

NodeId PickOther(const std::vector<NodeId>& from, const std::vector<NodeId>& taken, Rng& rng,
                 const std::function<bool(NodeId)>& ok) {
  std::vector<NodeId> options;
  for (NodeId n : from) {
    if (ok(n) && std::find(taken.begin(), taken.end(), n) == taken.end()) options.push_back(n);
  }
  if (options.empty()) return sched::kNoNode;
  return options[UniformIndex(rng, options.size())];
}

}  // namespace

std::vector<NodeId> PlaceBlock(const ClusterState& state, const std::vector<NodeId>& candidates,
                               const std::string& placement, int replicas, uint64_t counter,
                               Rng& rng) {
  std::vector<NodeId> out;
  const int r = std::min<int>(replicas, static_cast<int>(candidates.size()));
  if (placement == "round-robin") {
    for (int i = 0; i < r; ++i) {
      out.push_back(candidates[(counter * static_cast<uint64_t>(r) + i) % candidates.size()]);
    }
    return out;
  }
  auto any = [](NodeId) { return true; };
  if (placement == "hdfs") {
    // HDFS's default: the writer's node (here a random one), then a node on
    // another rack, then another node on that second rack, then anywhere.
    out.push_back(candidates[UniformIndex(rng, candidates.size())]);
    if (r >= 2) {
      const int rack0 = PlacementRack(state, out[0]);
      NodeId second = PickOther(candidates, out, rng,
                                [&](NodeId n) { return PlacementRack(state, n) != rack0; });
      if (second == sched::kNoNode) second = PickOther(candidates, out, rng, any);
      out.push_back(second);
    }
    if (r >= 3) {
      const int rack1 = PlacementRack(state, out[1]);
      NodeId third = PickOther(candidates, out, rng,
                               [&](NodeId n) { return PlacementRack(state, n) == rack1; });
      if (third == sched::kNoNode) third = PickOther(candidates, out, rng, any);
      out.push_back(third);
    }
  }
  while (static_cast<int>(out.size()) < r) out.push_back(PickOther(candidates, out, rng, any));
  return out;
}

namespace {

// The hot and the cold node sets of a skewed popularity (DataSpec).
struct NodeSets {
  std::vector<NodeId> all, hot, cold;
  std::vector<std::vector<NodeId>> by_dc;  // nodes of each datacenter
};

NodeSets MakeNodeSets(const DataSpec& data, const ClusterState& state) {
  NodeSets sets;
  const int n = static_cast<int>(state.nodes().size());
  int racks = 0;
  for (const sched::Node& node : state.nodes()) racks = std::max(racks, node.rack + 1);
  const int hot_racks = static_cast<int>(std::ceil(data.hot_fraction * racks));
  const int hot_nodes = static_cast<int>(std::ceil(data.hot_fraction * n));
  for (const sched::Node& node : state.nodes()) {
    sets.all.push_back(node.id);
    const bool hot = data.hot_unit == "rack" ? node.rack < hot_racks : node.id < hot_nodes;
    (hot ? sets.hot : sets.cold).push_back(node.id);
    if (sets.by_dc.size() <= static_cast<size_t>(node.datacenter)) {
      sets.by_dc.resize(static_cast<size_t>(node.datacenter) + 1);
    }
    sets.by_dc[static_cast<size_t>(node.datacenter)].push_back(node.id);
  }
  if (sets.cold.empty()) sets.cold = sets.hot;
  return sets;
}

class BlockSource {
 public:
  BlockSource(const Scenario& sc, const ClusterState& state, Workload* w, Rng& rng)
      : data_(sc.data), state_(state), w_(w), sets_(MakeNodeSets(sc.data, state)) {
    skewed_ = data_.popularity == "skewed";
    for (int b = 0; b < data_.pool_blocks; ++b) {
      const uint64_t id = NewBlock(sets_.all, rng);
      const bool hot = std::find(sets_.hot.begin(), sets_.hot.end(), w_->replicas[id][0]) !=
                       sets_.hot.end();
      (hot ? hot_pool_ : cold_pool_).push_back(id);
    }
    if (hot_pool_.empty()) hot_pool_ = cold_pool_;
    if (cold_pool_.empty()) cold_pool_ = hot_pool_;
  }

  int datacenters() const { return static_cast<int>(sets_.by_dc.size()); }

  // The block a new map reads; `dc` >= 0: a new block inside that
  // datacenter (job-datacenter placement).
  uint64_t Next(Rng& rng, int dc) {
    if (dc >= 0) return NewBlock(sets_.by_dc[static_cast<size_t>(dc)], rng);
    const bool hot = skewed_ && Uniform01(rng) < data_.hot_probability;
    if (data_.pool_blocks > 0) {
      if (!skewed_) return UniformIndex(rng, w_->replicas.size());
      const auto& pool = hot ? hot_pool_ : cold_pool_;
      return pool[UniformIndex(rng, pool.size())];
    }
    return NewBlock(!skewed_ ? sets_.all : hot ? sets_.hot : sets_.cold, rng);
  }

 private:
  uint64_t NewBlock(const std::vector<NodeId>& candidates, Rng& rng) {
    const uint64_t id = w_->replicas.size();
    w_->replicas.push_back(PlaceBlock(state_, candidates, data_.placement, data_.replication,
                                      placed_++, rng));
    return id;
  }

  const DataSpec& data_;
  const ClusterState& state_;
  Workload* w_;
  NodeSets sets_;
  bool skewed_ = false;
  uint64_t placed_ = 0;
  std::vector<uint64_t> hot_pool_, cold_pool_;
};

// Limits that keep a workload in memory: jobs in all, tasks per job, and
// simulated time (about 31 million years).
constexpr size_t kMaxJobs = 10'000'000;
constexpr int64_t kMaxTasksPerJob = 1'000'000;
constexpr double kMaxTimeMs = 1e18;

Status Invalid(const std::string& m) { return Status::InvalidArgument(m); }

std::string Num(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

std::string_view Trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

// The whole of `text` as a decimal integer in [min, max].
bool ParseInt(std::string_view text, int64_t min, int64_t max, int64_t* out) {
  int64_t v = 0;
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, v);
  if (text.empty() || ec != std::errc() || ptr != end || v < min || v > max) return false;
  *out = v;
  return true;
}

// A trace: one job per line, "submit_ms,type,maps[,reduces]" (an empty or
// absent reduces field is the type's default); blank lines, '#' comments
// and a header line starting "submit_ms" are skipped; spaces around a field
// are ignored. Every field is checked whole; errors say FILE:LINE.
Status ReadTrace(const Scenario& sc, std::vector<JobClass>* out) {
  std::string path = sc.workload.trace;
  if (!path.empty() && path[0] != '/' && !sc.dir.empty()) path = sc.dir + "/" + path;
  std::ifstream in(path);
  if (!in) return Invalid("workload.trace: cannot read '" + path + "'");
  std::string line;
  int line_no = 0;
  while (std::getline(in, line)) {
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (line.empty() || line[0] == '#' || line.rfind("submit_ms", 0) == 0) continue;
    const std::string at = path + ":" + std::to_string(line_no) + ": ";
    std::vector<std::string_view> fields;
    for (size_t from = 0;;) {
      const size_t comma = line.find(',', from);
      fields.push_back(Trim(std::string_view(line).substr(from, comma - from)));
      if (comma == std::string::npos) break;
      from = comma + 1;
    }
    if (fields.size() < 3 || fields.size() > 4) {
      return Invalid(at + "expected submit_ms,type,maps[,reduces] (got " +
                     std::to_string(fields.size()) + " fields)");
    }
    auto got = [](std::string_view f) { return " (got '" + std::string(f) + "')"; };
    JobClass c;
    int64_t maps = 0, reduces = -1;
    if (!ParseInt(fields[0], 0, INT64_MAX, &c.submit_ms)) {
      return Invalid(at + "submit_ms must be an integer >= 0" + got(fields[0]));
    }
    c.type = std::string(fields[1]);
    if (sc.JobTypeIndex(c.type) < 0) return Invalid(at + "unknown job type '" + c.type + "'");
    if (!ParseInt(fields[2], 1, kMaxTasksPerJob, &maps)) {
      return Invalid(at + "maps must be an integer in [1, " + std::to_string(kMaxTasksPerJob) +
                     "]" + got(fields[2]));
    }
    if (fields.size() == 4 && !fields[3].empty() &&
        !ParseInt(fields[3], 0, kMaxTasksPerJob, &reduces)) {
      return Invalid(at + "reduces must be an integer in [0, " + std::to_string(kMaxTasksPerJob) +
                     "]" + got(fields[3]));
    }
    c.maps = static_cast<int>(maps);
    c.reduces = static_cast<int>(reduces);
    out->push_back(c);
  }
  if (out->empty()) return Invalid(path + ": no jobs");
  return Status::OK();
}

// One job per count of each class of the selected batch (scaled), in file
// order or shuffled. InvalidArgument beyond kMaxJobs jobs or
// kMaxTasksPerJob tasks per job.
Status ExpandClasses(const WorkloadSpec& w, const std::vector<JobClass>& classes, Rng& rng,
                     std::vector<JobClass>* jobs) {
  auto selected = [&](const JobClass& c) {
    return w.batch.empty() || c.batch.empty() || c.batch == w.batch;
  };
  uint64_t count = 0;
  for (const JobClass& c : classes) {
    if (selected(c)) count += static_cast<uint64_t>(std::max(0, c.count));
  }
  if (count > kMaxJobs) {
    return Invalid("workload: " + std::to_string(count) + " jobs, more than the limit of " +
                   std::to_string(kMaxJobs));
  }
  for (const JobClass& c : classes) {
    if (!selected(c)) continue;
    const double maps = std::round(c.maps * w.scale), reduces = std::round(c.reduces * w.scale);
    if (maps > kMaxTasksPerJob || reduces > kMaxTasksPerJob) {
      return Invalid("workload: a job of type '" + c.type + "' has more than " +
                     std::to_string(kMaxTasksPerJob) + " maps or reduces (after workload.scale)");
    }
    for (int i = 0; i < c.count; ++i) {
      JobClass j = c;
      j.count = 1;
      j.maps = std::max(1, static_cast<int>(maps));
      if (c.reduces > 0) j.reduces = std::max(1, static_cast<int>(reduces));
      jobs->push_back(j);
    }
  }
  if (!w.keep_order && w.trace.empty()) {
    for (size_t i = jobs->size(); i > 1; --i) {
      std::swap((*jobs)[i - 1], (*jobs)[UniformIndex(rng, i)]);
    }
  }
  return Status::OK();
}

// workload.batch must name the batch of some class.
Status CheckBatch(const WorkloadSpec& w) {
  if (w.batch.empty()) return Status::OK();
  std::vector<std::string> batches;
  for (const JobClass& c : w.classes) {
    if (c.batch.empty() || std::find(batches.begin(), batches.end(), c.batch) != batches.end()) {
      continue;
    }
    batches.push_back(c.batch);
  }
  if (std::find(batches.begin(), batches.end(), w.batch) != batches.end()) return Status::OK();
  std::string list;
  for (const std::string& b : batches) list += (list.empty() ? "" : ", ") + b;
  return Invalid(
      "'workload.batch' = '" + w.batch +
      "' names no batch of workload.classes (batches: " + (list.empty() ? "none" : list) + ")");
}

// Generated jobs: a mix that can be drawn from, and a bounded count.
Status CheckGenerated(const WorkloadSpec& spec, double total_weight) {
  if (!(total_weight > 0)) {
    return Invalid(
        "'job_types.weight': the job types drawn from (workload.mix, or all) weigh 0 in all");
  }
  if (spec.jobs == 0 && spec.duration_ms == 0) {
    return Invalid("workload: give jobs, duration_ms, classes or a trace");
  }
  if (spec.jobs < 0 || static_cast<size_t>(spec.jobs) > kMaxJobs) {
    return Invalid("'workload.jobs' must be in [0, " + std::to_string(kMaxJobs) + "] (got " +
                   std::to_string(spec.jobs) + ")");
  }
  return Status::OK();
}

// The mean inter-arrival gap, from mean_interarrival_ms, a load (offered map
// work over map slots, from the expected maps per job and compute per map,
// which it records in `w`) or a task rate. It must be finite and >= 0, and
// > 0 when only duration_ms bounds the generated jobs, which must then be
// expected to number at most kMaxJobs. `explicit_jobs` empty = generated.
Status ArrivalGap(const Scenario& sc, const ClusterState& state,
                  const std::vector<JobClass>& explicit_jobs, const std::vector<int>& mix,
                  double total_weight, Workload* w, double* gap_ms) {
  const WorkloadSpec& spec = sc.workload;
  if (!explicit_jobs.empty()) {
    double maps = 0, work = 0;
    for (const JobClass& c : explicit_jobs) {
      maps += c.maps;
      work += c.maps * sc.job_types[static_cast<size_t>(sc.JobTypeIndex(c.type))].map.Mean();
    }
    w->mean_maps = maps / static_cast<double>(explicit_jobs.size());
    w->mean_map_ms = work / maps;
  } else {
    w->mean_maps = spec.sizes.Mean();
    for (int t : mix) {
      const JobType& jt = sc.job_types[static_cast<size_t>(t)];
      w->mean_map_ms += jt.weight / total_weight * jt.map.Mean();
    }
  }
  double gap = spec.mean_interarrival_ms;
  if (spec.load > 0) {
    const double slots = static_cast<double>(state.total_map_slots());
    if (!(slots > 0)) return Invalid("'workload.load' needs map slots (cluster.map_slots is 0)");
    gap = w->mean_maps * w->mean_map_ms / (spec.load * slots);
  } else if (spec.task_rate_per_s > 0) {
    gap = w->mean_maps / spec.task_rate_per_s * 1000.0;
  }
  if (!std::isfinite(gap) || gap < 0) {
    return Invalid("workload: the mean inter-arrival gap is " + Num(gap) +
                   " ms; it must be finite and >= 0");
  }
  if (spec.arrival != "trace" && gap > 0) w->job_rate_per_s = 1000.0 / gap;
  if (explicit_jobs.empty() && spec.jobs == 0) {  // bounded by duration_ms only
    if (gap <= 0) {
      return Invalid(
          "'workload.duration_ms' bounds the jobs, but the inter-arrival gap is 0 ms: give "
          "mean_interarrival_ms, load or task_rate_per_s > 0, or jobs");
    }
    const double expected = static_cast<double>(spec.duration_ms) / gap;
    if (expected > static_cast<double>(kMaxJobs)) {
      return Invalid("'workload.duration_ms': about " + Num(expected) +
                     " jobs would arrive, more than the limit of " + std::to_string(kMaxJobs));
    }
  }
  *gap_ms = gap;
  return Status::OK();
}

}  // namespace

Result<Workload> GenerateWorkload(const Scenario& sc, const ClusterState& state) {
  Rng rng(StreamSeed(sc.seed, "workload"));
  Workload w;
  BlockSource blocks(sc, state, &w, rng);
  const WorkloadSpec& spec = sc.workload;
  // Explicit jobs (classes or a trace) or generated ones: decided by the
  // configuration, never by how many jobs the classes expand to.
  const bool generated = spec.trace.empty() && spec.classes.empty();

  // Job types drawn for generated jobs, by weight.
  std::vector<int> mix;
  for (const std::string& name : spec.mix) mix.push_back(sc.JobTypeIndex(name));
  if (mix.empty()) {
    for (size_t i = 0; i < sc.job_types.size(); ++i) mix.push_back(static_cast<int>(i));
  }
  double total_weight = 0;
  for (int t : mix) total_weight += sc.job_types[static_cast<size_t>(t)].weight;

  MR_RETURN_IF_ERROR(CheckBatch(spec));
  std::vector<JobClass> explicit_jobs;
  if (!spec.trace.empty()) {
    std::vector<JobClass> trace;
    MR_RETURN_IF_ERROR(ReadTrace(sc, &trace));
    MR_RETURN_IF_ERROR(ExpandClasses(spec, trace, rng, &explicit_jobs));
  } else if (!spec.classes.empty()) {
    MR_RETURN_IF_ERROR(ExpandClasses(spec, spec.classes, rng, &explicit_jobs));
    if (explicit_jobs.empty()) {
      return Invalid("'workload.classes': no jobs (every selected class has count 0)");
    }
  }
  for (const JobClass& c : explicit_jobs) {
    if (sc.JobTypeIndex(c.type) < 0) {
      return Invalid("workload: unknown job type '" + c.type + "'");
    }
  }
  if (generated) MR_RETURN_IF_ERROR(CheckGenerated(spec, total_weight));
  double mean_gap_ms = 0;
  MR_RETURN_IF_ERROR(ArrivalGap(sc, state, explicit_jobs, mix, total_weight, &w, &mean_gap_ms));
  const bool by_duration = generated && spec.jobs == 0;

  const size_t limit = !generated    ? explicit_jobs.size()
                       : by_duration ? kMaxJobs + 1
                                     : static_cast<size_t>(spec.jobs);
  // Job-datacenter placement: each job's datacenter, uniform, from a stream
  // of its own (so no other draw of the workload changes with it).
  const bool job_dc = sc.data.placement == "job-datacenter" && blocks.datacenters() > 0;
  Rng dc_rng(StreamSeed(sc.seed, "job-datacenter"));
  double t = 0;
  for (size_t i = 0; i < limit; ++i) {
    SimJob job;
    int maps = 0, reduces = 0;
    if (!generated) {
      const JobClass& c = explicit_jobs[i];
      job.type = sc.JobTypeIndex(c.type);
      job.batch = c.batch;
      maps = c.maps;
      reduces = c.reduces >= 0 ? c.reduces : sc.job_types[static_cast<size_t>(job.type)].reduces;
    } else {
      double u = Uniform01(rng) * total_weight;
      job.type = mix.back();
      for (int ty : mix) {
        u -= sc.job_types[static_cast<size_t>(ty)].weight;
        if (u < 0) {
          job.type = ty;
          break;
        }
      }
      maps = spec.sizes.Sample(rng);
      reduces = sc.job_types[static_cast<size_t>(job.type)].reduces;
      if (maps > kMaxTasksPerJob) {
        return Invalid("'workload.sizes': a job of " + std::to_string(maps) + " maps, more than " +
                       std::to_string(kMaxTasksPerJob));
      }
    }
    // Arrival: the first job at 0, then gaps (or the trace's own time).
    if (!generated && explicit_jobs[i].submit_ms >= 0) {
      t = static_cast<double>(explicit_jobs[i].submit_ms);
      job.submit_ms = explicit_jobs[i].submit_ms;
    } else {
      if (i > 0) {
        if (spec.arrival == "poisson") {
          t += Exponential(rng, mean_gap_ms);
        } else if (spec.arrival == "lognormal") {
          Dist d{Dist::Kind::kLognormal, mean_gap_ms, spec.sd_interarrival_ms};
          t += d.Sample(rng);
        } else {
          t += mean_gap_ms;  // fixed
        }
      }
      if (spec.duration_ms > 0 && t >= static_cast<double>(spec.duration_ms)) break;
      if (!(t <= kMaxTimeMs)) {
        return Invalid("workload: a job would arrive after " + Num(kMaxTimeMs) + " ms");
      }
      job.submit_ms = static_cast<int64_t>(std::llround(t));
    }
    if (spec.duration_ms > 0 && job.submit_ms >= spec.duration_ms) break;
    if (by_duration && i == kMaxJobs) {
      return Invalid("'workload.duration_ms': more than " + std::to_string(kMaxJobs) +
                     " jobs arrive in it");
    }
    const JobType& type = sc.job_types[static_cast<size_t>(job.type)];
    if (job_dc) job.datacenter = static_cast<int>(UniformIndex(dc_rng, blocks.datacenters()));
    for (int m = 0; m < maps; ++m) {
      job.blocks.push_back(blocks.Next(rng, job.datacenter));
      job.map_ms.push_back(type.map.Sample(rng));
    }
    for (int r = 0; r < reduces; ++r) job.reduce_ms.push_back(type.reduce.Sample(rng));
    w.jobs.push_back(std::move(job));
  }
  std::stable_sort(w.jobs.begin(), w.jobs.end(),
                   [](const SimJob& a, const SimJob& b) { return a.submit_ms < b.submit_ms; });
  for (size_t i = 0; i < w.jobs.size(); ++i) w.jobs[i].id = static_cast<int>(i) + 1;
  return w;
}

std::vector<PlannedJob> JobList(const Scenario& sc, const Workload& w) {
  std::vector<PlannedJob> out;
  for (const SimJob& j : w.jobs) {
    out.push_back({j.id, sc.job_types[static_cast<size_t>(j.type)].name,
                   static_cast<int>(j.blocks.size()), static_cast<int>(j.reduce_ms.size()),
                   j.submit_ms, j.datacenter, j.batch});
  }
  return out;
}

std::string JobListCsv(const std::vector<PlannedJob>& jobs) {
  std::ostringstream os;
  os << "id,type,maps,reduces,submit_ms,datacenter,batch\n";
  for (const PlannedJob& j : jobs) {
    os << j.id << ',' << j.type << ',' << j.maps << ',' << j.reduces << ',' << j.submit_ms << ','
       << j.datacenter << ',' << j.batch << '\n';
  }
  return os.str();
}

}  // namespace mr::sim

namespace mr::sim {

int Scenario::JobTypeIndex(const std::string& name) const {
  for (size_t i = 0; i < job_types.size(); ++i) {
    if (job_types[i].name == name) return static_cast<int>(i);
  }
  return -1;
}

}  // namespace mr::sim

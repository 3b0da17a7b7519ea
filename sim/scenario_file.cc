// The scenario file parser: overrides first (ApplyOverride), then one
// reader per table (ReadCluster, ReadNetwork, ...), each rejecting unknown
// keys, wrong types and out-of-range values, then checks that span tables
// (Validate). Same strict style as common/config.cc.
#include "sim/scenario_file.h"

#include "sim/scenario_live.h"
#include "sim/scenario_reader.h"
#include "sim/scenario_speculation.h"

#include <toml++/toml.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <initializer_list>
#include <sstream>

namespace mr::sim {
namespace {

using scenario_internal::Invalid;
using scenario_internal::Num;
using scenario_internal::Reader;

// A TOML value as an override would write it: floats in their shortest
// round-trip form ("0.3", not "0.29999999999999999"), strings bare (an
// override value that is not TOML is a string).
std::string ValueText(const toml::node& v) {
  if (v.is_string()) return v.as_string()->get();
  if (v.is_floating_point()) {
    char buf[64];
    auto res = std::to_chars(buf, buf + sizeof buf, v.as_floating_point()->get());
    std::string text(buf, res.ptr);
    if (text.find_first_of(".en") == std::string::npos) text += ".0";
    return text;
  }
  std::ostringstream os;
  v.visit([&](const auto& x) { os << x; });
  return os.str();
}

constexpr double kBig = 1e15;
constexpr int64_t kMaxInt = 1'000'000'000;

Status ReadDist(const Reader& parent, std::string_view key, Dist* d) {
  const toml::node* n = parent.Get(key);
  if (n == nullptr) return Status::OK();
  if (n->is_integer() || n->is_floating_point()) {  // a bare number: fixed
    d->kind = Dist::Kind::kFixed;
    return parent.Double(key, 0, kBig, &d->mean_ms);
  }
  Reader r(nullptr, "");
  MR_RETURN_IF_ERROR(parent.Sub(key, &r));
  MR_RETURN_IF_ERROR(r.Keys({"dist", "mean_ms", "sd_ms", "shape", "phi", "slot_ms"}));
  std::string kind = "fixed";
  MR_RETURN_IF_ERROR(r.OneOf("dist", {"fixed", "exponential", "geometric", "pareto", "lognormal"}, &kind));
  d->kind = kind == "fixed"         ? Dist::Kind::kFixed
            : kind == "exponential" ? Dist::Kind::kExponential
            : kind == "geometric"   ? Dist::Kind::kGeometric
            : kind == "pareto"      ? Dist::Kind::kPareto
                                    : Dist::Kind::kLognormal;
  MR_RETURN_IF_ERROR(r.Double("mean_ms", 0, kBig, &d->mean_ms));
  MR_RETURN_IF_ERROR(r.Double("sd_ms", 0, kBig, &d->sd_ms));
  MR_RETURN_IF_ERROR(r.Double("shape", 1.01, 100, &d->shape));
  MR_RETURN_IF_ERROR(r.Double("phi", 1e-6, 1, &d->phi));
  MR_RETURN_IF_ERROR(r.Double("slot_ms", 1, kBig, &d->slot_ms));
  if (d->kind == Dist::Kind::kGeometric && r.Get("mean_ms")) {
    return Invalid(r.Name("mean_ms") + " does not apply to a geometric law (its mean is slot_ms / phi)");
  }
  if ((d->kind == Dist::Kind::kPareto || d->kind == Dist::Kind::kLognormal) && d->mean_ms <= 0) {
    return Invalid(r.Name("mean_ms") + " must be > 0 for a " + kind + " law");
  }
  return Status::OK();
}

Status ReadSizes(const Reader& parent, SizeDist* s) {
  Reader r(nullptr, "");
  MR_RETURN_IF_ERROR(parent.Sub("sizes", &r));
  MR_RETURN_IF_ERROR(r.Keys({"dist", "maps", "shape", "min", "max", "bins"}));
  std::string kind = "fixed";
  MR_RETURN_IF_ERROR(r.OneOf("dist", {"fixed", "pareto", "facebook"}, &kind));
  s->kind = kind == "fixed" ? SizeDist::Kind::kFixed
            : kind == "pareto" ? SizeDist::Kind::kPareto : SizeDist::Kind::kFacebook;
  MR_RETURN_IF_ERROR(r.Int("maps", 1, kMaxInt, &s->fixed));
  MR_RETURN_IF_ERROR(r.Double("shape", 0.1, 100, &s->shape));
  MR_RETURN_IF_ERROR(r.Int("min", 1, kMaxInt, &s->min));
  MR_RETURN_IF_ERROR(r.Int("max", 1, kMaxInt, &s->max));
  MR_RETURN_IF_ERROR(r.Int("bins", 1, 9, &s->facebook_bins));
  if (s->max < s->min) return Invalid(r.Name("max") + " must be >= min");
  return Status::OK();
}

Status ReadCluster(const Reader& r, ClusterSpec* c) {
  MR_RETURN_IF_ERROR(r.Keys({"nodes", "datacenters", "racks", "map_slots", "reduce_slots",
                             "heartbeat_ms", "out_of_band_heartbeat", "speeds"}));
  MR_RETURN_IF_ERROR(r.Int("nodes", 1, 1'000'000, &c->nodes));
  MR_RETURN_IF_ERROR(r.Int("datacenters", 1, 1000, &c->datacenters));
  MR_RETURN_IF_ERROR(r.Int("racks", 0, 100'000, &c->racks));
  MR_RETURN_IF_ERROR(r.Int("map_slots", 0, 1000, &c->map_slots));
  MR_RETURN_IF_ERROR(r.Int("reduce_slots", 0, 1000, &c->reduce_slots));
  MR_RETURN_IF_ERROR(r.Int("heartbeat_ms", 1, kMaxInt, &c->heartbeat_ms));
  MR_RETURN_IF_ERROR(r.Bool("out_of_band_heartbeat", &c->out_of_band_heartbeat));
  MR_RETURN_IF_ERROR(ReadSpeeds(r, c));
  if (c->datacenters > c->nodes) return Invalid(r.Name("datacenters") + " must be <= nodes");
  if (c->racks % c->datacenters != 0 || c->racks > c->nodes) {
    return Invalid(r.Name("racks") + " must be a multiple of datacenters and <= nodes (got " +
                   std::to_string(c->racks) + ")");
  }
  return Status::OK();
}

Status ReadNetwork(const Reader& r, NetworkSpec* n) {
  MR_RETURN_IF_ERROR(
      r.Keys({"enabled", "node_mb_s", "rack_mb_s", "dc_mb_s", "latency_ms", "link_costs"}));
  MR_RETURN_IF_ERROR(r.Bool("enabled", &n->enabled));
  MR_RETURN_IF_ERROR(r.Double("node_mb_s", 0, kBig, &n->node_mb_s));
  MR_RETURN_IF_ERROR(r.Double("rack_mb_s", 0, kBig, &n->rack_mb_s));
  MR_RETURN_IF_ERROR(r.Double("dc_mb_s", 0, kBig, &n->dc_mb_s));
  MR_RETURN_IF_ERROR(r.Double("latency_ms", 0, kBig, &n->latency_ms));
  MR_RETURN_IF_ERROR(r.Bool("link_costs", &n->link_costs));
  if (n->link_costs && !(n->enabled && n->node_mb_s > 0)) {
    return Invalid(r.Name("link_costs") + " needs enabled = true and node_mb_s > 0");
  }
  return Status::OK();
}

Status ReadData(const Reader& r, DataSpec* d) {
  MR_RETURN_IF_ERROR(r.Keys({"block_mb", "replication", "placement", "pool_blocks", "popularity",
                             "hot_unit", "hot_fraction", "hot_probability"}));
  MR_RETURN_IF_ERROR(r.Double("block_mb", 1e-6, 1e6, &d->block_mb));
  MR_RETURN_IF_ERROR(r.Int("replication", 1, 100, &d->replication));
  MR_RETURN_IF_ERROR(
      r.OneOf("placement", {"uniform", "hdfs", "round-robin", "job-datacenter"}, &d->placement));
  MR_RETURN_IF_ERROR(r.Int("pool_blocks", 0, kMaxInt, &d->pool_blocks));
  MR_RETURN_IF_ERROR(r.OneOf("popularity", {"uniform", "skewed"}, &d->popularity));
  MR_RETURN_IF_ERROR(r.OneOf("hot_unit", {"node", "rack"}, &d->hot_unit));
  MR_RETURN_IF_ERROR(r.Double("hot_fraction", 0.001, 1, &d->hot_fraction));
  return r.Double("hot_probability", 0, 1, &d->hot_probability);
}

Status ReadService(const Reader& r, ServiceSpec* s) {
  MR_RETURN_IF_ERROR(r.Keys({"rack_slowdown", "remote_slowdown", "off_dc_slowdown"}));
  MR_RETURN_IF_ERROR(r.Double("rack_slowdown", 0.01, 1e6, &s->rack_slowdown));
  MR_RETURN_IF_ERROR(r.Double("remote_slowdown", 0.01, 1e6, &s->remote_slowdown));
  return r.Double("off_dc_slowdown", 0, 1e6, &s->off_dc_slowdown);
}

Status ReadJobType(const Reader& r, JobType* t) {
  MR_RETURN_IF_ERROR(r.Keys({"name", "input_type", "fp", "fp_wire", "map", "reduce",
                             "reduce_ms_per_mb", "reduces", "weight"}));
  MR_RETURN_IF_ERROR(r.String("name", &t->name));
  if (t->name.empty()) return Invalid(r.Name("name") + " is required");
  MR_RETURN_IF_ERROR(r.String("input_type", &t->input_type));
  MR_RETURN_IF_ERROR(r.Double("fp", 0, 1e6, &t->fp));
  MR_RETURN_IF_ERROR(r.Double("fp_wire", 0, 1e6, &t->fp_wire));
  if (!r.Get("map")) return Invalid(r.Name("map") + " is required");
  MR_RETURN_IF_ERROR(ReadDist(r, "map", &t->map));
  MR_RETURN_IF_ERROR(ReadDist(r, "reduce", &t->reduce));
  MR_RETURN_IF_ERROR(r.Double("reduce_ms_per_mb", 0, kBig, &t->reduce_ms_per_mb));
  MR_RETURN_IF_ERROR(r.Int("reduces", 0, 1'000'000, &t->reduces));
  return r.Double("weight", 0, kBig, &t->weight);
}

Status ReadClass(const Reader& r, JobClass* c) {
  MR_RETURN_IF_ERROR(r.Keys({"type", "count", "maps", "reduces", "batch", "submit_ms"}));
  MR_RETURN_IF_ERROR(r.String("type", &c->type));
  MR_RETURN_IF_ERROR(r.Int("count", 0, kMaxInt, &c->count));
  MR_RETURN_IF_ERROR(r.Int("maps", 1, kMaxInt, &c->maps));
  MR_RETURN_IF_ERROR(r.Int("reduces", 0, 1'000'000, &c->reduces));
  MR_RETURN_IF_ERROR(r.String("batch", &c->batch));
  return r.Int("submit_ms", 0, INT64_MAX, &c->submit_ms);
}

Status ReadWorkload(const Reader& r, WorkloadSpec* w) {
  MR_RETURN_IF_ERROR(r.Keys({"arrival", "mean_interarrival_ms", "sd_interarrival_ms", "load",
                             "task_rate_per_s", "jobs", "duration_ms", "sizes", "mix", "classes",
                             "keep_order", "batch", "scale", "trace", "slowstart",
                             "fp_known_at_start"}));
  MR_RETURN_IF_ERROR(r.OneOf("arrival", {"poisson", "exponential", "lognormal", "fixed", "trace"}, &w->arrival));
  if (w->arrival == "exponential") w->arrival = "poisson";  // exponential gaps: the same process
  MR_RETURN_IF_ERROR(r.Double("mean_interarrival_ms", 0, kBig, &w->mean_interarrival_ms));
  MR_RETURN_IF_ERROR(r.Double("sd_interarrival_ms", 0, kBig, &w->sd_interarrival_ms));
  MR_RETURN_IF_ERROR(r.Double("load", 0, 10, &w->load));
  MR_RETURN_IF_ERROR(r.Double("task_rate_per_s", 0, kBig, &w->task_rate_per_s));
  MR_RETURN_IF_ERROR(r.Int("jobs", 0, kMaxInt, &w->jobs));
  MR_RETURN_IF_ERROR(r.Int("duration_ms", 0, INT64_MAX, &w->duration_ms));
  MR_RETURN_IF_ERROR(ReadSizes(r, &w->sizes));
  if (const toml::node* mix = r.Get("mix")) {
    if (!mix->is_array()) return Invalid(r.Name("mix") + " must be an array of job type names");
    for (const toml::node& e : *mix->as_array()) {
      if (!e.is_string()) return Invalid(r.Name("mix") + " must be an array of job type names");
      w->mix.push_back(e.as_string()->get());
    }
  }
  std::vector<Reader> classes;
  MR_RETURN_IF_ERROR(r.Tables("classes", &classes));
  for (const Reader& c : classes) {
    w->classes.emplace_back();
    MR_RETURN_IF_ERROR(ReadClass(c, &w->classes.back()));
  }
  MR_RETURN_IF_ERROR(r.Bool("keep_order", &w->keep_order));
  MR_RETURN_IF_ERROR(r.String("batch", &w->batch));
  MR_RETURN_IF_ERROR(r.Double("scale", 1e-6, 1e6, &w->scale));
  MR_RETURN_IF_ERROR(r.String("trace", &w->trace));
  MR_RETURN_IF_ERROR(r.Double("slowstart", 0, 1, &w->slowstart));
  MR_RETURN_IF_ERROR(r.Bool("fp_known_at_start", &w->fp_known_at_start));
  // Exactly one way to give the rate.
  const int rates = (w->mean_interarrival_ms > 0) + (w->load > 0) + (w->task_rate_per_s > 0);
  const bool timed_trace = !w->trace.empty();
  if (w->arrival == "trace" && !timed_trace) return Invalid(r.Name("trace") + " is required by arrival = \"trace\"");
  if (w->arrival != "trace" && rates != 1 && !(w->arrival == "fixed" && rates == 0)) {
    return Invalid("workload: give exactly one of mean_interarrival_ms, load, task_rate_per_s");
  }
  if (w->arrival == "lognormal" && (w->mean_interarrival_ms <= 0 || w->sd_interarrival_ms <= 0)) {
    return Invalid("workload: a lognormal arrival needs mean_interarrival_ms and sd_interarrival_ms");
  }
  if (w->classes.empty() && !timed_trace && w->jobs == 0 && w->duration_ms == 0) {
    return Invalid("workload: give jobs, duration_ms, classes or a trace");
  }
  return Status::OK();
}

Status ReadRun(const Reader& r, const ClusterSpec& cluster, RunSpec* run) {
  MR_RETURN_IF_ERROR(r.Keys({"end_ms", "sample_ms", "max_backlog", "tail_fraction",
                             "task_failure_prob", "failures", "episodes"}));
  MR_RETURN_IF_ERROR(ReadEpisodes(r, cluster, run));
  MR_RETURN_IF_ERROR(r.Int("end_ms", 0, INT64_MAX, &run->end_ms));
  MR_RETURN_IF_ERROR(r.Int("sample_ms", 0, INT64_MAX, &run->sample_ms));
  MR_RETURN_IF_ERROR(r.Int("max_backlog", 0, INT64_MAX, &run->max_backlog));
  MR_RETURN_IF_ERROR(r.Double("tail_fraction", 0.001, 1, &run->tail_fraction));
  MR_RETURN_IF_ERROR(r.Double("task_failure_prob", 0, 0.99, &run->task_failure_prob));
  std::vector<Reader> failures;
  MR_RETURN_IF_ERROR(r.Tables("failures", &failures));
  for (const Reader& f : failures) {
    NodeFailure nf;
    MR_RETURN_IF_ERROR(f.Keys({"node", "at_ms", "back_ms"}));
    MR_RETURN_IF_ERROR(f.Int("node", 0, kMaxInt, &nf.node));
    MR_RETURN_IF_ERROR(f.Int("at_ms", 0, INT64_MAX, &nf.at_ms));
    MR_RETURN_IF_ERROR(f.Int("back_ms", -1, INT64_MAX, &nf.back_ms));
    run->failures.push_back(nf);
  }
  return Status::OK();
}

Status ReadScheduler(const Reader& r, SchedulerRun* s) {
  MR_RETURN_IF_ERROR(r.Keys({"name", "label", "params", "speculation"}));
  MR_RETURN_IF_ERROR(r.String("name", &s->name));
  MR_RETURN_IF_ERROR(r.String("label", &s->label));
  if (s->label.empty()) s->label = s->name;
  MR_RETURN_IF_ERROR(ReadParams(r, &s->params));
  auto made = sched::MakeScheduler(s->name, s->params, sched::SchedulerEnv{});
  if (!made.ok()) return Invalid(r.path() + ": " + made.status().message());
  if (r.Get("speculation") != nullptr) {
    Reader sub(nullptr, "");
    MR_RETURN_IF_ERROR(r.Sub("speculation", &sub));
    s->speculation.emplace();
    MR_RETURN_IF_ERROR(ReadSpeculation(sub, &*s->speculation));
  }
  return Status::OK();
}

// Sets `o.key` (a dotted path; a number indexes an array; missing tables
// are created) to `o.value`, read as TOML or else as a string.
Status ApplyOverride(toml::table& root, const Override& o) {
  toml::table holder;
  try {
    holder = toml::parse("v = " + o.value);
  } catch (const toml::parse_error&) {
    holder.insert_or_assign("v", o.value);
  }
  const toml::node& value = *holder.get("v");
  std::vector<std::string> parts;
  std::istringstream in(o.key);
  for (std::string part; std::getline(in, part, '.');) parts.push_back(part);
  if (parts.empty() || std::find(parts.begin(), parts.end(), "") != parts.end()) {
    return Invalid("override: bad key '" + o.key + "'");
  }
  toml::node* cur = &root;
  for (size_t i = 0; i < parts.size(); ++i) {
    const std::string& part = parts[i];
    const bool last = i + 1 == parts.size();
    if (toml::table* t = cur->as_table()) {
      if (last) {
        value.visit([&](const auto& v) { t->insert_or_assign(part, v); });
        return Status::OK();
      }
      if (t->get(part) == nullptr) t->insert(part, toml::table{});
      cur = t->get(part);
    } else if (toml::array* a = cur->as_array()) {
      if (part == "+" && last) {  // append (mr-sim --add-scheduler)
        value.visit([&](const auto& v) { a->push_back(v); });
        return Status::OK();
      }
      if (part.find_first_not_of("0123456789") != std::string::npos ||
          std::stoul(part) >= a->size()) {
        return Invalid("override '" + o.key + "': '" + part + "' is not an index of the array");
      }
      const size_t idx = std::stoul(part);
      if (last) {
        a->erase(a->cbegin() + static_cast<ptrdiff_t>(idx));
        value.visit([&](const auto& v) { a->insert(a->cbegin() + static_cast<ptrdiff_t>(idx), v); });
        return Status::OK();
      }
      cur = a->get(idx);
    } else {
      return Invalid("override '" + o.key + "': '" + parts[i - 1] + "' is not a table");
    }
  }
  return Status::OK();
}

// A row whose policy an override replaced (schedulers.N.name) is labelled by
// the new name unless an override also gave it a label: the file's label
// named the old policy ("FIFO" on a student's policy's rows, issue 16).
void DropReplacedLabels(toml::table& root, const std::vector<Override>& overrides) {
  toml::array* scheds = root["schedulers"].as_array();
  if (scheds == nullptr) return;
  for (const Override& o : overrides) {
    if (o.key.rfind("schedulers.", 0) != 0 || o.key.size() < 17 ||
        o.key.compare(o.key.size() - 5, 5, ".name") != 0) {
      continue;
    }
    const std::string index = o.key.substr(11, o.key.size() - 16);
    if (index.empty() || index.find_first_not_of("0123456789") != std::string::npos) continue;
    const std::string label_key = "schedulers." + index + ".label";
    const bool labelled = std::any_of(overrides.begin(), overrides.end(),
                                      [&](const Override& x) { return x.key == label_key; });
    const size_t i = std::stoul(index);
    if (labelled || i >= scheds->size()) continue;
    if (toml::table* t = scheds->get(i)->as_table()) t->erase("label");
  }
}

// A TOML value as written, or the text quoted as a TOML string.
std::string TomlValue(const std::string& text) {
  try {
    toml::table t = toml::parse("v = " + text);
    if (t.get("v") != nullptr && !t.get("v")->is_table() && !t.get("v")->is_array()) return text;
  } catch (const toml::parse_error&) {
  }
  std::ostringstream os;
  os << toml::value<std::string>(text);
  return os.str();
}

}  // namespace

namespace {

// "NAME[:LABEL][,KEY=VALUE...]" -> "{ name = ..., label = ..., params = { ... } }"
// (a label only when `labelled`); `option` names the flag in errors.
Result<std::string> InlineRow(const std::string& text, const std::string& option, bool labelled) {
  const std::string form = labelled ? "NAME[:LABEL][,KEY=VALUE...]" : "NAME[,KEY=VALUE...]";
  const auto bad = [&](const std::string& why) {
    return Status::InvalidArgument(option + " '" + text + "': " + why + " (expected " + form + ")");
  };
  std::vector<std::string> parts;
  std::istringstream in(text);
  for (std::string part; std::getline(in, part, ',');) parts.push_back(part);
  if (parts.empty() || parts[0].empty()) return bad(labelled ? "no policy name" : "no speculator name");
  std::string name = parts[0], label;
  if (const size_t colon = name.find(':'); labelled && colon != std::string::npos) {
    label = name.substr(colon + 1);
    name = name.substr(0, colon);
    if (name.empty() || label.empty()) return bad("empty name or label");
  }
  std::ostringstream table;
  table << "{ name = " << toml::value<std::string>(name);
  if (!label.empty()) table << ", label = " << toml::value<std::string>(label);
  table << ", params = {";
  for (size_t i = 1; i < parts.size(); ++i) {
    const size_t eq = parts[i].find('=');
    if (eq == std::string::npos || eq == 0) return bad("'" + parts[i] + "' is not KEY=VALUE");
    const std::string key = parts[i].substr(0, eq);
    if (key.find_first_not_of("abcdefghijklmnopqrstuvwxyz0123456789_") != std::string::npos) {
      return bad("bad parameter name '" + key + "'");
    }
    table << (i > 1 ? ", " : " ") << key << " = " << TomlValue(parts[i].substr(eq + 1));
  }
  table << " } }";
  return table.str();
}

}  // namespace

Result<Override> ParseAddScheduler(const std::string& text) {
  MR_ASSIGN_OR_RETURN(std::string row, InlineRow(text, "--add-scheduler", true));
  return Override{"schedulers.+", row};
}

Result<Override> ParseSpeculatorOption(const std::string& text) {
  MR_ASSIGN_OR_RETURN(std::string table, InlineRow(text, "--speculator", false));
  return Override{"speculation", table};
}

Result<Scenario> ParseScenario(const std::string& text, const std::string& origin,
                               const std::string& dir, const std::vector<Override>& overrides) {
  toml::table root;
  try {
    root = toml::parse(text, origin);
  } catch (const toml::parse_error& e) {
    std::ostringstream os;
    os << origin << ":" << e.source().begin.line << ": " << e.description();
    return Status::InvalidArgument(os.str());
  }
  for (const Override& o : overrides) MR_RETURN_IF_ERROR(ApplyOverride(root, o).WithContext(origin));
  DropReplacedLabels(root, overrides);
  Scenario sc;
  sc.dir = dir;
  const Reader top(&root, "");
  Status st = [&]() -> Status {
    MR_RETURN_IF_ERROR(top.Keys({"name", "description", "seed", "cluster", "network", "data",
                                 "service", "job_types", "workload", "run", "schedulers", "sweep",
                                 "live", "speculation"}));
    MR_RETURN_IF_ERROR(top.String("name", &sc.name));
    MR_RETURN_IF_ERROR(top.String("description", &sc.description));
    MR_RETURN_IF_ERROR(top.Int("seed", 0, INT64_MAX, &sc.seed));
    Reader sub(nullptr, "");
    MR_RETURN_IF_ERROR(top.Sub("cluster", &sub));
    MR_RETURN_IF_ERROR(ReadCluster(sub, &sc.cluster));
    MR_RETURN_IF_ERROR(top.Sub("network", &sub));
    MR_RETURN_IF_ERROR(ReadNetwork(sub, &sc.network));
    MR_RETURN_IF_ERROR(top.Sub("data", &sub));
    MR_RETURN_IF_ERROR(ReadData(sub, &sc.data));
    MR_RETURN_IF_ERROR(top.Sub("service", &sub));
    MR_RETURN_IF_ERROR(ReadService(sub, &sc.service));
    std::vector<Reader> types, scheds;
    MR_RETURN_IF_ERROR(top.Tables("job_types", &types));
    for (const Reader& t : types) {
      sc.job_types.emplace_back();
      MR_RETURN_IF_ERROR(ReadJobType(t, &sc.job_types.back()));
      if (sc.JobTypeIndex(sc.job_types.back().name) != static_cast<int>(sc.job_types.size()) - 1) {
        return Invalid(t.Name("name") + ": job type '" + sc.job_types.back().name + "' is defined twice");
      }
    }
    if (sc.job_types.empty()) return Invalid("at least one [[job_types]] is required");
    MR_RETURN_IF_ERROR(ReadLive(root, &sc));
    MR_RETURN_IF_ERROR(top.Sub("workload", &sub));
    MR_RETURN_IF_ERROR(ReadWorkload(sub, &sc.workload));
    for (const std::string& m : sc.workload.mix) {
      if (sc.JobTypeIndex(m) < 0) return Invalid("'workload.mix': unknown job type '" + m + "'");
    }
    for (const JobClass& c : sc.workload.classes) {
      if (sc.JobTypeIndex(c.type) < 0) return Invalid("'workload.classes': unknown job type '" + c.type + "'");
    }
    MR_RETURN_IF_ERROR(top.Sub("run", &sub));
    MR_RETURN_IF_ERROR(ReadRun(sub, sc.cluster, &sc.run));
    for (const NodeFailure& f : sc.run.failures) {
      if (f.node >= sc.cluster.nodes) return Invalid("'run.failures': node " + std::to_string(f.node) + " does not exist");
    }
    MR_RETURN_IF_ERROR(top.Tables("schedulers", &scheds));
    for (const Reader& s : scheds) {
      sc.schedulers.emplace_back();
      MR_RETURN_IF_ERROR(ReadScheduler(s, &sc.schedulers.back()));
    }
    if (sc.schedulers.empty()) return Invalid("at least one [[schedulers]] is required");
    MR_RETURN_IF_ERROR(top.Sub("speculation", &sub));
    MR_RETURN_IF_ERROR(ReadSpeculation(sub, &sc.speculation));
    sc.speculation_given = root.get("speculation") != nullptr ||
                           std::any_of(sc.schedulers.begin(), sc.schedulers.end(),
                                       [](const SchedulerRun& s) { return s.speculation.has_value(); });
    if (sc.data.placement == "job-datacenter" &&
        (sc.data.pool_blocks > 0 || sc.data.popularity != "uniform")) {
      return Invalid(
          "'data.placement' = \"job-datacenter\" places each job's own blocks: it needs "
          "data.pool_blocks = 0 and data.popularity = \"uniform\"");
    }
    if (sc.data.hot_unit == "rack" && sc.cluster.racks == 0) {
      return Invalid("'data.hot_unit' = \"rack\" needs cluster.racks > 0");
    }
    MR_RETURN_IF_ERROR(top.Sub("sweep", &sub));
    if (const toml::node* sw = root.get("sweep")) {
      for (const auto& [key, node] : *sw->as_table()) {
        if (!node.is_array() || node.as_array()->empty()) {
          return Invalid(sub.Name(key.str()) + " must be a non-empty array of values");
        }
        std::vector<std::string> values;
        for (const toml::node& v : *node.as_array()) values.push_back(ValueText(v));
        sc.sweep.emplace_back(std::string(key.str()), values);
      }
    }
    return Status::OK();
  }();
  if (!st.ok()) return st.WithContext(origin);
  return sc;
}

Result<std::string> ReadTextFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status::IOError("cannot read '" + path + "'");
  std::ostringstream os;
  os << in.rdbuf();
  return os.str();
}

Result<Scenario> LoadScenario(const std::string& path, const std::vector<Override>& overrides) {
  auto text = ReadTextFile(path);
  if (!text.ok()) return text.status();
  const std::string dir = std::filesystem::path(path).parent_path().string();
  return ParseScenario(*text, path, dir, overrides);
}

Result<Override> ParseOverride(const std::string& text) {
  const size_t eq = text.find('=');
  if (eq == std::string::npos || eq == 0) {
    return Status::InvalidArgument("expected KEY=VALUE (got '" + text + "')");
  }
  return Override{text.substr(0, eq), text.substr(eq + 1)};
}

}  // namespace mr::sim

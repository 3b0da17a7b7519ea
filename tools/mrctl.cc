// mrctl: the one client. `mrctl --help` lists the commands.
//
// Exit codes: 0 success, 1 the operation failed, 2 bad usage or config.
#include <cstdio>
#include <fstream>
#include <iostream>
#include <streambuf>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "common/config.h"
#include "common/version.h"
#include "dfs/client.h"
#include "dfs/namespace.h"
#include "jobs/job.h"
#include "scheduler/scheduler.h"
#include "scheduler/speculator.h"
#include "common/cli_support.h"
#include "tools/completion.h"
#include "common/datagen.h"
#include "tools/mrctl_common.h"
#include "tools/progress.h"

namespace {

using mr::Status;
using mr::tools::Fail;
using mr::tools::Target;
using mr::tools::WithClient;
using nlohmann::json;

mr::awaitable<Status> ClusterStatus(mr::dfs::DfsClient& c, bool as_json) {
  auto st = co_await c.ClusterStatus();
  if (!st.ok()) co_return st.status();
  if (as_json) {
    json workers = json::array();
    for (const auto& w : st->workers()) {
      workers.push_back({{"id", w.worker().id()}, {"address", w.worker().address()},
                         {"datacenter", w.worker().datacenter()}, {"rack", w.worker().rack()},
                         {"map_slots", w.worker().map_slots()}, {"reduce_slots", w.worker().reduce_slots()},
                         {"live", w.live()}, {"blocks", w.blocks()}, {"used_bytes", w.used_bytes()},
                         {"capacity_bytes", w.worker().capacity_bytes()},
                         {"last_heartbeat_ms_ago", w.last_heartbeat_ms_ago()},
                         {"free_bytes", w.free_bytes()}, {"writable", w.disk_problem().empty()},
                         {"disk_problem", w.disk_problem()},
                         {"running_maps", w.running_maps()}, {"running_reduces", w.running_reduces()},
                         {"admin_state", w.admin_state().empty() ? "in-service" : w.admin_state()}});
    }
    json j = {{"cluster", st->cluster_name()}, {"placement", st->placement()},
              {"scheduler", st->scheduler()}, {"files", st->files()},
              {"blocks", st->blocks()}, {"under_replicated_blocks", st->under_replicated_blocks()},
              {"workers", workers}};
    std::printf("%s\n", j.dump(2).c_str());
    co_return Status::OK();
  }
  int maps = 0, map_slots = 0, reduces = 0, reduce_slots = 0;
  for (const auto& w : st->workers()) {
    if (!w.live()) continue;
    maps += w.running_maps();
    reduces += w.running_reduces();
    map_slots += w.worker().map_slots();
    reduce_slots += w.worker().reduce_slots();
  }
  std::printf("cluster %s: %lld files, %lld blocks (%lld under-replicated), placement %s\n",
              st->cluster_name().c_str(), static_cast<long long>(st->files()),
              static_cast<long long>(st->blocks()), static_cast<long long>(st->under_replicated_blocks()),
              st->placement().c_str());
  std::printf("scheduler %s; slots in use: maps %d/%d, reduces %d/%d (live workers)\n",
              st->scheduler().c_str(), maps, map_slots, reduces, reduce_slots);
  // maps and reds: slots in use / slots.
  std::printf("%-8s %-21s %-8s %-6s %5s %5s %-5s %8s %12s  %s\n", "worker", "address", "dc", "rack", "maps",
              "reds", "state", "blocks", "disk used", "admin");
  for (const auto& w : st->workers()) {
    const std::string m = std::to_string(w.running_maps()) + "/" + std::to_string(w.worker().map_slots());
    const std::string r = std::to_string(w.running_reduces()) + "/" + std::to_string(w.worker().reduce_slots());
    std::printf("%-8s %-21s %-8s %-6s %5s %5s %-5s %8lld %12s  %s\n", w.worker().id().c_str(),
                w.worker().address().c_str(), w.worker().datacenter().c_str(),
                w.worker().rack().empty() ? "-" : w.worker().rack().c_str(), m.c_str(),
                r.c_str(), w.live() ? "live" : "dead", static_cast<long long>(w.blocks()),
                mr::tools::HumanBytes(w.used_bytes()).c_str(),
                w.admin_state().empty() ? "in-service" : w.admin_state().c_str());
  }
  for (const auto& w : st->workers()) {
    if (w.live() && !w.disk_problem().empty()) {
      std::printf("%s cannot write: %s\n", w.worker().id().c_str(), w.disk_problem().c_str());
    }
  }
  co_return Status::OK();
}

// `mrctl cluster decommission|recommission ID`.
mr::awaitable<Status> SetDecommission(mr::dfs::DfsClient& c, std::string method, std::string id) {
  mr::pb::DecommissionRequest req;
  req.set_worker_id(id);
  mr::pb::Empty ignored;
  MR_CO_RETURN_IF_ERROR(co_await c.CallMaster(method, req, &ignored));
  std::printf("%s: %s\n", id.c_str(),
              method == "cluster.Decommission"
                  ? "decommissioning (see `mrctl cluster status`; stop it once it is decommissioned)"
                  : "in service");
  co_return Status::OK();
}

// One registry entry of `mrctl schedulers` as JSON.
json RegistryEntry(const char* kind, const std::string& name, const std::string& paper,
                   const std::vector<mr::sched::SchedulerParamSpec>& specs) {
  json params = json::array();
  for (const auto& spec : specs) {
    params.push_back({{"name", spec.name},
                      {"default", mr::sched::ParamToString(spec.default_value)},
                      {"type", mr::sched::ParamTypeName(spec.default_value)},
                      {"help", spec.help}});
  }
  return {{"kind", kind}, {"name", name}, {"paper", paper}, {"params", params}};
}

// `mrctl schedulers`: every policy ([scheduler]) and every speculator
// ([speculation]) the master can run, from the registries; in JSON one
// array, each entry with its "kind" ("policy" or "speculator").
int Schedulers(bool as_json) {
  json all = json::array();
  for (const mr::sched::PolicyInfo* p : mr::sched::RegisteredPolicies()) {
    all.push_back(RegistryEntry("policy", p->name, p->paper, p->params));
  }
  for (const mr::sched::SpeculatorInfo* s : mr::sched::RegisteredSpeculators()) {
    all.push_back(RegistryEntry("speculator", s->name, s->paper, s->params));
  }
  if (as_json) {
    std::printf("%s\n", all.dump(2).c_str());
    return 0;
  }
  std::string kind;
  for (const auto& p : all) {
    if (p["kind"] != kind) {
      kind = p["kind"].get<std::string>();
      std::printf("%s", kind == "policy" ? "Policies ([scheduler] name):\n"
                                          : "\nSpeculators ([speculation] name):\n");
    }
    std::printf("%s\n    %s\n", p["name"].get<std::string>().c_str(), p["paper"].get<std::string>().c_str());
    for (const auto& q : p["params"]) {
      std::printf("    %-32s %-8s default %-10s %s\n", q["name"].get<std::string>().c_str(),
                  q["type"].get<std::string>().c_str(), q["default"].get<std::string>().c_str(),
                  q["help"].get<std::string>().c_str());
    }
  }
  return 0;
}

// `mrctl jobs`: every job a cluster can run, from the registry.
int Jobs(bool as_json) {
  json all = json::array();
  for (const mr::jobs::JobInfo* j : mr::jobs::RegisteredJobs()) {
    json params = json::array();
    for (const auto& spec : j->params) {
      params.push_back({{"name", spec.name}, {"default", spec.default_value}, {"help", spec.help}});
    }
    all.push_back({{"name", j->name}, {"description", j->description}, {"code_hash", j->code_hash},
                   {"params", params}});
  }
  if (as_json) {
    std::printf("%s\n", all.dump(2).c_str());
    return 0;
  }
  for (const auto& j : all) {
    std::printf("%-14s %s\n", j["name"].get<std::string>().c_str(), j["description"].get<std::string>().c_str());
    for (const auto& q : j["params"]) {
      std::printf("    --param %s=%s  %s\n", q["name"].get<std::string>().c_str(),
                  q["default"].get<std::string>().c_str(), q["help"].get<std::string>().c_str());
    }
  }
  return 0;
}

// Forwards to another stream buffer and reports the bytes written so far
// every 1 MiB (gen's progress; datagen writes to any std::ostream).
class CountingBuf : public std::streambuf {
 public:
  CountingBuf(std::streambuf* to, std::function<void(int64_t)> report) : to_(to), report_(std::move(report)) {}

 protected:
  int_type overflow(int_type c) override {
    if (traits_type::eq_int_type(c, traits_type::eof())) return traits_type::not_eof(c);
    Count(1);
    return to_->sputc(traits_type::to_char_type(c));
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    Count(n);
    return to_->sputn(s, n);
  }
  int sync() override { return to_->pubsync(); }

 private:
  void Count(std::streamsize n) {
    done_ += n;
    if (done_ - reported_ >= (1 << 20)) {
      reported_ = done_;
      report_(done_);
    }
  }
  std::streambuf* to_;
  std::function<void(int64_t)> report_;
  int64_t done_ = 0, reported_ = 0;
};

int Gen(const std::string& kind_name, const std::string& size_text, uint64_t seed, const std::string& out) {
  auto kind = mr::tools::ParseGenKind(kind_name);
  if (!kind.ok()) return Fail(kind.status(), 2);
  auto bytes = mr::tools::ParseBytes(size_text);
  if (!bytes.ok()) return Fail(bytes.status(), 2);
  std::ofstream file(out, std::ios::binary | std::ios::trunc);
  if (!file) return Fail(Status::IOError("cannot create '" + out + "'"));
  mr::tools::Progress progress("gen " + out);
  CountingBuf counting(file.rdbuf(), [&](int64_t done) { progress.Bytes(done, *bytes); });
  std::ostream counted(&counting);
  Status s = mr::tools::Generate(*kind, *bytes, seed, counted);
  counted.flush();
  file.close();
  progress.Finish();
  if (s.ok() && (!file || !counted)) s = Status::IOError("write to '" + out + "' failed");
  return s.ok() ? 0 : Fail(s);
}

}  // namespace

// The options of the commands in this file; CLI11 writes into it while parsing.
struct Options {
  Target target;
  bool json = false;
  bool quiet = false;                  // --quiet: no progress lines
  std::string gen_kind, gen_size, gen_out;
  uint64_t seed = 1;
  std::string worker_id;               // cluster decommission|recommission
};

int main(int argc, char** argv) {
  spdlog::set_level(spdlog::level::err);
  CLI::App app{"mrctl: the client of the mr MapReduce runtime: the DFS, jobs, the cluster's "
                "state, the scheduling policies and jobs it offers, test data."};
  app.set_version_flag("--version", mr::VersionLine("mrctl"));
  app.require_subcommand(1);
  Options o;
  app.add_option("--config", o.target.config_flag, "cluster file (default: $MR_CONFIG or .mr/cluster.toml above the current directory)");
  app.add_option("--master", o.target.master_flag, "master HOST:PORT of a remote cluster (without --config: secret from $MR_SECRET)");
  app.add_option("--tls-name", o.target.tls_name, "the name of this client's TLS certificate, {name} in cluster.tls_cert/tls_key (default: mrctl)");
  app.add_option("--datacenter", o.target.datacenter,
                 "the datacenter mrctl runs in: reads take the nearest replicas, hdfs placement "
                 "writes replica 1 there, tls = inter-dc leaves links inside it plain (default: "
                 "$MR_DATACENTER, else inferred from the workers' addresses for reads and "
                 "writes, else unknown)")
      ->envname("MR_DATACENTER");
  app.add_option("--node", o.target.node,
                 "the worker mrctl runs beside (its id): as --datacenter, and replica 1 on that "
                 "node (default: inferred from the workers' addresses)");
  app.add_option("--rack", o.target.rack,
                 "mrctl's rack in its datacenter, to prefer replicas there (default: none)");
  app.add_flag("-q,--quiet", o.quiet,
               "no progress lines on stderr (dfs put/get/cat, gen, job run --wait, job wait)");
  std::function<int()> action;
  mr::tools::AddDfsCommands(app, o.target, &action);
  mr::tools::AddCertCommands(app, &action);
  mr::tools::JobCommandOptions job_options;
  mr::tools::AddJobCommands(app, o.target, job_options, &action);
  mr::tools::AddSchedulerCommands(app, o.target, &action);

  auto* cluster = app.add_subcommand("cluster", "the cluster")->require_subcommand(1);
  auto* status = cluster->add_subcommand("status", "workers, datacenters, slots, liveness, blocks, disk");
  status->add_flag("--json", o.json, "print JSON");
  status->callback([&] {
    action = [&o] { return WithClient(o.target, [&](auto& c) { return ClusterStatus(c, o.json); }); };
  });

  auto* decommission = cluster->add_subcommand(
      "decommission", "drain a worker: no new blocks or tasks; its blocks are copied elsewhere");
  decommission->add_option("ID", o.worker_id, "worker id")->required();
  decommission->callback([&] {
    action = [&o] {
      return WithClient(o.target, [&](auto& c) { return SetDecommission(c, "cluster.Decommission", o.worker_id); });
    };
  });
  auto* recommission = cluster->add_subcommand("recommission", "put a decommissioning or decommissioned worker back in service");
  recommission->add_option("ID", o.worker_id, "worker id")->required();
  recommission->callback([&] {
    action = [&o] {
      return WithClient(o.target, [&](auto& c) { return SetDecommission(c, "cluster.Recommission", o.worker_id); });
    };
  });

  auto* schedulers = app.add_subcommand("schedulers", "the scheduling policies, their parameters and papers");
  schedulers->add_flag("--json", o.json, "print JSON");
  schedulers->callback([&] { action = [&o] { return Schedulers(o.json); }; });
  auto* jobs = app.add_subcommand("jobs", "the jobs a cluster can run, with their parameters");
  jobs->add_flag("--json", o.json, "print JSON");
  jobs->callback([&] { action = [&o] { return Jobs(o.json); }; });

  auto* gen = app.add_subcommand("gen", "generate deterministic test data: text, web or dna");
  gen->add_option("KIND", o.gen_kind, "text | web | dna")->required();
  gen->add_option("OUT", o.gen_out, "output file")->required();
  gen->add_option("--size", o.gen_size, "bytes, e.g. 100M")->required();
  gen->add_option("--seed", o.seed, "random seed")->capture_default_str();
  gen->callback([&] { action = [&o] { return Gen(o.gen_kind, o.gen_size, o.seed, o.gen_out); }; });

  // Shell completion, from the tree above; the words of a few values.
  mr::tools::CompletionWords words;
  std::vector<std::string> job_names;
  for (const mr::jobs::JobInfo* j : mr::jobs::RegisteredJobs()) job_names.push_back(j->name);
  words[app.get_subcommand("job")->get_subcommand("run")->get_option("NAME")] = job_names;
  words[gen->get_option("KIND")] = {"text", "web", "dna"};
  mr::tools::AddCompletionCommand(app, "mrctl", words, &action);
  // After the subcommands, which would inherit it.
  app.footer(
      "mrctl COMMAND --help describes a command (man mrctl: all of them).\n\n"
      "Finding the cluster:\n"
      "  The cluster file named by --config, else by $MR_CONFIG, else .mr/cluster.toml in\n"
      "  the current directory or a parent (deploy/local-cluster.sh writes one). With\n"
      "  --master HOST:PORT and no --config, the secret comes from $MR_SECRET.\n\n"
      "Exit status:\n"
      "  0  success\n"
      "  1  the operation failed\n"
      "  2  bad usage or configuration");

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return mr::tools::ReportParseError(app, e, "mrctl");
  }
  mr::tools::SetProgressEnabled(!o.quiet);
  return action ? action() : 2;
}

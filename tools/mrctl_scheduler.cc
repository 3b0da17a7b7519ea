// `mrctl scheduler set NAME [--param k=v ...]` and `mrctl scheduler show`:
// switch the master's policy between workloads without touching the DFS
// (docs/schedulers.md, "Switching policies"). The master checks everything
// (the name, each parameter against the registry, that no job runs or
// waits) and answers with the policy it now hosts.
#include <cstdio>
#include <nlohmann/json.hpp>

#include "proto/job.pb.h"
#include "tools/mrctl_common.h"

namespace mr::tools {
namespace {

void PrintChoice(const pb::SchedulerChoice& c, bool as_json) {
  if (as_json) {
    nlohmann::json params = nlohmann::json::object();
    for (const auto& [k, v] : c.params()) params[k] = v;
    std::printf("%s\n",
                nlohmann::json({{"name", c.name()}, {"params", params}, {"source", c.source()}})
                    .dump(2)
                    .c_str());
    return;
  }
  std::string params;
  for (const auto& [k, v] :
       std::map<std::string, std::string>(c.params().begin(), c.params().end())) {
    params += " " + k + "=" + v;
  }
  std::printf("scheduler %s (%s)%s%s\n", c.name().c_str(),
              c.source() == "set" ? "from the last `mrctl scheduler set`" : "from the cluster file",
              params.empty() ? "" : ":", params.c_str());
}

awaitable<Status> Set(dfs::DfsClient& c, pb::SchedulerChoice req, bool as_json) {
  pb::SchedulerChoice reply;
  MR_CO_RETURN_IF_ERROR(co_await c.CallMaster("sched.Set", req, &reply));
  PrintChoice(reply, as_json);
  co_return Status::OK();
}

awaitable<Status> Show(dfs::DfsClient& c, bool as_json) {
  const pb::Empty empty;  // named: no class temporaries in co_await (docs/development.md)
  pb::SchedulerChoice reply;
  MR_CO_RETURN_IF_ERROR(co_await c.CallMaster("sched.Show", empty, &reply));
  PrintChoice(reply, as_json);
  co_return Status::OK();
}

struct SchedulerOptions {
  std::string name;
  std::vector<std::string> params;
  bool json = false;
};

}  // namespace

void AddSchedulerCommands(CLI::App& app, Target& target, std::function<int()>* action) {
  static SchedulerOptions o;  // lives as long as the parse and the action
  auto* sched = app.add_subcommand("scheduler", "the policy the master hosts: show it, switch it")
                    ->require_subcommand(1);
  auto* set = sched->add_subcommand(
      "set", "switch the master's policy (only while no job runs or waits; the DFS is untouched)");
  set->add_option("NAME", o.name, "registry name (see `mrctl schedulers`)")->required();
  set->add_option("-p,--param", o.params, "policy parameter NAME=VALUE (repeatable)");
  set->add_flag("--json", o.json, "print JSON");
  set->callback([action, &target] {
    *action = [&target] {
      pb::SchedulerChoice req;
      req.set_name(o.name);
      for (const std::string& kv : o.params) {
        const size_t eq = kv.find('=');
        if (eq == std::string::npos || eq == 0) {
          return Fail(Status::InvalidArgument("--param wants NAME=VALUE, got '" + kv + "'"), 2);
        }
        (*req.mutable_params())[kv.substr(0, eq)] = kv.substr(eq + 1);
      }
      return WithClient(target, [req](dfs::DfsClient& c) { return Set(c, req, o.json); });
    };
  });
  auto* show =
      sched->add_subcommand("show", "the policy the master hosts, its parameters, and why");
  show->add_flag("--json", o.json, "print JSON");
  show->callback([action, &target] {
    *action = [&target] {
      return WithClient(target, [](dfs::DfsClient& c) { return Show(c, o.json); });
    };
  });
}

}  // namespace mr::tools

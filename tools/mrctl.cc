// mrctl: the one client. `mrctl --help` lists the commands.
//
// Exit codes: 0 success, 1 the operation failed, 2 bad usage or config.
#include <fcntl.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <set>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "common/config.h"
#include "common/version.h"
#include "dfs/client.h"
#include "dfs/namespace.h"
#include "jobs/job.h"
#include "scheduler/scheduler.h"
#include "tools/cli_support.h"
#include "tools/completion.h"
#include "tools/datagen.h"
#include "tools/mrctl_common.h"

namespace {

using mr::Status;
using mr::tools::Fail;
using mr::tools::Target;
using mr::tools::WithClient;
using nlohmann::json;
namespace fs = std::filesystem;

json InodeJson(const std::string& path, const mr::pb::INode& inode) {
  json j = {{"path", path},
            {"type", inode.kind() == mr::pb::INode::DIR ? "dir" : "file"},
            {"mtime_ms", inode.mtime_ms()}};
  if (inode.kind() == mr::pb::INode::FILE) {
    j["length"] = inode.length();
    j["replication"] = inode.replication();
    j["block_size"] = inode.block_size();
    j["input_type"] = inode.input_type();
    j["datacenter"] = inode.datacenter();  // replica 1 pinned here by the put; "" = none
  }
  return j;
}

// ------------------------------------------------------------------ dfs

mr::awaitable<Status> Put(mr::dfs::DfsClient& c, std::vector<std::string> locals, std::string dst,
                          mr::dfs::PutOptions options) {
  MR_CO_RETURN_IF_ERROR(co_await mr::tools::InferLocation(c));
  auto normalized = mr::dfs::NormalizePath(dst);
  if (!normalized.ok()) co_return normalized.status();
  const bool dir_syntax = dst.ends_with("/");  // "put a /newdir/" means into /newdir
  dst = *normalized;
  for (const auto& l : locals) {
    if (!fs::is_regular_file(l)) co_return Status::NotFound("local file '" + l + "' does not exist or is not a regular file");
  }
  auto existing = co_await c.Stat(dst);
  if (existing.ok() && existing->inode().kind() == mr::pb::INode::FILE &&
      (locals.size() > 1 || dir_syntax)) {
    co_return Status::FailedPrecondition("'" + dst + "' is a file, not a directory");
  }
  bool into_dir = locals.size() > 1 || dir_syntax ||
                  (existing.ok() && existing->inode().kind() == mr::pb::INode::DIR);
  if (into_dir && !existing.ok()) MR_CO_RETURN_IF_ERROR(co_await c.Mkdir(dst, true));
  for (const auto& l : locals) {
    const std::string target = into_dir ? (dst == "/" ? "" : dst) + "/" + fs::path(l).filename().string() : dst;
    MR_CO_RETURN_IF_ERROR(co_await c.Put(l, target, options));
  }
  co_return Status::OK();
}

// Streams a file, or every file of a directory in name order (part-00000, …).
// `sink` by value: callers pass temporaries, and a coroutine outlives them.
mr::awaitable<Status> Cat(mr::dfs::DfsClient& c, std::string path, mr::dfs::ByteSink sink) {
  MR_CO_RETURN_IF_ERROR(co_await mr::tools::InferLocation(c));
  auto stat = co_await c.Stat(path);
  if (!stat.ok()) co_return stat.status();
  if (stat->inode().kind() == mr::pb::INode::FILE) co_return co_await c.Read(path, sink);
  auto list = co_await c.List(path);
  if (!list.ok()) co_return list.status();
  for (const auto& e : list->entries()) {
    if (e.inode().kind() != mr::pb::INode::FILE || e.name().starts_with("_") || e.name().starts_with(".")) continue;
    MR_CO_RETURN_IF_ERROR(co_await c.Read(stat->path() + (stat->path() == "/" ? "" : "/") + e.name(), sink));
  }
  co_return Status::OK();
}

// dfs cat|get --stats: after the read, one line on stderr per datacenter
// other than mrctl's that blocks were read from, with the read rate
// estimate that ordered its replicas (docs/dfs.md, "Where reads come from").
void PrintReadStats(const mr::dfs::DfsClient& c) {
  const std::string& here = c.location().datacenter;
  if (here.empty()) {
    std::fprintf(stderr,
                 "mrctl: read stats: mrctl does not know its datacenter (--datacenter): "
                 "replicas were read in the master's order and not timed\n");
    return;
  }
  const auto stats = c.link_rates().Stats();
  if (stats.empty()) {
    std::fprintf(stderr, "mrctl: read stats: nothing read from outside %s\n", here.c_str());
  }
  for (const auto& s : stats) {
    std::fprintf(stderr,
                 "mrctl: read stats: %s -> %s: %lld reads, %lld bytes, %lld rate samples, "
                 "estimate %.2f MB/s\n",
                 s.datacenter.c_str(), here.c_str(), static_cast<long long>(s.reads),
                 static_cast<long long>(s.bytes), static_cast<long long>(s.samples),
                 s.estimate / 1e6);
  }
}

// Awaits `read`, then prints the read stats when asked, whether or not the
// read succeeded. `read` by value: the caller's awaitable is a temporary.
mr::awaitable<Status> WithReadStats(mr::dfs::DfsClient& c, mr::awaitable<Status> read, bool stats) {
  Status s = co_await std::move(read);
  if (stats) PrintReadStats(c);
  co_return s;
}

mr::awaitable<Status> Get(mr::dfs::DfsClient& c, const std::string& src, std::string local) {
  if (fs::is_directory(local)) {
    auto normalized = mr::dfs::NormalizePath(src);
    if (!normalized.ok()) co_return normalized.status();
    const std::string base = mr::dfs::BaseName(*normalized);
    local = (fs::path(local) / (base.empty() ? "root" : base)).string();
  }
  const std::string tmp = local + ".mrctl-partial";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) co_return Status::IOError("cannot create '" + tmp + "': " + std::strerror(errno));
  Status s = co_await Cat(c, src, [fd](std::span<const char> d) { return mr::tools::WriteFully(fd, d); });
  if (::close(fd) != 0 && s.ok()) s = Status::IOError("close '" + tmp + "': " + std::strerror(errno));
  if (s.ok() && std::rename(tmp.c_str(), local.c_str()) != 0) {
    s = Status::IOError("rename to '" + local + "': " + std::strerror(errno));
  }
  if (!s.ok()) ::unlink(tmp.c_str());  // never leave a partial copy behind
  co_return s;
}

mr::awaitable<Status> Ls(mr::dfs::DfsClient& c, const std::string& path, bool as_json) {
  auto list = co_await c.List(path);
  if (!list.ok()) co_return list.status();
  json out = json::array();
  for (const auto& e : list->entries()) {
    if (as_json) {
      out.push_back(InodeJson(e.name(), e.inode()));
      continue;
    }
    const bool dir = e.inode().kind() == mr::pb::INode::DIR;
    std::printf("%s %14s  %-4s  %s%s\n", dir ? "d" : "-", dir ? "-" : std::to_string(e.inode().length()).c_str(),
                dir ? "" : e.inode().input_type().c_str(), e.name().c_str(), dir ? "/" : "");
  }
  if (as_json) std::printf("%s\n", out.dump(2).c_str());
  co_return Status::OK();
}

// For each datacenter, how many of the file's blocks have a live replica
// there (good or corrupt), by datacenter name.
std::map<std::string, int> BlocksByDatacenter(const mr::pb::StatReply& stat) {
  std::map<std::string, int> count;
  for (const auto& b : stat.blocks()) {
    std::set<std::string> dcs;
    for (const auto& r : b.replicas()) dcs.insert(r.datacenter());
    for (const auto& r : b.corrupt_replicas()) dcs.insert(r.datacenter());
    for (const auto& dc : dcs) ++count[dc];
  }
  return count;
}

mr::awaitable<Status> StatCmd(mr::dfs::DfsClient& c, const std::string& path, bool as_json) {
  auto stat = co_await c.Stat(path);
  if (!stat.ok()) co_return stat.status();
  const auto& inode = stat->inode();
  if (as_json) {
    json j = InodeJson(stat->path(), inode);
    json blocks = json::array();
    for (const auto& b : stat->blocks()) {
      json replicas = json::array(), dcs = json::array();
      for (const auto& r : b.replicas()) {
        replicas.push_back(r.node_id());
        dcs.push_back(r.datacenter());
      }
      json corrupt = json::array();
      for (const auto& r : b.corrupt_replicas()) corrupt.push_back(r.node_id());
      blocks.push_back({{"id", b.id()}, {"offset", b.offset()}, {"bytes", b.bytes()},
                        {"replicas", replicas}, {"datacenters", dcs},
                        {"corrupt_replicas", corrupt}});
    }
    if (inode.kind() == mr::pb::INode::FILE) {
      j["blocks"] = blocks;
      json by_dc = json::object();
      for (const auto& [dc, n] : BlocksByDatacenter(*stat)) by_dc[dc] = n;
      j["blocks_by_datacenter"] = by_dc;
    }
    std::printf("%s\n", j.dump(2).c_str());
    co_return Status::OK();
  }
  if (inode.kind() == mr::pb::INode::DIR) {
    std::printf("%s: directory\n", stat->path().c_str());
    co_return Status::OK();
  }
  std::printf("%s: file, %lld bytes (%s), type %s, replication %d, block size %s, %d blocks\n",
              stat->path().c_str(), static_cast<long long>(inode.length()),
              mr::tools::HumanBytes(inode.length()).c_str(), inode.input_type().c_str(),
              inode.replication(), mr::tools::HumanBytes(inode.block_size()).c_str(),
              stat->blocks_size());
  std::printf("%6s %10s %14s %12s  %s\n", "block", "id", "offset", "bytes", "replicas (datacenter)");
  for (int i = 0; i < stat->blocks_size(); ++i) {
    const auto& b = stat->blocks(i);
    std::string where;
    for (const auto& r : b.replicas()) where += r.node_id() + "(" + r.datacenter() + ") ";
    if (b.replicas().empty() && !b.corrupt_replicas().empty()) where = "NO GOOD REPLICA ";
    for (const auto& r : b.corrupt_replicas()) {
      where += r.node_id() + "(" + r.datacenter() + ",corrupt) ";
    }
    if (where.empty()) where = "NO LIVE REPLICA";
    std::printf("%6d %10llu %14lld %12lld  %s\n", i, static_cast<unsigned long long>(b.id()),
                static_cast<long long>(b.offset()), static_cast<long long>(b.bytes()), where.c_str());
  }
  std::string by_dc;
  for (const auto& [dc, n] : BlocksByDatacenter(*stat)) {
    by_dc += (by_dc.empty() ? "" : ", ") + dc + " " + std::to_string(n) + "/" +
             std::to_string(stat->blocks_size());
  }
  if (!by_dc.empty()) std::printf("blocks with a live replica in: %s\n", by_dc.c_str());
  if (!inode.datacenter().empty()) {
    std::printf("replica 1 of every block placed in %s (dfs put --datacenter)\n",
                inode.datacenter().c_str());
  }
  co_return Status::OK();
}

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
                         {"admin_state", w.admin_state().empty() ? "in-service" : w.admin_state()}});
    }
    json j = {{"cluster", st->cluster_name()}, {"placement", st->placement()}, {"files", st->files()},
              {"blocks", st->blocks()}, {"under_replicated_blocks", st->under_replicated_blocks()},
              {"workers", workers}};
    std::printf("%s\n", j.dump(2).c_str());
    co_return Status::OK();
  }
  std::printf("cluster %s: %lld files, %lld blocks (%lld under-replicated), placement %s\n",
              st->cluster_name().c_str(), static_cast<long long>(st->files()),
              static_cast<long long>(st->blocks()), static_cast<long long>(st->under_replicated_blocks()),
              st->placement().c_str());
  std::printf("%-8s %-21s %-8s %-6s %5s %5s %-5s %8s %12s  %s\n", "worker", "address", "dc", "rack", "maps",
              "reds", "state", "blocks", "disk used", "admin");
  for (const auto& w : st->workers()) {
    std::printf("%-8s %-21s %-8s %-6s %5d %5d %-5s %8lld %12s  %s\n", w.worker().id().c_str(),
                w.worker().address().c_str(), w.worker().datacenter().c_str(),
                w.worker().rack().empty() ? "-" : w.worker().rack().c_str(), w.worker().map_slots(),
                w.worker().reduce_slots(), w.live() ? "live" : "dead", static_cast<long long>(w.blocks()),
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

// `mrctl schedulers`: every policy the master can run, from the registry.
int Schedulers(bool as_json) {
  json all = json::array();
  for (const mr::sched::PolicyInfo* p : mr::sched::RegisteredPolicies()) {
    json params = json::array();
    for (const auto& spec : p->params) {
      params.push_back({{"name", spec.name},
                        {"default", mr::sched::ParamToString(spec.default_value)},
                        {"type", mr::sched::ParamTypeName(spec.default_value)},
                        {"help", spec.help}});
    }
    all.push_back({{"name", p->name}, {"paper", p->paper}, {"params", params}});
  }
  if (as_json) {
    std::printf("%s\n", all.dump(2).c_str());
    return 0;
  }
  for (const auto& p : all) {
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

int Gen(const std::string& kind_name, const std::string& size_text, uint64_t seed, const std::string& out) {
  auto kind = mr::tools::ParseGenKind(kind_name);
  if (!kind.ok()) return Fail(kind.status(), 2);
  auto bytes = mr::tools::ParseBytes(size_text);
  if (!bytes.ok()) return Fail(bytes.status(), 2);
  std::ofstream file(out, std::ios::binary | std::ios::trunc);
  if (!file) return Fail(Status::IOError("cannot create '" + out + "'"));
  Status s = mr::tools::Generate(*kind, *bytes, seed, file);
  file.close();
  if (s.ok() && !file) s = Status::IOError("write to '" + out + "' failed");
  return s.ok() ? 0 : Fail(s);
}

}  // namespace

// Every option of every command; CLI11 writes into it while parsing.
struct Options {
  Target target;
  std::vector<std::string> put_paths;  // LOCAL... DFSPATH
  int replication = 0;
  std::string block_size;
  bool force = false;
  std::string path = "/";              // the DFS path of ls, cat, rm, mkdir, stat, get
  std::string local;                   // get's destination
  bool recursive = false;              // rm -r
  bool parents = false;                // mkdir -p
  bool json = false;
  std::string gen_kind, gen_size, gen_out;
  uint64_t seed = 1;
  std::string worker_id;               // cluster decommission|recommission
  std::string put_datacenter;          // dfs put --datacenter
  bool read_stats = false;             // dfs cat|get --stats
};

int RunPut(Options& o) {
  mr::dfs::PutOptions put;
  put.replication = o.replication;
  put.overwrite = o.force;
  put.datacenter = o.put_datacenter;
  if (!o.block_size.empty()) {
    auto b = mr::tools::ParseBytes(o.block_size);
    if (!b.ok()) return Fail(b.status(), 2);
    put.block_size = *b;
  }
  std::vector<std::string> locals(o.put_paths.begin(), o.put_paths.end() - 1);
  return WithClient(o.target, [&](auto& c) { return Put(c, locals, o.put_paths.back(), put); });
}

// Adds the `dfs` commands. Each callback stores what to run in *action.
void AddDfsCommands(CLI::App& app, Options& o, std::function<int()>* action) {
  auto on = [action](CLI::App* cmd, std::function<int()> fn) {
    cmd->callback([action, fn] { *action = fn; });
  };
  auto* dfs = app.add_subcommand("dfs", "the distributed file system")->require_subcommand(1);

  auto* put = dfs->add_subcommand("put", "copy local files into the DFS");
  put->add_option("paths", o.put_paths, "LOCAL... DFSPATH (a DFSPATH ending in / is a directory)")
      ->required()->expected(2, -1);
  put->add_option("-r,--replication", o.replication, "replicas per block (default: cluster file)");
  put->add_option("-b,--block-size", o.block_size, "block size, e.g. 64M (default: cluster file)");
  put->add_flag("-f,--force", o.force, "overwrite an existing file");
  put->add_option("--datacenter", o.put_datacenter,
                  "put replica 1 of every block in this datacenter (default: the placement "
                  "policy decides)");
  on(put, [&o] { return RunPut(o); });

  auto* get = dfs->add_subcommand("get", "copy a DFS file (or a directory's files, concatenated) to a local file");
  get->add_option("DFSPATH", o.path, "the DFS file or directory")->required();
  get->add_option("LOCAL", o.local, "the local file (or directory to put it in)")->required();
  get->add_flag("--stats", o.read_stats,
                "after the copy, print on stderr the bytes read from each other datacenter and "
                "its measured read rate");
  on(get, [&o] {
    return WithClient(
        o.target, [&](auto& c) { return WithReadStats(c, Get(c, o.path, o.local), o.read_stats); });
  });

  auto* cat = dfs->add_subcommand("cat", "print a DFS file, or a directory's files in name order");
  cat->add_option("PATH", o.path, "a DFS file or directory")->required();
  cat->add_flag("--stats", o.read_stats,
                "after the file, print on stderr the bytes read from each other datacenter and "
                "its measured read rate");
  on(cat, [&o] {
    return WithClient(o.target, [&](auto& c) {
      return WithReadStats(
          c, Cat(c, o.path, [](std::span<const char> d) { return mr::tools::WriteFully(1, d); }),
          o.read_stats);
    });
  });

  auto* ls = dfs->add_subcommand("ls", "list a directory");
  ls->add_option("PATH", o.path, "a DFS directory (default: /)");
  ls->add_flag("--json", o.json, "print JSON");
  on(ls, [&o] { return WithClient(o.target, [&](auto& c) { return Ls(c, o.path, o.json); }); });

  auto* rm = dfs->add_subcommand("rm", "remove a file or directory");
  rm->add_option("PATH", o.path, "a DFS file or directory")->required();
  rm->add_flag("-r,--recursive", o.recursive, "remove a non-empty directory and everything in it");
  on(rm, [&o] { return WithClient(o.target, [&](auto& c) { return c.Delete(o.path, o.recursive); }); });

  auto* mkdir = dfs->add_subcommand("mkdir", "make a directory");
  mkdir->add_option("PATH", o.path, "the DFS directory to make")->required();
  mkdir->add_flag("-p,--parents", o.parents, "make parents as needed; no error if it exists");
  on(mkdir, [&o] { return WithClient(o.target, [&](auto& c) { return c.Mkdir(o.path, o.parents); }); });

  auto* stat = dfs->add_subcommand("stat", "show a file's type tag and every block with its replicas");
  stat->add_option("PATH", o.path, "a DFS file or directory")->required();
  stat->add_flag("--json", o.json, "print JSON");
  on(stat, [&o] { return WithClient(o.target, [&](auto& c) { return StatCmd(c, o.path, o.json); }); });
}

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
  std::function<int()> action;
  AddDfsCommands(app, o, &action);
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
    return app.exit(e) == 0 ? 0 : 2;
  }
  return action ? action() : 2;
}

// bench/master_scale's namespace run: a big namespace (files × blocks,
// metadata only, the fleet holding every replica), then the master's RSS,
// NNThroughputBenchmark's create/open/delete, `dfs ls` of a big directory,
// and a restart until every block report is in.
#include <fmt/format.h>

#include "bench/master_scale/dfs_load.h"
#include "bench/master_scale/run_support.h"
#include "bench/master_scale/scenarios.h"
#include "proto/cluster.pb.h"
#include "proto/dfs.pb.h"

namespace mr::bench {
namespace {

std::string NsPath(const ScaleOptions& o, int64_t i) {
  return fmt::format("/ns/d{}/f{}", i / o.dir_entries, i);
}

// Seconds until every worker of the fleet is live and the master knows
// `replicas` replicas in all (every full block report is in).
awaitable<Result<double>> TimeToReports(Connection& conn, int workers, int64_t replicas,
                                        Steady::time_point start) {
  while (true) {
    pb::ClusterStatusReply status;
    MR_CO_RETURN_IF_ERROR(co_await conn.Call("cluster.Status", pb::Empty(), &status));
    int live = 0;
    int64_t known = 0;
    for (const pb::WorkerStatus& w : status.workers()) {
      live += w.live();
      known += w.blocks();
    }
    if (live == workers && known >= replicas) co_return MsSince(start) / 1000;
    if (MsSince(start) > 600000) co_return Status::TimedOut(fmt::format("{} of {} replicas reported", known, replicas));
    co_await Sleep(std::chrono::milliseconds(200));
  }
}

// NNThroughputBenchmark's three phases over `o.ops` fresh files.
awaitable<Status> NameNodeOps(const ScaleOptions& o, const ClusterConfig& config,
                              const RpcOptions& rpc, Report& report) {
  auto path = [](int64_t i) { return fmt::format("/nnt/d{}/f{}", i / 10000, i); };
  const HostPort& m = config.master.address;
  auto create = co_await TimeOps(m, rpc, o.clients, o.ops,
                                 [&](Connection& c, int64_t i) { return CreateEmpty(c, path(i)); });
  if (!create.ok()) co_return create.status().WithContext("create");
  auto open = co_await TimeOps(m, rpc, o.clients, o.ops,
                               [&](Connection& c, int64_t i) { return Open(c, path(i)); });
  if (!open.ok()) co_return open.status().WithContext("open");
  auto remove = co_await TimeOps(m, rpc, o.clients, o.ops,
                                 [&](Connection& c, int64_t i) { return Remove(c, path(i)); });
  if (!remove.ok()) co_return remove.status().WithContext("delete");
  report.Add("create_ops_per_s", *create);
  report.Add("open_ops_per_s", *open);
  report.Add("delete_ops_per_s", *remove);
  co_return Status::OK();
}

awaitable<bool> Drive(const ScaleOptions& o, const ClusterConfig& config, MasterProcess& master,
                      Fleet& fleet) {
  const RpcOptions rpc = RpcOptions::FromConfig(config, "master_scale");
  auto conn = co_await ConnectWithin(config.master.address, rpc, std::chrono::seconds(60));
  if (!conn.ok()) co_return Fail("the master does not answer: " + conn.status().ToString());
  fleet.Start();
  if (!co_await WaitFor([&] { return fleet.Registered() == o.fleet.workers; }, std::chrono::minutes(10))) {
    co_return Fail("the fleet did not register");
  }
  Report report;
  report.Add("workers", o.fleet.workers);
  report.Add("files", o.files);
  report.Add("blocks", o.files * o.blocks_per_file);
  const double rss0 = static_cast<double>(master.RssBytes()) / (1 << 20);
  const auto t_build = Steady::now();
  const int builders = o.build_clients > 0 ? o.build_clients : o.clients;
  report.Add("build_clients", builders);
  auto built = co_await TimeOps(config.master.address, rpc, builders, o.files, [&](Connection& c, int64_t i) {
    return WriteMetadataFile(c, &fleet, NsPath(o, i), o.blocks_per_file, config.dfs.block_size);
  });
  if (!built.ok()) co_return Fail("building the namespace: " + built.status().ToString());
  report.Add("build_s", MsSince(t_build) / 1000);
  report.Add("build_files_per_s", *built);
  report.Add("rss_empty_mib", rss0);
  report.Add("rss_built_mib", static_cast<double>(master.RssBytes()) / (1 << 20));

  if (Status s = co_await NameNodeOps(o, config, rpc, report); !s.ok()) {
    co_return Fail("NNThroughputBenchmark's phases: " + s.ToString());
  }

  if (Status r = co_await Refresh(*conn, config.master.address, rpc); !r.ok()) co_return Fail(r.ToString());
  pb::PathRequest ls;
  ls.set_path("/ns/d0");
  pb::ListReply listed;
  const auto t_ls = Steady::now();
  Status s = co_await (*conn)->Call("dfs.List", ls, &listed);
  report.Add("ls_ms", MsSince(t_ls));
  report.Add("ls_entries", listed.entries_size());
  report.Add("ls_status", s.ok() ? std::string("ok") : s.ToString());

  // Restart: RocksDB reopened, then every worker registers again with its
  // full block report (a worker retries one heartbeat interval after it
  // lost the master, as mr-worker does).
  (*conn)->Close();
  master.Stop();
  const auto t_restart = Steady::now();
  if (Status started = master.Start(); !started.ok()) co_return Fail(started.ToString());
  conn = co_await ConnectWithin(config.master.address, rpc, std::chrono::minutes(5));
  if (!conn.ok()) co_return Fail("the restarted master does not answer: " + conn.status().ToString());
  report.Add("restart_answering_s", MsSince(t_restart) / 1000);
  const int64_t replicas = o.files * o.blocks_per_file * config.dfs.replication;
  auto reports = co_await TimeToReports(**conn, o.fleet.workers, replicas, t_restart);
  report.Add("restart_serving_s", reports.ok() ? *reports : -1);
  report.Add("rss_restarted_mib", static_cast<double>(master.RssBytes()) / (1 << 20));
  report.Add("register_errors", fleet.stats().register_errors);
  report.Add("peak_rss_restarted_mib", static_cast<double>(master.PeakRssBytes()) / (1 << 20));
  report.Print();
  if (!reports.ok()) co_return Fail(reports.status().ToString());
  co_return s.ok();
}

}  // namespace

bool RunNamespace(const ScaleOptions& o) {
  return RunAgainstMaster(o, [&](const ClusterConfig& config, MasterProcess& master, Fleet& fleet) {
    return Drive(o, config, master, fleet);
  });
}

}  // namespace mr::bench

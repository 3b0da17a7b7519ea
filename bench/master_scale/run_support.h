// Small helpers the runs of bench/master_scale share: waits, percentiles,
// the JSON report line, and the frame every run has (a master process,
// the fleet, one io_context).
#pragma once

#include <chrono>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "bench/master_scale/fleet.h"
#include "bench/master_scale/master_process.h"
#include "bench/master_scale/scenarios.h"

namespace mr::bench {

double MsSince(Steady::time_point t);
// The p-th percentile (nearest rank) of `v`; 0 when empty.
double Percentile(std::vector<double> v, double p);
awaitable<void> Sleep(Steady::duration d);
// Polls `ready` every 100 ms; false when `limit` passes first.
awaitable<bool> WaitFor(std::function<bool()> ready, Steady::duration limit);
awaitable<Result<std::unique_ptr<Connection>>> ConnectWithin(const HostPort& address,
                                                             const RpcOptions& rpc,
                                                             Steady::duration limit);
// `conn` again, or a new connection when the master may have closed it for
// idleness (Connection::IsFresh).
awaitable<Status> Refresh(std::unique_ptr<Connection>& conn, const HostPort& address,
                          const RpcOptions& rpc);
// Prints "master_scale: <why>" to stderr; false.
bool Fail(const std::string& why);

// The figures of a run, printed as one JSON object.
class Report {
 public:
  void Add(const std::string& key, double value);
  void Add(const std::string& key, int64_t value) { Add(key, static_cast<double>(value)); }
  void Add(const std::string& key, int value) { Add(key, static_cast<double>(value)); }
  void Add(const std::string& key, const std::string& value);
  void Print() const;

 private:
  std::vector<std::pair<std::string, std::string>> fields_;
};

// Seconds from now until the master lists every worker the fleet stopped
// as not live (cluster.Status, polled every second), within `limit`. Once
// a second, not faster: at 4,000 workers a cluster.Status takes ~13 ms of
// the master's one thread, and a poll every 250 ms held it 5 % of the time
// (docs/benchmarks.md, "Where a heartbeat's p99 goes").
awaitable<Result<double>> TimeToNoticeDead(Connection& conn, const Fleet& fleet,
                                           const ScaleOptions& o, Steady::duration limit);

// The master's members (cluster.Status): id → not live. Seconds from now
// until every registered worker's view (Fleet::ViewsDiffering; REQUIRES
// check_views) is that list, polled every 250 ms, within `limit`.
awaitable<Result<double>> WaitViewsAgree(Connection& conn, const Fleet& fleet,
                                         Steady::duration limit);

// Starts the master of o.config_path, builds the fleet, runs `drive` on one
// io_context until it ends, then stops the fleet and the master.
using Driver = std::function<awaitable<bool>(const ClusterConfig&, MasterProcess&, Fleet&)>;
bool RunAgainstMaster(const ScaleOptions& o, Driver drive);

}  // namespace mr::bench

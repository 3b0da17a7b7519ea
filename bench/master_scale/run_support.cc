#include "bench/master_scale/run_support.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <map>
#include <set>

#include <fmt/format.h>

#include "proto/cluster.pb.h"

namespace mr::bench {

double MsSince(Steady::time_point t) {
  return std::chrono::duration<double, std::milli>(Steady::now() - t).count();
}

double Percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t rank = static_cast<size_t>(std::ceil(p / 100 * static_cast<double>(v.size())));
  return v[std::clamp<size_t>(rank, 1, v.size()) - 1];
}

awaitable<void> Sleep(Steady::duration d) {
  asio::steady_timer timer(co_await asio::this_coro::executor, d);
  co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
}

awaitable<bool> WaitFor(std::function<bool()> ready, Steady::duration limit) {
  const auto deadline = Steady::now() + limit;
  while (!ready()) {
    if (Steady::now() > deadline) co_return false;
    co_await Sleep(std::chrono::milliseconds(100));
  }
  co_return true;
}

awaitable<Result<std::unique_ptr<Connection>>> ConnectWithin(const HostPort& address,
                                                             const RpcOptions& rpc,
                                                             Steady::duration limit) {
  const auto deadline = Steady::now() + limit;
  while (true) {
    auto conn = co_await Connect(address, rpc);
    if (conn.ok() || Steady::now() > deadline) co_return conn;
    co_await Sleep(std::chrono::milliseconds(50));
  }
}

awaitable<Status> Refresh(std::unique_ptr<Connection>& conn, const HostPort& address,
                          const RpcOptions& rpc) {
  if (conn && conn->IsFresh()) co_return Status::OK();
  auto fresh = co_await Connect(address, rpc);
  if (!fresh.ok()) co_return fresh.status();
  conn = std::move(fresh).value();
  co_return Status::OK();
}

bool Fail(const std::string& why) {
  std::fprintf(stderr, "master_scale: %s\n", why.c_str());
  return false;
}

void Report::Add(const std::string& key, double value) {
  fields_.emplace_back(key, std::isfinite(value) ? fmt::format("{:.6g}", value) : "null");
}

void Report::Add(const std::string& key, const std::string& value) {
  fields_.emplace_back(key, "\"" + value + "\"");
}

void Report::Print() const {
  std::string line = "{";
  for (const auto& [k, v] : fields_) line += (line.size() > 1 ? ", \"" : "\"") + k + "\": " + v;
  std::printf("%s}\n", line.c_str());
  std::fflush(stdout);
}

awaitable<Result<double>> TimeToNoticeDead(Connection& conn, const Fleet& fleet,
                                           const ScaleOptions& o, Steady::duration limit) {
  (void)o;
  const auto start = Steady::now();
  const std::set<std::string> stopped(fleet.stopped_ids().begin(), fleet.stopped_ids().end());
  if (stopped.empty()) co_return 0.0;
  while (Steady::now() - start < limit) {
    pb::ClusterStatusReply status;
    MR_CO_RETURN_IF_ERROR(co_await conn.Call("cluster.Status", pb::Empty(), &status));
    size_t dead = 0;
    for (const pb::WorkerStatus& w : status.workers()) {
      dead += stopped.count(w.worker().id()) > 0 && !w.live() ? 1 : 0;
    }
    if (dead == stopped.size()) co_return MsSince(start) / 1000;
    co_await Sleep(std::chrono::seconds(1));
  }
  co_return Status::TimedOut("the stopped workers were not declared dead within the window");
}

awaitable<Result<double>> WaitViewsAgree(Connection& conn, const Fleet& fleet,
                                         Steady::duration limit) {
  const auto start = Steady::now();
  int differing = 0;
  while (Steady::now() - start < limit) {
    pb::ClusterStatusReply status;
    MR_CO_RETURN_IF_ERROR(co_await conn.Call("cluster.Status", pb::Empty(), &status));
    std::map<std::string, bool> dead_by_id;
    for (const pb::WorkerStatus& w : status.workers()) dead_by_id[w.worker().id()] = !w.live();
    differing = fleet.ViewsDiffering(dead_by_id);
    if (differing == 0) co_return MsSince(start) / 1000;
    co_await Sleep(std::chrono::milliseconds(250));
  }
  co_return Status::TimedOut(fmt::format("{} workers' views of the members still differ from the "
                                         "master's list", differing));
}

bool RunAgainstMaster(const ScaleOptions& o, Driver drive) {
  auto config = LoadClusterConfig(o.config_path);
  if (!config.ok()) return Fail(config.status().ToString());
  MasterProcess master(o.master_binary, o.config_path, o.log_path);
  if (Status s = master.Start(); !s.ok()) return Fail(s.ToString());
  asio::io_context io;
  Fleet fleet(io, *config, o.fleet);
  bool ok = false;
  // Interrupted: the master is stopped all the same.
  asio::signal_set signals(io, SIGINT, SIGTERM);
  signals.async_wait([&](const boost::system::error_code& ec, int) {
    if (!ec) io.stop();
  });
  asio::co_spawn(
      io,
      [&]() -> awaitable<void> {
        ok = co_await drive(*config, master, fleet);
        fleet.StopAll();
        signals.cancel();
        io.stop();
      },
      [&](std::exception_ptr e) {
        if (e) {
          try {
            std::rethrow_exception(e);
          } catch (const std::exception& x) {
            Fail(std::string("exception: ") + x.what());
          }
          io.stop();
        }
      });
  io.run();
  master.Stop();
  return ok;
}

}  // namespace mr::bench

// bench/master_scale's join run (issue 29): the whole fleet registers with
// a fresh master, and every worker heartbeats until its view of the members
// (common/member_view.h) is the master's list. Measures how long joining
// takes and how many members' entries the replies carried: before the
// delta (master/membership.cc, FillMembers) every registration sent the
// whole list to every other worker's next beat, O(workers²) per interval.
#include <fmt/format.h>

#include "bench/master_scale/master_process.h"
#include "bench/master_scale/run_support.h"
#include "bench/master_scale/scenarios.h"

namespace mr::bench {
namespace {

awaitable<bool> DriveJoin(const ScaleOptions& o, const ClusterConfig& config, MasterProcess& master,
                          Fleet& fleet) {
  const RpcOptions rpc = RpcOptions::FromConfig(config, "master_scale");
  auto conn = co_await ConnectWithin(config.master.address, rpc, std::chrono::seconds(60));
  if (!conn.ok()) co_return Fail("the master does not answer: " + conn.status().ToString());
  const double cpu0 = master.CpuSeconds();
  const auto t0 = Steady::now();
  fleet.Start();
  if (!co_await WaitFor([&] { return fleet.Registered() == o.fleet.workers; }, std::chrono::minutes(20))) {
    co_return Fail(fmt::format("only {} of {} workers registered", fleet.Registered(), o.fleet.workers));
  }
  const double register_s = MsSince(t0) / 1000;
  if (Status s = co_await Refresh(*conn, config.master.address, rpc); !s.ok()) co_return Fail(s.ToString());
  auto views = co_await WaitViewsAgree(**conn, fleet, std::chrono::minutes(10));
  const double views_s = MsSince(t0) / 1000;
  const double cpu_s = master.CpuSeconds() - cpu0;
  const FleetStats& st = fleet.stats();
  Report report;
  report.Add("workers", o.fleet.workers);
  report.Add("register_s", register_s);
  report.Add("views_agree_s", views.ok() ? views_s : -1);
  report.Add("master_cpu_s", cpu_s);
  report.Add("master_rss_mib", static_cast<double>(master.RssBytes()) / (1 << 20));
  report.Add("register_member_entries", st.register_member_entries);
  report.Add("member_lists", st.member_lists);
  report.Add("member_deltas", st.member_deltas);
  report.Add("member_entries", st.member_entries);
  report.Add("member_entries_per_worker", static_cast<double>(st.member_entries) / o.fleet.workers);
  report.Add("beat_errors", st.beat_errors);
  report.Add("reregisters", st.reregisters);
  report.Print();
  if (!views.ok()) co_return Fail(views.status().ToString());
  co_return st.beat_errors == 0;
}

}  // namespace

bool RunJoin(ScaleOptions o) {
  o.fleet.check_views = true;
  return RunAgainstMaster(o, [&](const ClusterConfig& config, MasterProcess& master, Fleet& fleet) {
    return DriveJoin(o, config, master, fleet);
  });
}

}  // namespace mr::bench

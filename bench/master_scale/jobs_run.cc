// bench/master_scale's jobs run: the fleet registers, input files are
// written (metadata only), jobs are submitted through job.Submit, and the
// master is measured over a window while the fleet runs their tasks.
#include <algorithm>
#include <array>
#include <cstdio>

#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include "bench/master_scale/dfs_load.h"
#include "bench/master_scale/master_process.h"
#include "bench/master_scale/run_support.h"
#include "bench/master_scale/scenarios.h"
#include "bench/master_scale/scrape.h"
#include "proto/job.pb.h"

namespace mr::bench {
namespace {

// Writes the jobs' input files, four at a time.
awaitable<Status> WriteInputs(const ScaleOptions& o, const ClusterConfig& config,
                              const RpcOptions& rpc, Fleet& fleet) {
  const int per_job = o.maps / o.jobs;
  auto rate = co_await TimeOps(config.master.address, rpc, 4, o.jobs,
                               [&, per_job](Connection& conn, int64_t j) {
                                 return WriteMetadataFile(conn, &fleet, "/scale/in/j" + std::to_string(j),
                                                          per_job, config.dfs.block_size);
                               });
  co_return rate.status();
}

// Submits the jobs one after another; the latency of each.
awaitable<Result<std::vector<double>>> SubmitJobs(const ScaleOptions& o, Connection& conn) {
  std::vector<double> ms;
  for (int j = 0; j < o.jobs; ++j) {
    pb::JobSpec spec;
    spec.set_job("wordcount");
    spec.add_inputs("/scale/in/j" + std::to_string(j));
    spec.set_output("/scale/out/j" + std::to_string(j));
    spec.set_reducers(o.reducers);
    pb::SubmitJobReply reply;
    const auto t = Steady::now();
    MR_CO_RETURN_IF_ERROR(co_await conn.Call("job.Submit", spec, &reply));
    ms.push_back(MsSince(t));
  }
  co_return ms;
}

// Until every job has ended: true when all succeeded.
awaitable<Result<bool>> WaitJobsDone(Connection& conn, int timeout_s, std::string* states) {
  const auto deadline = Steady::now() + std::chrono::seconds(timeout_s);
  while (true) {
    pb::JobListReply list;
    MR_CO_RETURN_IF_ERROR(co_await conn.Call("job.List", pb::Empty(), &list));
    int running = 0, succeeded = 0;
    for (const pb::JobRecord& r : list.jobs()) {
      running += r.state() == "running";
      succeeded += r.state() == "succeeded";
    }
    *states = fmt::format("{} succeeded of {}", succeeded, list.jobs_size());
    if (running == 0) co_return succeeded == list.jobs_size();
    if (Steady::now() > deadline) co_return false;
    co_await Sleep(std::chrono::seconds(1));
  }
}

// The master's own histograms a window is judged by (its /metrics).
struct MasterHistograms {
  ScrapedHistogram beat;          // cluster.Heartbeat, arrival to reply (its sync wait included)
  ScrapedHistogram status;        // cluster.Status (TimeToNoticeDead polls it)
  ScrapedHistogram lag;           // mr_loop_lag_seconds
  ScrapedHistogram housekeeping;  // mr_master_housekeeping_seconds
  // mr_master_housekeeping_step_seconds, by kSteps (empty from a master
  // older than the family: --baseline-master)
  static constexpr std::array<const char*, 5> kSteps = {"liveness", "decommissions", "leases",
                                                        "repairs", "replication"};
  std::array<ScrapedHistogram, kSteps.size()> steps;

  MasterHistograms Since(const MasterHistograms& b) const {
    MasterHistograms d{beat.Since(b.beat), status.Since(b.status), lag.Since(b.lag),
                       housekeeping.Since(b.housekeeping), {}};
    for (size_t i = 0; i < steps.size(); ++i) d.steps[i] = steps[i].Since(b.steps[i]);
    return d;
  }
};

awaitable<Result<MasterHistograms>> ScrapeMaster(const ClusterConfig& config) {
  auto text = co_await HttpGet(config.master.http_address, "/metrics");
  if (!text.ok()) co_return text.status();
  MasterHistograms m{ParseHistogram(*text, "mr_rpc_duration_seconds", "method=\"cluster.Heartbeat\""),
                     ParseHistogram(*text, "mr_rpc_duration_seconds", "method=\"cluster.Status\""),
                     ParseHistogram(*text, "mr_loop_lag_seconds"),
                     ParseHistogram(*text, "mr_master_housekeeping_seconds"),
                     {}};
  for (size_t i = 0; i < m.steps.size(); ++i) {
    m.steps[i] = ParseHistogram(*text, "mr_master_housekeeping_step_seconds",
                                fmt::format("step=\"{}\"", MasterHistograms::kSteps[i]));
  }
  co_return m;
}

// Where the beats' latency went: the master's view of the window beside the
// fleet's (docs/benchmarks.md, "Where a heartbeat's p99 goes"). The
// master's histograms have buckets, so its quantiles are "at most".
void ReportWhere(Report& report, const MasterHistograms& m, const FleetStats& st) {
  constexpr double kSlow = 0.0256;  // a bound of mr_rpc_duration_seconds's buckets
  const auto slow = std::count_if(st.beat_ms.begin(), st.beat_ms.end(), [](double ms) { return ms > kSlow * 1000; });
  report.Add("beats_over_25ms_pct", st.beat_ms.empty() ? 0.0 : 100.0 * static_cast<double>(slow) / static_cast<double>(st.beat_ms.size()));
  report.Add("master_beats_over_25ms_pct", 100 * m.beat.ShareAbove(kSlow));
  report.Add("master_beat_ms_p99_at_most", 1000 * m.beat.QuantileAtMost(0.99));
  report.Add("master_lag_ms_p99_at_most", 1000 * m.lag.QuantileAtMost(0.99));
  report.Add("master_lag_ms_max_at_most", 1000 * m.lag.QuantileAtMost(1));
  report.Add("master_lag_over_20ms_pct", 100 * m.lag.ShareAbove(0.02));
  report.Add("housekeeping_ms_mean", m.housekeeping.count > 0 ? 1000 * m.housekeeping.sum / m.housekeeping.count : 0);
  report.Add("housekeeping_ms_p50_at_most", 1000 * m.housekeeping.QuantileAtMost(0.5));
  report.Add("housekeeping_ms_max_at_most", 1000 * m.housekeeping.QuantileAtMost(1));
  // "liveness 0.40 (≤ 0.5, ≤ 2) / ...": each step's mean, p50 and max, ms.
  std::string steps;
  for (size_t i = 0; i < m.steps.size(); ++i) {
    const ScrapedHistogram& h = m.steps[i];
    steps += fmt::format("{}{} {:.2f} (≤ {:g}, ≤ {:g})", i ? " / " : "", MasterHistograms::kSteps[i],
                         h.count > 0 ? 1000 * h.sum / h.count : 0.0, 1000 * h.QuantileAtMost(0.5),
                         1000 * h.QuantileAtMost(1));
  }
  report.Add("housekeeping_steps_ms", steps);
  report.Add("status_calls", m.status.count);
  report.Add("status_ms_mean", m.status.count > 0 ? 1000 * m.status.sum / m.status.count : 0);
  report.Add("fleet_lag_ms_p99", Percentile(st.lag_ms, 99));
  report.Add("fleet_lag_ms_max", Percentile(st.lag_ms, 100));
}

awaitable<bool> Drive(const ScaleOptions& o, const ClusterConfig& config, MasterProcess& master,
                      Fleet& fleet) {
  const RpcOptions rpc = RpcOptions::FromConfig(config, "master_scale");
  auto conn = co_await ConnectWithin(config.master.address, rpc, std::chrono::seconds(60));
  if (!conn.ok()) co_return Fail("the master does not answer: " + conn.status().ToString());
  const auto t_reg = Steady::now();
  fleet.Start();
  if (!co_await WaitFor([&] { return fleet.Registered() == o.fleet.workers; }, std::chrono::minutes(10))) {
    co_return Fail(fmt::format("only {} of {} workers registered", fleet.Registered(), o.fleet.workers));
  }
  Report report;
  report.Add("workers", o.fleet.workers);
  report.Add("register_s", MsSince(t_reg) / 1000);
  const auto t_in = Steady::now();
  if (Status s = co_await WriteInputs(o, config, rpc, fleet); !s.ok()) co_return Fail("inputs: " + s.ToString());
  report.Add("input_blocks_per_s", o.maps / (MsSince(t_in) / 1000));
  if (Status s = co_await Refresh(*conn, config.master.address, rpc); !s.ok()) co_return Fail(s.ToString());
  auto submits = co_await SubmitJobs(o, **conn);
  if (!submits.ok()) co_return Fail("submit: " + submits.status().ToString());
  report.Add("submit_ms_p50", Percentile(*submits, 50));
  report.Add("submit_ms_max", Percentile(*submits, 100));
  co_await Sleep(std::chrono::seconds(o.warmup_s));

  if (Status s = co_await Refresh(*conn, config.master.address, rpc); !s.ok()) co_return Fail(s.ToString());
  const bool scrape = config.master.http_address.port != 0;
  Result<MasterHistograms> before = MasterHistograms{};
  if (scrape) before = co_await ScrapeMaster(config);
  if (!before.ok()) co_return Fail("the master's /metrics: " + before.status().ToString());
  const pid_t perf = o.perf_out.empty() ? 0 : StartPerf(master.pid(), o.perf_out);
  fleet.OpenWindow();
  const double cpu0 = master.CpuSeconds();
  const auto t0 = Steady::now();
  for (int i = 0; i < o.stop_workers; ++i) fleet.StopWorker(i * (o.fleet.workers / std::max(1, o.stop_workers)));
  auto noticed = co_await TimeToNoticeDead(**conn, fleet, o, std::chrono::seconds(o.window_s));
  co_await Sleep(std::chrono::milliseconds(static_cast<int64_t>(o.window_s * 1000 - MsSince(t0))));
  const double window_s = MsSince(t0) / 1000;
  const double cpu = (master.CpuSeconds() - cpu0) / window_s;
  fleet.CloseWindow();
  StopPerf(perf);
  Result<MasterHistograms> after = MasterHistograms{};
  if (scrape) after = co_await ScrapeMaster(config);
  if (!after.ok()) co_return Fail("the master's /metrics: " + after.status().ToString());
  const FleetStats& st = fleet.stats();
  report.Add("beats_per_s", static_cast<double>(st.beats) / window_s);
  report.Add("beat_ms_p50", Percentile(st.beat_ms, 50));
  report.Add("beat_ms_p99", Percentile(st.beat_ms, 99));
  report.Add("beat_ms_max", Percentile(st.beat_ms, 100));
  report.Add("decisions_per_s", static_cast<double>(st.launches) / window_s);
  report.Add("master_cpu_cores", cpu);
  report.Add("master_rss_mib", static_cast<double>(master.RssBytes()) / (1 << 20));
  report.Add("master_peak_rss_mib", static_cast<double>(master.PeakRssBytes()) / (1 << 20));
  report.Add("dead_noticed_s", noticed.ok() ? *noticed : -1);
  report.Add("running_tasks", static_cast<double>(fleet.Running()));
  if (scrape) ReportWhere(report, after->Since(*before), st);
  bool ok = noticed.ok();
  if (o.until_done) {
    std::string states;
    if (Status s = co_await Refresh(*conn, config.master.address, rpc); !s.ok()) co_return Fail(s.ToString());
    auto done = co_await WaitJobsDone(**conn, o.done_timeout_s, &states);
    report.Add("jobs", states);
    ok = ok && done.ok() && *done;
  }
  if (o.fleet.check_views) {
    if (Status s = co_await Refresh(*conn, config.master.address, rpc); !s.ok()) co_return Fail(s.ToString());
    auto views = co_await WaitViewsAgree(**conn, fleet, std::chrono::seconds(60));
    report.Add("views_agree", views.ok() ? "yes" : views.status().message());
    ok = ok && views.ok();
  }
  const FleetStats& end = fleet.stats();  // relaunches judged once the run is over
  report.Add("launches", end.launches_total);
  report.Add("duplicate_launches", end.duplicate_launches);
  report.Add("relaunches_after_loss", end.relaunches_after_loss);
  report.Add("beat_errors", end.beat_errors);
  report.Add("reregisters", end.reregisters);
  report.Add("output_errors", end.output_errors);
  report.Add("member_lists", end.member_lists);
  report.Add("member_deltas", end.member_deltas);
  report.Add("member_entries", end.member_entries);
  report.Add("register_member_entries", end.register_member_entries);
  report.Print();
  co_return ok && end.duplicate_launches == 0 && end.beat_errors == 0 && end.output_errors == 0;
}

}  // namespace

bool RunJobs(const ScaleOptions& o) {
  return RunAgainstMaster(o, [&](const ClusterConfig& config, MasterProcess& master, Fleet& fleet) {
    return Drive(o, config, master, fleet);
  });
}

}  // namespace mr::bench

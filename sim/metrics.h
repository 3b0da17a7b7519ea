// Metrics of one simulated run: what the live master records per job
// (map locality levels, reduce-data locality, INT, JTT, per-node loads, FP;
// JoSS §6.1 Eqs. 9-11) plus what only a simulator can afford to record
// (backlog over time, Joint §6; map completion time, Pandas §VII-A3).
// The host (sim/host.h) fills a RunResult as events happen; the functions
// at the end derive the reported figures from it, and sim/output.h writes
// it as JSON and CSV.
//
// Names and meanings follow the master's JSON (docs/jobs.md): jtt_ms,
// maps_total, maps_node_local, maps_rack_local, maps_dc_local, maps_off_dc
// (four disjoint levels, sched::Locality, that sum to maps_total),
// vps_locality_rate (node / total), cen_locality_rate ((rack + dc) / total),
// off_cen_rate (off_dc / total), reduce_data_locality_rate, inter_dc_bytes,
// fp_raw, fp_wire. As in the master, a map task's level is judged at launch
// against its replicas then, and each task counts once, by its last
// successful run.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "scheduler/cluster_state.h"
#include "sim/network.h"

namespace mr::sim {

// Counters of a set of jobs (the whole run, or one job type).
struct Tally {
  int64_t jobs = 0;               // finished jobs
  double jtt_ms_sum = 0;
  int64_t maps_total = 0;         // finished map tasks, each once (its last successful run)
  int64_t maps_level[4] = {0, 0, 0, 0};  // by sched::Locality, judged at that run's launch
  double input_mb[4] = {0, 0, 0, 0};     // map input read, by Span
  double prefetch_mb[4] = {0, 0, 0, 0};  // blocks copied ahead (Joint), by Span
  double shuffle_mb[4] = {0, 0, 0, 0};   // reduce input fetched, by Span
  double fp_raw_sum = 0, fp_wire_sum = 0;  // over finished jobs
};

struct BacklogSample {
  int64_t t_ms = 0;
  int64_t maps_waiting = 0;       // pending maps of arrived jobs
  int64_t maps_running = 0;
  int64_t reduces_waiting = 0;
  int64_t reduces_running = 0;
  int64_t active_jobs = 0;
};

struct JobRecord {
  int32_t id = 0;
  std::string type;
  int maps = 0, reduces = 0;
  int64_t submit_ms = 0;
  int64_t finish_ms = -1;         // -1: unfinished when the run stopped
};

struct RunResult {
  std::string scenario, scheduler, label;
  std::map<std::string, std::string> params;   // the policy's complete parameters
  std::map<std::string, std::string> sweep;    // swept keys and their values
  uint64_t seed = 0;
  std::string stopped;            // "done", "end_ms", "max_backlog" or "stalled"
  int64_t end_ms = 0;             // simulated time at the end
  int64_t jobs_total = 0;
  Tally all;
  std::map<std::string, Tally> by_type;
  int64_t map_launches = 0, reduce_launches = 0, failed_attempts = 0, redone_maps = 0;
  int64_t reduces_total = 0;       // reduce tasks of arrived jobs
  int64_t reduces_done = 0;        // finished reduce executions
  double map_response_ms_sum = 0; // finish - job submit, over finished map tasks (as maps_total)
  double map_run_ms_sum = 0;      // finish - launch, likewise
  double reduce_run_ms_sum = 0;
  int64_t prefetches = 0;
  int64_t assign_calls = 0, tick_calls = 0;
  std::vector<int64_t> node_maps;   // finished map tasks per node, likewise (JoSS Table 9 "VPS load")
  std::vector<BacklogSample> backlog;
  std::vector<JobRecord> jobs;
  double tail_fraction = 0.05;
  // Speculative execution (the master's names, docs/jobs.md). Output only
  // when `speculation` (the scenario chose a speculator: Scenario::
  // speculation_given), so runs without one print as before.
  bool speculation = false;
  std::string speculator = "none";
  std::map<std::string, std::string> speculator_params;  // complete
  int64_t backups_launched = 0;   // backup attempts started
  int64_t backups_won = 0;        // races the backup won (it ended first)
  int64_t attempts_killed = 0;    // race losers killed (one per race a task won)
  double wasted_ms = 0;           // slot time of the killed losers (speculation_wasted_ms)
  double task_ms = 0;             // slot time of every attempt that ended: won, failed, killed, lost
  // Wall-clock measurements, only with timing (they break byte-identity).
  bool timed = false;
  double wall_ms = 0, policy_ms = 0;
};

// Derived figures, computed from a RunResult (so tests and the report share them).
double Rate(int64_t part, int64_t whole);
double InterDcBytes(const Tally& t);
double ReduceDataLocality(const Tally& t);   // shuffle MB within the reducer's DC / all
double MeanJtt(const Tally& t);
// Backlog (maps waiting + running) averaged over the last tail_fraction of the run.
double BacklogTail(const RunResult& r);
// Least-squares slope of the backlog over the second half of the run, per second.
double BacklogSlope(const RunResult& r);
// Mean and population standard deviation of node_maps.
std::pair<double, double> NodeLoad(const RunResult& r);
// JTTs of finished jobs, sorted.
std::vector<double> SortedJtts(const RunResult& r);
// Workload turnaround: last finish - first submit (JoSS §6.2 WTT).
int64_t Wtt(const RunResult& r);

}  // namespace mr::sim

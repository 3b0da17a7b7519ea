// ExplainJob (job_why.h): the critical path, the time lost by cause, and
// the slowest worker and locality level, from a job's record alone.
#include "common/job_why.h"

#include <algorithm>
#include <cstdio>
#include <map>
#include <optional>

namespace mr::master {
namespace {

// One accepted task with timestamps.
struct Task {
  bool is_map = true;
  int32_t index = 0;
  std::string node, locality;
  int64_t start = 0, end = 0;  // ms since the epoch
  int64_t bytes = 0;           // map: input; reduce: shuffled
  int64_t other_dc = 0;        // of those, from another datacenter
  int64_t read_ms = 0;         // map: its read phase; reduce: its fetch phase (0: unknown)
  int64_t after_fetch_ms = 0;  // reduce: its reduce and write phases
  int64_t run() const { return end - start; }
};

std::string Format(const char* format, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, v);
  return buf;
}
std::string Secs(int64_t ms) { return Format("%.1f s", static_cast<double>(ms) / 1000.0); }
std::string Mb(int64_t bytes) { return Format("%.1f MB", static_cast<double>(bytes) / 1e6); }
std::string Name(const Task& t) { return std::string(t.is_map ? "map " : "reduce ") + std::to_string(t.index); }

// Bytes per second of a task's read (map) or fetch (reduce), if known.
std::optional<double> Rate(const Task& t) {
  const int64_t ms = t.read_ms > 0 ? t.read_ms : t.run();
  if (ms <= 0 || t.bytes <= 0) return std::nullopt;
  return static_cast<double>(t.bytes) * 1000.0 / static_cast<double>(ms);
}
std::string MbPerS(double bytes_per_s) { return Format("%.1f MB/s", bytes_per_s / 1e6); }

double Median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

int64_t Phase(const google::protobuf::Map<std::string, int64_t>& phases, const char* name) {
  auto it = phases.find(name);
  return it == phases.end() ? 0 : it->second;
}

std::vector<Task> Tasks(const pb::JobRecord& j) {
  std::vector<Task> out;
  for (const pb::MapTaskRecord& m : j.maps()) {
    if (m.start_ms() <= 0 || m.end_ms() < m.start_ms()) continue;
    out.push_back({true, m.index(), m.node(), m.locality(), m.start_ms(), m.end_ms(), m.input_bytes(),
                   m.input().other_dc(), Phase(m.phase_ms(), "read"), 0});
  }
  for (const pb::ReduceTaskRecord& r : j.reduces()) {
    if (r.start_ms() <= 0 || r.end_ms() < r.start_ms()) continue;
    const pb::Traffic& s = r.shuffle();
    out.push_back({false, r.index(), r.node(), "", r.start_ms(), r.end_ms(), s.local() + s.same_dc() + s.other_dc(),
                   s.other_dc(), Phase(r.phase_ms(), "fetch"),
                   Phase(r.phase_ms(), "reduce") + Phase(r.phase_ms(), "write")});
  }
  return out;
}

const Task* Last(const std::vector<Task>& tasks, bool is_map) {
  const Task* last = nullptr;
  for (const Task& t : tasks) {
    if (t.is_map == is_map && (last == nullptr || t.end > last->end)) last = &t;
  }
  return last;
}

double MedianRun(const std::vector<Task>& tasks, bool is_map) {
  std::vector<double> runs;
  for (const Task& t : tasks) {
    if (t.is_map == is_map) runs.push_back(static_cast<double>(t.run()));
  }
  return Median(runs);
}

// Steps 1 and 2: the chain of tasks that set the end.
std::vector<std::string> CriticalPath(const pb::JobRecord& j, const std::vector<Task>& tasks, int64_t end) {
  std::vector<std::string> out;
  const int64_t submit = j.submit_ms();
  int64_t first = tasks.front().start;
  for (const Task& t : tasks) first = std::min(first, t.start);
  out.push_back("the job took " + Secs(end - submit) + " from submission; its first task started " +
                Secs(first - submit) + " after submission");
  const Task* map = Last(tasks, true);
  const Task* reduce = Last(tasks, false);
  if (map != nullptr) {
    const double median = MedianRun(tasks, true);
    std::string line = Name(*map) + " on " + map->node + " was the last map to end, at " + Secs(map->end - submit) +
                       ", after running " + Secs(map->run());
    if (median > 0) line += " (" + Format("%.1fx", static_cast<double>(map->run()) / median) + " the median map's " +
                            Secs(static_cast<int64_t>(median)) + ")";
    if (map->bytes > 0) {
      line += "; it read " + Mb(map->bytes) + (map->locality.empty() ? "" : " (" + map->locality + ")");
      if (const auto rate = Rate(*map)) line += " at " + MbPerS(*rate);
    }
    out.push_back(line);
  }
  if (reduce != nullptr) {
    std::string line = Name(*reduce) + " on " + reduce->node + " ended last, at " + Secs(reduce->end - submit) +
                       "; it started at " + Secs(reduce->start - submit);
    if (map != nullptr && map->end > reduce->start) {
      line += " and waited " + Secs(map->end - reduce->start) + " for " + Name(*map) + "'s output";
    }
    line += ", fetched " + Mb(reduce->bytes);
    if (reduce->other_dc > 0) line += " (" + Mb(reduce->other_dc) + " from other datacenters)";
    if (reduce->read_ms > 0) {
      line += " in " + Secs(reduce->read_ms);
      if (const auto rate = Rate(*reduce)) line += " at " + MbPerS(*rate);
    }
    if (reduce->after_fetch_ms > 0) line += ", then reduced and wrote for " + Secs(reduce->after_fetch_ms);
    out.push_back(line);
  }
  const int64_t last_end = std::max(map ? map->end : 0, reduce ? reduce->end : 0);
  if (end - last_end >= 100) {
    out.push_back("committing the output and ending the job took " + Secs(end - last_end) + " after the last task");
  }
  return out;
}

// Step 3: time lost, by cause.
std::vector<std::string> TimeLost(const pb::JobRecord& j, const std::vector<Task>& tasks) {
  std::vector<std::string> out;
  int retries = 0;
  int64_t retry_ms = 0;
  for (const pb::AttemptRecord& a : j.ended_attempts()) {
    if (a.state() == "killed" || a.end_ms() < a.start_ms() || a.start_ms() <= 0) continue;
    ++retries;
    retry_ms += a.end_ms() - a.start_ms();
  }
  if (retries > 0) {
    out.push_back("retries: " + std::to_string(retries) + " failed or lost attempt(s) ran " + Secs(retry_ms) +
                  " before their tasks ran again");
  }
  const Task* map = Last(tasks, true);
  const double median = MedianRun(tasks, true);
  if (map != nullptr && median > 0 && static_cast<double>(map->run()) >= 1.5 * median) {
    out.push_back("straggler: " + Name(*map) + " on " + map->node + " ran " +
                  Secs(map->run() - static_cast<int64_t>(median)) + " longer than the median map");
  }
  if (j.backups_launched() > 0 || j.speculation_wasted_ms() > 0) {
    out.push_back("speculation: " + std::to_string(j.backups_launched()) + " backup(s), " +
                  std::to_string(j.backups_won()) + " won; attempts that lost their race ran " +
                  Secs(j.speculation_wasted_ms()));
  }
  std::vector<double> waits;
  int64_t longest = 0;
  for (const Task& t : tasks) {
    if (!t.is_map) continue;
    waits.push_back(static_cast<double>(t.start - j.submit_ms()));
    longest = std::max(longest, t.start - j.submit_ms());
  }
  if (!waits.empty()) {
    double sum = 0;
    for (double w : waits) sum += w;
    out.push_back("waiting for a slot: maps started " + Secs(static_cast<int64_t>(sum / static_cast<double>(waits.size()))) +
                  " after submission on average, the last " + Secs(longest));
  }
  return out;
}

// Bytes of input per second of a map's whole run: what a slow worker
// shows, whether its disk, its link or its CPU is slow (a throttled CPU
// leaves the read phase's rate as it was).
std::optional<double> RunRate(const Task& t) {
  if (t.run() <= 0 || t.bytes <= 0) return std::nullopt;
  return static_cast<double>(t.bytes) * 1000.0 / static_cast<double>(t.run());
}

// The worker whose maps' median is lowest, with that median and the
// median over workers; nullopt with fewer than two workers.
struct Lowest {
  std::string worker;
  double value = 0, median_worker = 0;
};
std::optional<Lowest> LowestMedian(const std::map<std::string, std::vector<double>>& by_worker) {
  if (by_worker.size() < 2) return std::nullopt;
  Lowest low;
  std::vector<double> medians;
  for (const auto& [worker, values] : by_worker) {
    const double m = Median(values);
    medians.push_back(m);
    if (low.worker.empty() || m < low.value) low.worker = worker, low.value = m;
  }
  low.median_worker = Median(medians);
  return low;
}

std::string Versus(double value, double median) {
  return Format("%.2fx", median > 0 ? value / median : 0) + " the median worker's " + MbPerS(median);
}

// "slowest worker: w2, whose maps ran at 2.0 MB/s ... ; their reads ...":
// ranked by the maps' whole run, with the read phase beside it to tell a
// slow link or disk (reads slow too) from a slow CPU (reads as fast as
// anyone's).
std::optional<std::string> SlowestWorker(const std::vector<Task>& tasks) {
  std::map<std::string, std::vector<double>> runs, reads;
  for (const Task& t : tasks) {
    if (!t.is_map) continue;
    if (const auto rate = RunRate(t)) runs[t.node].push_back(*rate);
    if (t.read_ms > 0) {
      if (const auto rate = Rate(t)) reads[t.node].push_back(*rate);
    }
  }
  const std::optional<Lowest> slow = LowestMedian(runs);
  if (!slow) return std::nullopt;
  std::string line = "slowest worker: " + slow->worker + ", whose maps ran at " + MbPerS(slow->value) +
                     " of input (median), " + Versus(slow->value, slow->median_worker);
  if (reads.size() >= 2 && reads.count(slow->worker) != 0) {
    std::vector<double> medians;
    for (const auto& [worker, rates] : reads) medians.push_back(Median(rates));
    const double mine = Median(reads.at(slow->worker));
    line += "; their reads ran at " + MbPerS(mine) + ", " + Versus(mine, Median(medians));
  }
  return line;
}

// Step 4: the slowest worker, locality level and shuffle.
std::vector<std::string> Slowest(const std::vector<Task>& tasks) {
  std::vector<std::string> out;
  if (std::optional<std::string> worker = SlowestWorker(tasks)) out.push_back(std::move(*worker));
  std::map<std::string, std::vector<double>> by_level;
  for (const Task& t : tasks) {
    if (!t.is_map || t.locality.empty()) continue;
    if (const auto rate = Rate(t)) by_level[t.locality].push_back(*rate);
  }
  if (by_level.size() >= 2) {
    std::string line = "map reads by locality:";
    std::string slow;
    double slow_rate = 0;
    for (const auto& [level, rates] : by_level) {
      const double m = Median(rates);
      line += " " + level + " " + MbPerS(m) + " (" + std::to_string(rates.size()) + " maps),";
      if (slow.empty() || m < slow_rate) slow = level, slow_rate = m;
    }
    line.back() = ';';
    out.push_back(line + " the slowest link is " + slow);
  }
  const Task* slow_fetch = nullptr;
  for (const Task& t : tasks) {
    if (t.is_map || !Rate(t)) continue;
    if (slow_fetch == nullptr || *Rate(t) < *Rate(*slow_fetch)) slow_fetch = &t;
  }
  if (slow_fetch != nullptr) {
    out.push_back("slowest shuffle: " + Name(*slow_fetch) + " on " + slow_fetch->node + " fetched " +
                  Mb(slow_fetch->bytes) + " at " + MbPerS(*Rate(*slow_fetch)) +
                  (slow_fetch->other_dc > 0 ? " (" + Mb(slow_fetch->other_dc) + " from other datacenters)" : ""));
  }
  return out;
}

}  // namespace

WhyReport ExplainJob(const pb::JobRecord& j) {
  WhyReport report;
  const std::vector<Task> tasks = Tasks(j);
  if (tasks.empty()) return report;
  int64_t end = j.end_ms();
  if (end <= 0) {
    for (const Task& t : tasks) end = std::max(end, t.end);
  }
  report.critical_path = CriticalPath(j, tasks, end);
  report.time_lost = TimeLost(j, tasks);
  report.slowest = Slowest(tasks);
  return report;
}

}  // namespace mr::master

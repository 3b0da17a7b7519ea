// Counters: named 64-bit sums a task keeps, as Hadoop's, and its last
// status message (docs/logs-and-counters.md, "Counters").
//
// A job's own code counts through Counters (Job::counters(), jobs/job.h):
//
//     counters().Increment("quality", "empty_lines", 1);
//     counters().SetStatus("at line " + std::to_string(n));
//
// A streaming command does the same with Hadoop Streaming's stderr lines
// `reporter:counter:GROUP,NAME,AMOUNT` and `reporter:status:MESSAGE`
// (ParseReporterLine below). The framework's own counters are in group
// kFrameworkGroup with Hadoop's names (kMapInputRecords, ...); a user
// counter in that group is dropped.
//
// Counters is an interface so that a plug-in (.so) calls the runtime's
// implementation through its vtable and links nothing for it
// (jobs/plugin.h).
#pragma once

#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/counter_names.h"

namespace mr::jobs {

// What user code counts with. Thread-safe in CounterSet; a job may call
// it from any thread it runs on.
class Counters {
 public:
  // Adds `amount` (may be negative) to counter (group, name), creating it
  // at 0 first. Not an error, but dropped: an empty group or name, group
  // kFrameworkGroup, or a new counter past the per-task cap
  // (kMaxUserCounters). Names longer than kMaxCounterNameBytes are cut.
  virtual void Increment(std::string_view group, std::string_view name, int64_t amount) = 0;
  // Replaces the task's status message (the last one is kept and shown;
  // cut to kMaxStatusBytes).
  virtual void SetStatus(std::string_view message) = 0;

 protected:
  ~Counters() = default;
};

// A Counters that drops everything (Job::counters() of a job made without
// JobEnv::counters). In the plug-in SDK's library (jobs/job_api.cc).
Counters& DroppedCounters();

// The framework's group and counter names: common/counter_names.h.

// Per task: at most this many user counters (Hadoop's
// mapreduce.job.counters.max is 120), names and groups of at most this
// many bytes, a status of at most this many bytes.
inline constexpr size_t kMaxUserCounters = 120;
inline constexpr size_t kMaxCounterNameBytes = 128;
inline constexpr size_t kMaxStatusBytes = 512;

// One counter's value.
struct Counter {
  std::string group;
  std::string name;
  int64_t value = 0;
};

// The counters of one task attempt. Thread-safe.
class CounterSet final : public Counters {
 public:
  void Increment(std::string_view group, std::string_view name, int64_t amount) override;
  void SetStatus(std::string_view message) override;
  // Framework counters (group kFrameworkGroup), not capped.
  void AddFramework(std::string_view name, int64_t amount);
  // Every counter, by (group, name).
  std::vector<Counter> Values() const;
  std::string status() const;
  // User increments dropped by the cap so far.
  int64_t dropped() const;

 private:
  mutable std::mutex mu_;
  // group → name → value; std::less<> finds by string_view without a copy.
  std::map<std::string, std::map<std::string, int64_t, std::less<>>, std::less<>> values_;
  size_t user_counters_ = 0;
  int64_t dropped_ = 0;
  std::string status_;
};

// A line of a streaming command's stderr that starts "reporter:": a
// counter (`reporter:counter:GROUP,NAME,AMOUNT`, AMOUNT a decimal int64)
// is added to `counters`, a status (`reporter:status:MESSAGE`) set, and
// true returned. Any other line, or a malformed reporter line, returns
// false and changes nothing (Hadoop's PipeMapRed logs and skips those).
// `line` is without its '\n'; a trailing '\r' is ignored.
bool ParseReporterLine(std::string_view line, Counters* counters);

// Collects a child's stderr bytes into lines and hands each reporter line
// to ParseReporterLine. Lines longer than kMaxLineBytes are skipped.
class ReporterLineSplitter {
 public:
  explicit ReporterLineSplitter(Counters* counters) : counters_(counters) {}
  void Feed(std::string_view bytes);
  // The last line, if it had no '\n'.
  void Finish();

 private:
  static constexpr size_t kMaxLineBytes = 64 << 10;
  Counters* counters_;
  std::string partial_;
  bool skipping_ = false;  // inside an over-long line
};

}  // namespace mr::jobs

// The job API: what a MapReduce job is. Start here to write a job
// (docs/writing-a-job.md teaches from jobs/wordcount.cc).
//
// A job is a class derived from Job, registered by name: its file defines a
// JobInfo and jobs/registry.cc lists it (see JobInfo below).
// The framework makes a fresh instance for every task, so members may hold
// per-task state. For a map task it calls
//     Configure(params) → Map(line, info, out) for each line of the split, in order → FinishMap(out)
// and for a reduce task
//     Configure(params) → Reduce(key, values, out) for each key, in bytewise key order → FinishReduce(out)
// The combiner, when the job has one, runs inside the map task on sorted
// runs of map output, before they are spilled. A job whose combiner sums
// decimal counts says so (combiner_kind()), and the map task may then count
// in a hash table instead of sorting every pair.
//
// Lines: the input is read as lines ending in '\n', "\r\n" or a lone '\r',
// as Hadoop's LineReader ends them (the terminator is not part of the line;
// a final line without one counts). A map task reads the lines that *start*
// in its split, as Hadoop's LineRecordReader does: it skips the partial
// first line unless the split starts the file, and reads past the split's
// end to finish its last line (jobs/line_reader.h has the exact rules). A
// job that needs context after its last line (Permu) asks for
// lookahead_lines(): that many further lines are passed with
// info.in_split == false.
//
// Keys and values are byte strings. Map output is partitioned by
// Partition(), sorted bytewise by key within each partition, and each reduce
// task sees its keys in that order. Final output is written by WriteOutput()
// into part files.
//
// Thread-compatible: one instance is used by one thread.
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "jobs/counters.h"

namespace mr::jobs {

// Receives output pairs from Map, Combine and Reduce. Emit copies what it
// needs before it returns, so key and value may point into the line or into
// the job's own scratch buffers.
class Emitter {
 public:
  virtual ~Emitter() = default;
  virtual void Emit(std::string_view key, std::string_view value) = 0;
  // Emit(key, value) `n` times (nothing when n <= 0): the same pairs, for a
  // Map that finds one key many times in a block of lines (Grep's literal).
  // The map task's emitter counts them into its count table at once instead
  // of once per pair (worker/task_runner.cc). Default: a loop over Emit.
  virtual void EmitRepeated(std::string_view key, std::string_view value, int64_t n) {
    for (int64_t i = 0; i < n; ++i) Emit(key, value);
  }
};

// The values of one key, consumed once, in no defined order.
class ValueStream {
 public:
  virtual ~ValueStream() = default;
  // The next value (valid until the next call), or false at the end.
  virtual bool Next(std::string_view* value) = 0;
};

// Where a line comes from.
struct LineInfo {
  std::string_view file;  // DFS path of the input file (a directory input has many)
  int64_t offset = 0;     // byte offset of the line's first byte in the file
  bool in_split = true;   // false only for lookahead lines (see lookahead_lines())
};

using Params = std::map<std::string, std::string>;

// Where a task runs, for jobs that run user code (jobs/streaming.cc): the
// worker (or mr-local) fills it in; a built-in job ignores it.
struct JobEnv {
  // The working directory of user commands, holding the files shipped with
  // the job (`mrctl job run --file`): on a worker, the attempt's own
  // directory with a link to each shipped file, removed when the attempt
  // ends. Default: "" (the process's own working directory).
  std::string files_dir;
  // NAME=VALUE pairs added to the environment of user commands: Hadoop's
  // task variables (mapreduce_task_attempt_id, ...; docs/user-jobs.md).
  // Default: none.
  std::vector<std::string> child_env;
  // The attempt's log (docs/logs-and-counters.md): user commands' stderr
  // is passed here as it comes. Default: none (dropped).
  std::function<void(std::string_view bytes)> log;
  // Wall-clock limit of one user process (one mapper, reducer or combiner
  // run), after which its process group is killed and the attempt fails;
  // 0 = none. Default: 0.
  int64_t task_timeout_ms = 0;
  // Set when the task is killed: user processes are stopped at once.
  // Default: none.
  const std::atomic<bool>* cancel = nullptr;
  // The attempt's counters and status (jobs/counters.h), which the
  // framework reports with the task. Default: none (Job::counters() then
  // drops what is counted).
  Counters* counters = nullptr;
};

// A parameter a job accepts, for `mrctl jobs` and validation.
// A parameter is required when its default_value is empty and its help
// starts with "required" (e.g. Grep's pattern): ResolveParams() rejects a
// missing or empty value for it.
struct ParamSpec {
  std::string name;
  std::string default_value;
  std::string help;
};

// What a job's Combine computes (Job::combiner_kind()), so that the map task
// may compute it another way.
enum class CombinerKind {
  // Anything: Combine is called on sorted runs of map output.
  kGeneric,
  // Combine(key, values, out) emits exactly one pair, (key,
  // std::to_string(SumCounts(values))) (jobs/job_util.h): the int64 sum of the
  // values that are decimal integers, wrapping on overflow. The map task then
  // keeps one count per key in a hash table (in-mapper combining: Lin & Dyer,
  // "Data-Intensive Text Processing with MapReduce", §3.1) and writes those
  // counts where sorted runs of pairs would go; Combine still merges spills,
  // and map output that is not a decimal integer is sorted and combined as
  // for kGeneric (docs/map-output-format.md, "Counting combiner").
  kSumCounts,
};

// How a job's Map may be called (Job::map_kind()).
enum class MapKind {
  // Map is called line by line.
  kLines,
  // MapLines may be called instead, with many whole lines at once: the job's
  // Map does not care where lines end (e.g. a search for a literal without
  // '\n' or '\r', which a line terminator can never be part of).
  kLineBlocks,
  // kLineBlocks, and Map(line, info, out) emits (word, "1") for each word of
  // the line as ForEachWord (jobs/word_split.h) splits it, in order, and
  // nothing else; FinishMap emits nothing (Hadoop's TokenCounterMapper).
  // With a kSumCounts combiner the map task then counts the words of a block
  // of lines itself, without a call per line or per word
  // (worker/task_runner.cc). Same output, only faster.
  kCountWords,
};

class Job {
 public:
  virtual ~Job() = default;

  // Called first, with the job's --param values (already checked against
  // params(): unknown names never arrive). InvalidArgument for a bad value.
  virtual Status Configure(const Params& params) { return Status::OK(); }

  // Called once per line of the split, in file order.
  virtual void Map(std::string_view line, const LineInfo& info, Emitter& out) = 0;
  // Called after the last line of the split (and lookahead).
  virtual void FinishMap(Emitter& out) {}

  // Called once per key, keys in bytewise order.
  virtual void Reduce(std::string_view key, ValueStream& values, Emitter& out) = 0;
  virtual void FinishReduce(Emitter& out) {}

  // The combiner: like Reduce, run on map output before the shuffle. Only
  // called when has_combiner() is true; its output must be valid Reduce input.
  virtual bool has_combiner() const { return false; }
  virtual void Combine(std::string_view key, ValueStream& values, Emitter& out) {
    Reduce(key, values, out);
  }
  // What Combine computes; only asked when has_combiner(). Default: kGeneric.
  // A job returns kSumCounts only if its Combine is exactly that sum: the
  // output is then the same, only faster.
  virtual CombinerKind combiner_kind() const { return CombinerKind::kGeneric; }

  // How Map may be called (see MapKind). Default: kLines. A job returns
  // another kind only if its Map is exactly what that kind says.
  virtual MapKind map_kind() const { return MapKind::kLines; }
  // For kLineBlocks and kCountWords: emits what Map would emit for each line
  // of `lines` in turn. `lines` holds one or more whole lines of the split,
  // each with its terminator (the file's last line may have none); info is
  // the first line's. Default: nothing. REQUIRES: lookahead_lines() == 0.
  virtual void MapLines(std::string_view lines, const LineInfo& info, Emitter& out) {}

  // Which of `reducers` (≥ 1) reduce tasks receives `key`. Default: a hash
  // of the key (XXH3-64 mod reducers), stable across machines.
  virtual int Partition(std::string_view key, int reducers) const;

  // Lines after the split's last line to pass with in_split == false.
  virtual int lookahead_lines() const { return 0; }

  // Appends one output record to `out`. Default: key '\t' value '\n'.
  virtual void WriteOutput(std::string_view key, std::string_view value, std::string* out) const;

  // Planning before any task runs (e.g. Sort's split points), given up to a
  // few thousand sample lines from across the input and the number of
  // reducers. May add entries to `params`, which then reach Configure() of
  // every task. Default: nothing.
  virtual Status Plan(const std::vector<std::string>& sample_lines, int reducers, Params* params) {
    return Status::OK();
  }

  // The task's environment, set by MakeJob before Configure().
  const JobEnv& env() const { return env_; }
  // Where Map, Reduce, Combine and their Finish calls count (user counters
  // and the status message: jobs/counters.h, docs/writing-a-job.md,
  // "Counters"). Counting before Configure() or in Plan() is dropped.
  Counters& counters() const { return env_.counters != nullptr ? *env_.counters : DroppedCounters(); }
  void set_env(const JobEnv& env) { env_ = env; }

 private:
  JobEnv env_;
};

// What the registry knows about a job. Each job file defines one JobInfo
// (e.g. kWordCountJob in jobs/wordcount.cc), and jobs/registry.cc lists them
// all: adding a job means adding one line there (and the file to
// jobs/CMakeLists.txt).
struct JobInfo {
  std::string name;              // "wordcount", "grep", ...
  std::string description;       // one line
  std::vector<ParamSpec> params;
  // A digest of the job's source file, computed at build time (JoSS Fig. 4
  // line 1: the hash of J's executable code). From jobs/code_hashes.h.
  std::string code_hash;
  std::unique_ptr<Job> (*make)();
  // For jobs whose code comes with the submission (streaming): the code hash
  // of one submission, from its resolved params (e.g. a digest of the
  // commands and the shipped files' digests). nullptr: code_hash.
  std::string (*code_hash_of)(const Params& params) = nullptr;
  // Accepts parameters besides `params` (a plug-in's own, passed on to it).
  bool open_params = false;
  // Its code is the user's (a plug-in .so): the master and mrctl only check
  // its parameters and never make it; a worker runs its tasks in a child
  // process (worker/task_child.h).
  bool runs_user_code = false;
};

// The code hash of a job submitted with `params` (resolved): code_hash_of's
// when the job has one, else code_hash.
std::string CodeHashOf(const JobInfo& info, const Params& params);

// Every registered job, sorted by name.
const std::vector<const JobInfo*>& RegisteredJobs();
// The job named `name`, or nullptr.
const JobInfo* FindJob(std::string_view name);
// The params with defaults filled in. InvalidArgument for an unknown name,
// listing the job's parameters.
Result<Params> ResolveParams(const JobInfo& info, const Params& params);
// A fresh, configured instance: FindJob + ResolveParams + make() +
// Configure(). InvalidArgument for an unknown job (listing the valid ones) or
// a bad parameter.
// `env` is the task's environment (JobEnv).
Result<std::unique_ptr<Job>> MakeJob(std::string_view name, const Params& params,
                                     const JobEnv& env = {});

}  // namespace mr::jobs

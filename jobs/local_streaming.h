// The streaming flags mrctl's `job run` and mr-local share (--mapper,
// --reducer, --combiner, --file), and mr-local's way of running a job with
// shipped files: copied into a private temporary directory that is the
// commands' working directory, as on a worker (jobs/streaming.h).
#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "common/status.h"
#include "jobs/job.h"
#include "jobs/local_runner.h"

namespace mr::jobs {

struct StreamingFlags {
  std::string mapper, reducer, combiner;
  std::vector<std::string> files;  // local paths
  std::vector<std::string> cmdenv;  // NAME=VALUE
  bool any() const {
    return !mapper.empty() || !reducer.empty() || !combiner.empty() || !files.empty() || !cmdenv.empty();
  }
};

inline void AddStreamingFlags(CLI::App& app, StreamingFlags& f) {
  app.add_option("--mapper", f.mapper, "streaming: the mapper command (run by sh -c)");
  app.add_option("--reducer", f.reducer, "streaming: the reducer command (default: identity)");
  app.add_option("--combiner", f.combiner, "streaming: the combiner command (default: none)");
  app.add_option("--file", f.files, "streaming: a local file shipped with the job (repeatable)");
  app.add_option("--cmdenv", f.cmdenv, "streaming: NAME=VALUE set in the commands' environment (repeatable)");
}

// Puts the flags into `params` (mapper, reducer, combiner, and `files` with
// each file's digest). InvalidArgument when they are given for another job
// than "streaming", or a file cannot be read.
Status ApplyStreamingFlags(const std::string& job, const StreamingFlags& flags, Params* params);

// RunLocal, after ApplyStreamingFlags, with the --file files copied into a
// temporary directory (removed afterwards) as the commands' working
// directory. A `job` ending in ".so" is a plug-in (jobs/plugin.h), shipped
// the same way and run in this process.
Status RunLocalWithFiles(std::string job, const std::vector<std::string>& inputs,
                         const std::string& out_dir, StreamingFlags flags,
                         LocalRunOptions options);

}  // namespace mr::jobs

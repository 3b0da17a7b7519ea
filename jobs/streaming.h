// Streaming jobs: any executable as mapper, reducer and combiner, with
// Hadoop Streaming's contract (docs/user-jobs.md). The job "streaming"
// (jobs/streaming.cc) is registered like the built-in jobs; this header is
// what mrctl, mr-local and the worker need to ship its files.
//
// The files shipped with a job are described by its `files` parameter:
// "NAME:SHA256:MODE;..." where NAME is a base name, SHA256 the digest of the
// bytes (64 hex) and MODE "x" (executable) or "-". They sit in the DFS
// directory of the `files_dir` parameter; every worker fetches them once per
// job, checks each digest and runs the commands in that local directory.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace mr::jobs {

struct ShippedFile {
  std::string name;    // base name: no '/', not "." or ".."
  std::string sha256;  // 64 lowercase hex digits
  bool executable = false;
};

// The `files` parameter. InvalidArgument naming the bad entry.
Result<std::vector<ShippedFile>> ParseShippedFiles(std::string_view files);
std::string FormatShippedFiles(const std::vector<ShippedFile>& files);

// The `cmdenv` parameter: NAME=VALUE lines ('\n'-separated; `mrctl job
// run --cmdenv NAME=VALUE`, Hadoop Streaming's -cmdenv), set in the
// commands' environment after the task's variables. InvalidArgument for a
// line without '=' or a NAME that is not [A-Za-z_][A-Za-z0-9_]*.
Result<std::vector<std::string>> ParseCmdEnv(std::string_view cmdenv);

// Describes local files to ship (`--file PATH...`): base name, digest,
// executable bit. InvalidArgument for a path that is not a readable regular
// file, or two with the same base name.
Result<std::vector<ShippedFile>> DescribeLocalFiles(const std::vector<std::string>& paths);

// The longest line a streaming command may write: 8 MiB.
inline constexpr size_t kMaxStreamingLineBytes = 8 << 20;

}  // namespace mr::jobs

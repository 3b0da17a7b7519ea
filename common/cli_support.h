// Helpers shared by mrctl's commands (finding the cluster, sizes, output)
// and by every binary's main (usage errors).
#pragma once

#include <cstdint>
#include <span>
#include <string>

#include <CLI/CLI.hpp>

#include "common/config.h"
#include "common/status.h"

namespace mr::tools {

// Finds the cluster file: `explicit_path` if given, else $MR_CONFIG, else the
// first .mr/cluster.toml in the current directory or one of its parents,
// else the same search from the directory of the mrctl executable (so a
// local cluster started from a checkout is found from anywhere in it).
// NotFound if none, saying how to name one.
Result<std::string> FindClusterFile(const std::string& explicit_path);

// "1048576", "64K", "64KiB", "4M", "1G", "1GiB" (binary multiples).
Result<int64_t> ParseBytes(const std::string& text);

// "1.5 GiB" style, for humans.
std::string HumanBytes(int64_t bytes);

// Reports a CLI11 parse error as mr's binaries report errors: one line
// "<program>: <what is wrong>; <the fix>" on stderr — an unknown command
// word gets "no such command 'dfs frob'" with the valid ones, a missing
// one the list to choose from, anything else CLI11's words and the
// command's `--help` — and returns the exit code: 0 after --help or
// --version (which CLI11 prints as usual), else 2 (bad usage). Called by
// the mains of mrctl, mr-master and mr-worker around `app.parse`.
int ReportParseError(const CLI::App& app, const CLI::ParseError& e, const std::string& program);

// Writes all of `data` to a file descriptor.
Status WriteFully(int fd, std::span<const char> data);

}  // namespace mr::tools

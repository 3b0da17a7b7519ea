// The mr-sim command line (docs/simulator.md), as a function so tests can
// run it without a process:
//   mr-sim run FILE [--json] [--csv DIR] [--set KEY=VALUE]... [--only LABEL]...
//   mr-sim sweep FILE --param NAME=v1,v2,... [same options]
//   mr-sim report DIR
// main.cc calls it with the process's arguments and streams.
#pragma once

#include <ostream>

namespace mr::sim {

// Parses `argv` and runs the command, printing results on `out` and
// progress and errors on `err`. Returns the process exit status: 0 on
// success (and for --help), 2 for a usage error or a failed command (one
// line "mr-sim: ..." on `err`).
int RunCli(int argc, const char* const* argv, std::ostream& out, std::ostream& err);

}  // namespace mr::sim

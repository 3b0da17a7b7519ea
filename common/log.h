// Logging set-up for the binaries: one log file per process (spdlog), and
// warnings and errors also on stderr.
#pragma once

#include <string>

#include "common/status.h"

namespace mr {

// Routes spdlog's default logger to `file` (created with its directory; empty
// = stderr only) at `level` ("trace" … "error"). InvalidArgument for an
// unknown level, IOError when the file cannot be opened.
Status InitLogging(const std::string& process_name, const std::string& file,
                   const std::string& level);

}  // namespace mr

// What every long-running binary does after start-up: run its io_context
// until SIGINT or SIGTERM, then stop cleanly; reopen the log on SIGHUP.
#pragma once

#include <functional>
#include <string>

#include <boost/asio/io_context.hpp>

#include "common/status.h"

namespace mr {

// The "Signals:" and "Logging:" paragraphs of mr-master's and mr-worker's
// --help (and so of their man pages), which RunUntilSignal and InitLogging
// make true. Each main puts it at the start of its CLI11 footer.
inline constexpr const char kDaemonSignalsAndLoggingHelp[] =
    "Signals:\n"
    "  SIGINT, SIGTERM  stop cleanly\n"
    "  SIGHUP           reopen the log file (after logrotate moved it)\n\n"
    "Logging:\n"
    "  To --log-file, rotated at [log] max_file_bytes. Under systemd (stderr is the\n"
    "  journal) every line goes to the journal with its level, and no file is written.\n\n";

// Makes everything the daemon creates from here on private to its user:
// sets the umask to 077 (files 0600, directories 0700: RocksDB, block files,
// map outputs, logs), creates `data_dir` with its missing parents as 0700,
// and takes group and other permissions off `data_dir` itself (an older
// version made it 0755). Called by mr-master's and mr-worker's main before
// logging starts. IOError when the directory cannot be created or changed.
Status PreparePrivateDataDir(const std::string& data_dir);

// Runs `io` on `threads` threads (this one included) until SIGINT or
// SIGTERM arrives; then calls `stop` on an io thread, stops `io`, and returns
// once every thread has left it. SIGHUP meanwhile reopens the log file
// (ReopenLogFile in common/log.h) and logs that it did.
void RunUntilSignal(boost::asio::io_context& io, int threads, std::function<void()> stop);

}  // namespace mr

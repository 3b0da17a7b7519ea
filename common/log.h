// Logging set-up for the binaries: one sink per process (spdlog). With a log
// file every line goes there only (rotated by size, reopened on SIGHUP);
// without one, to stderr. Under systemd (stderr is the journal stream named by
// $JOURNAL_STREAM) every line goes to stderr only, prefixed "<N>" with its
// syslog level and without a timestamp, whatever the file says. A daemon that
// cannot start prints its one-line reason to stderr itself (see main.cc).
#pragma once

#include <chrono>
#include <cstdint>
#include <mutex>
#include <string>

#include "common/config.h"
#include "common/status.h"

namespace mr {

// Routes spdlog's default logger to `file` (created with its directory, mode
// 0600; empty = stderr) at `level` ("trace" … "error"). Called once by each
// binary's main before anything logs. InvalidArgument for an unknown level,
// IOError when the file cannot be opened.
Status InitLogging(const std::string& process_name, const std::string& file,
                   const std::string& level);

// Same, with the level, rotation size and rotated-file count of `options`
// ([log] in the cluster file). `file` is ignored when stderr is the journal.
Status InitLogging(const std::string& process_name, const std::string& file,
                   const LogOptions& options);

// True when $JOURNAL_STREAM names this process's stderr (device:inode, as
// systemd.exec(5) says to check), i.e. stderr goes to the journal.
bool StderrIsJournal();

// Closes and reopens the log file InitLogging opened, at the same path (for
// logrotate's move-then-SIGHUP). OK and nothing done when logging goes to
// stderr. Called by RunUntilSignal (common/process.h) on SIGHUP. Thread-safe.
Status ReopenLogFile();

// Reports why a daemon cannot start, once per place: one line
// "<program>: <message>" on stderr, with the syslog error level "<3>" in
// front when stderr is the journal (so journalctl -p err shows it); and,
// when InitLogging opened a log file, the same reason in that file as an
// error line. Called by mr-master's and mr-worker's main just before they
// exit non-zero, before or after InitLogging.
void ReportStartupError(const std::string& program, const std::string& message);

// Lets one log line through per interval for an event that can repeat
// thousands of times a second (a refused connection, a failing accept()),
// and counts the events it held back, so the next line can say how many
// there were. Thread-safe.
//
//   if (int64_t n = throttle.Tick(); n > 0) spdlog::warn("... ({} times)", n);
class LogThrottle {
 public:
  using Clock = std::chrono::steady_clock;
  explicit LogThrottle(std::chrono::milliseconds interval) : interval_(interval) {}

  // Counts one event at `now`. Returns 0 when no line is due, else the number
  // of events the due line stands for: this one plus those held back since
  // the last line. The first event always gets a line.
  int64_t Tick(Clock::time_point now = Clock::now());

 private:
  const std::chrono::milliseconds interval_;
  std::mutex mu_;
  bool logged_once_ = false;
  Clock::time_point last_line_{};
  int64_t held_ = 0;
};

}  // namespace mr

// Progress of mrctl's long commands on stderr: `dfs put`, `dfs get`,
// `dfs cat` (to a file or a pipe), `gen`, `job run --wait`, `job wait`.
//
// On a terminal (stderr is a TTY) one line, redrawn in place at most five
// times a second, with a bar when the fraction done is known:
//   [##########          ]  50%  put big.txt: 512.0 MiB of 1.0 GiB, 210.3 MB/s
// Not on a terminal (a log, ssh without -t) one plain line every
// kLogIntervalMs (10 s; $MR_PROGRESS_INTERVAL_MS overrides it, tests use 0),
// so a command shorter than that prints nothing. `mrctl --quiet` turns both
// off. Standard output is never touched.
//
// Not thread-safe: one command's coroutine chain updates it.
#pragma once

#include <chrono>
#include <cstdint>
#include <string>

namespace mr::tools {

// Off with `mrctl --quiet` (set by main before a command runs). Default on.
void SetProgressEnabled(bool enabled);

class Progress {
 public:
  // `what` starts every line ("put big.txt").
  explicit Progress(std::string what);
  // Ends the line on a terminal (so what follows starts on a new one),
  // after drawing the last state if the throttle held it back.
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // The state now: `fraction` in [0, 1] (negative: unknown, no bar) and the
  // text after `what`. Draws or logs when it is time to.
  void Update(double fraction, const std::string& text);
  // Bytes done of `total` (-1 unknown): the text says both and the rate.
  void Bytes(int64_t done, int64_t total);
  // Ends the line now (before printing a result or an error): on a
  // terminal the last state is drawn first, so a finished copy shows 100%.
  void Finish();

  // Seconds since the Progress was made.
  double Elapsed() const;

 private:
  void Emit(double fraction, const std::string& text, bool final);
  void Draw(double fraction, const std::string& text);

  std::string what_;
  bool enabled_;
  bool tty_;
  int64_t interval_ms_;
  bool drawn_ = false;     // a TTY line is on screen, not yet ended
  bool held_ = false;      // the last state was not drawn (throttled)
  double held_fraction_ = -1;
  std::string held_text_;
  size_t width_ = 0;       // of the last TTY line, to blank its tail
  std::chrono::steady_clock::time_point start_, last_;
};

}  // namespace mr::tools

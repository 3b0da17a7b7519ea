#include "tools/progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "common/cli_support.h"

namespace mr::tools {
namespace {

constexpr int64_t kLogIntervalMs = 10000;  // not on a terminal: one line per 10 s
constexpr int64_t kDrawIntervalMs = 200;   // on a terminal: at most 5 redraws a second
constexpr int kBarWidth = 20;

bool progress_enabled = true;

int64_t IntervalFromEnv() {
  const char* v = std::getenv("MR_PROGRESS_INTERVAL_MS");
  if (v == nullptr || *v == '\0') return kLogIntervalMs;
  char* end = nullptr;
  const long long ms = std::strtoll(v, &end, 10);
  return (*end == '\0' && ms >= 0) ? ms : kLogIntervalMs;
}

}  // namespace

void SetProgressEnabled(bool enabled) { progress_enabled = enabled; }

Progress::Progress(std::string what)
    : what_(std::move(what)),
      enabled_(progress_enabled),
      tty_(::isatty(2) == 1),
      interval_ms_(IntervalFromEnv()),
      start_(std::chrono::steady_clock::now()),
      last_(start_) {}

Progress::~Progress() { Finish(); }

double Progress::Elapsed() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
}

void Progress::Update(double fraction, const std::string& text) { Emit(fraction, text, false); }

void Progress::Bytes(int64_t done, int64_t total) {
  const double secs = Elapsed();
  char rate[32];
  std::snprintf(rate, sizeof rate, "%.1f MB/s", secs > 0 ? static_cast<double>(done) / 1e6 / secs : 0.0);
  std::string text = HumanBytes(done);
  if (total >= 0) text += " of " + HumanBytes(total);
  text += std::string(", ") + rate;
  Emit(total > 0 ? static_cast<double>(done) / static_cast<double>(total) : (total == 0 ? 1.0 : -1.0),
       text, false);
}

void Progress::Finish() {
  if (held_ && tty_ && enabled_) Draw(held_fraction_, held_text_);
  held_ = false;
  if (drawn_) std::fputc('\n', stderr);
  drawn_ = false;
}

// Called by Update and Bytes: draws (terminal) or logs a line when it is
// time to, else keeps the state for Finish.
void Progress::Emit(double fraction, const std::string& text, bool final) {
  if (!enabled_) return;
  const auto now = std::chrono::steady_clock::now();
  const int64_t since = std::chrono::duration_cast<std::chrono::milliseconds>(now - last_).count();
  const bool due = tty_ ? (!drawn_ || since >= kDrawIntervalMs) : since >= interval_ms_;
  if (!final && !due) {
    held_ = true;
    held_fraction_ = fraction;
    held_text_ = text;
    return;
  }
  last_ = now;
  held_ = false;
  if (tty_) {
    Draw(fraction, text);
    return;
  }
  char pct[8] = "";
  if (fraction >= 0) std::snprintf(pct, sizeof pct, "%3d%% ", static_cast<int>(std::clamp(fraction, 0.0, 1.0) * 100));
  std::fprintf(stderr, "mrctl: %s: %s%s\n", what_.c_str(), pct, text.c_str());
}

// One terminal line, redrawn over the last one: "[####      ]  40%  what: text".
void Progress::Draw(double fraction, const std::string& text) {
  std::string line;
  if (fraction >= 0) {
    fraction = std::clamp(fraction, 0.0, 1.0);
    const int filled = static_cast<int>(fraction * kBarWidth);
    char pct[8];
    std::snprintf(pct, sizeof pct, "%3d%%", static_cast<int>(fraction * 100));
    line = "[" + std::string(filled, '#') + std::string(kBarWidth - filled, ' ') + "] " + pct + "  ";
  }
  line += what_ + ": " + text;
  const size_t width = line.size();
  if (line.size() < width_) line += std::string(width_ - line.size(), ' ');
  width_ = width;
  std::fprintf(stderr, "\r%s", line.c_str());
  std::fflush(stderr);
  drawn_ = true;
}

}  // namespace mr::tools

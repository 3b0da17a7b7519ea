// The master's clock seam. Every time-dependent rule of the master —
// liveness, stall and lease expiry, speculation, retries, recovery waits —
// reads time through a Clock, so unit tests drive those rules with a
// ManualClock, as scheduler/ tests hand `now` to a policy (leveldb's Env).
//
// Thread-safety: both are (a test advances a ManualClock from its thread
// while the master's thread reads it).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace mr::master {

class Clock {
 public:
  virtual ~Clock() = default;
  // Monotonic milliseconds from an arbitrary origin: for intervals.
  virtual int64_t NowMs() const = 0;
  // Milliseconds since the Unix epoch: for what users read (records,
  // mtimes). May jump; never use it for an interval.
  virtual int64_t WallMs() const = 0;
};

// The real clocks: steady_clock and system_clock.
class SystemClock : public Clock {
 public:
  int64_t NowMs() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  int64_t WallMs() const override {
    return std::chrono::duration_cast<std::chrono::milliseconds>(
               std::chrono::system_clock::now().time_since_epoch())
        .count();
  }
  // The process's one instance.
  static const SystemClock* Get() {
    static const SystemClock clock;
    return &clock;
  }
};

// A clock that moves only when told: NowMs starts at `start_ms`, and
// WallMs is NowMs plus a fixed epoch offset.
class ManualClock : public Clock {
 public:
  explicit ManualClock(int64_t start_ms = 1000) : now_ms_(start_ms) {}
  int64_t NowMs() const override { return now_ms_.load(); }
  int64_t WallMs() const override { return kEpochMs + now_ms_.load(); }
  void Advance(int64_t ms) { now_ms_ += ms; }

  static constexpr int64_t kEpochMs = 1'800'000'000'000;  // 2027-01-15

 private:
  std::atomic<int64_t> now_ms_;
};

}  // namespace mr::master

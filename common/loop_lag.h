// LoopLagProbe: how late a daemon's event loop runs what is due.
//
// mr-master and mr-worker each serve every RPC, timer and page from one
// io_context thread, so anything that holds that thread (a long handler, a
// pass over every block, a synced disk write, the host stealing the CPU)
// delays every call that arrives meanwhile, and no per-RPC histogram shows
// where the time went. The probe arms a timer every `period` and observes
// how late it fires: its lag is how long the loop could not run what was
// due. This is Hadoop's JvmPauseMonitor (which sleeps on a thread of its own
// and so sees pauses of the whole process) moved onto the loop itself, which
// is what a single-threaded server's callers wait for.
//
// Thread-safety: Start and Stop on the executor's thread; the observer runs
// there.
#pragma once

#include <chrono>
#include <functional>
#include <memory>

#include <boost/asio/any_io_executor.hpp>

namespace mr {

class LoopLagProbe {
 public:
  // `observe` receives each lag in seconds (0 when the timer fired on time).
  using Observer = std::function<void(double seconds)>;
  LoopLagProbe(boost::asio::any_io_executor executor, std::chrono::milliseconds period, Observer observe);
  ~LoopLagProbe();  // Stop()
  LoopLagProbe(const LoopLagProbe&) = delete;
  LoopLagProbe& operator=(const LoopLagProbe&) = delete;

  void Start();
  // No observation after this returns.
  void Stop();

 private:
  struct State;
  std::shared_ptr<State> state_;  // shared with the armed timer's handler
};

}  // namespace mr

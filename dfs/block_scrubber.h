// BlockScrubber: verifies every replica of a BlockStore in the background,
// so a bad chunk in a replica nobody reads is found before the good copies
// are lost too (HDFS's block scanner).
//
// One pass reads every block that is not already quarantined, in id order,
// through BlockStore::Read (which checks each 64 KiB chunk against its
// stored checksum), at most `bytes_per_second` bytes per second. A block
// that fails verification is handed to `on_corrupt` and the pass moves on;
// a block removed meanwhile is skipped. A pass starts at Start() and then
// every `interval` after the previous pass started (at once if a pass took
// longer).
//
// Thread-safe. The scrubber runs on its own thread (its reads and sleeps
// never hold one of the worker's io_context threads); `on_corrupt` is called
// on that thread. Stop() (or the destructor) ends it promptly, also in the
// middle of a pass or a throttling sleep.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <mutex>
#include <thread>

#include "dfs/block_store.h"

namespace mr::dfs {

class BlockScrubber {
 public:
  struct Options {
    // Time between the starts of two full passes. REQUIRES: > 0.
    std::chrono::milliseconds interval{std::chrono::hours(21 * 24)};
    // Read rate limit. REQUIRES: > 0.
    int64_t bytes_per_second = 1 << 20;
  };
  using OnCorrupt = std::function<void(uint64_t id, const Status& why)>;

  // `store` must outlive the scrubber.
  BlockScrubber(BlockStore& store, Options options, OnCorrupt on_corrupt);
  ~BlockScrubber();
  BlockScrubber(const BlockScrubber&) = delete;
  BlockScrubber& operator=(const BlockScrubber&) = delete;

  // Starts the thread; the first pass begins at once.
  void Start();
  // Stops and joins the thread. Idempotent.
  void Stop();

  // Full passes completed, and bytes verified in all passes.
  int64_t passes() const;
  int64_t bytes_verified() const;

 private:
  void Run();
  // Scrubs block `b`; false if stopped meanwhile.
  bool ScrubBlock(const StoredBlock& b, std::chrono::steady_clock::time_point* budget);
  // Sleeps until `t` or Stop(); false if stopped.
  bool SleepUntil(std::chrono::steady_clock::time_point t);

  BlockStore& store_;
  const Options options_;
  const OnCorrupt on_corrupt_;
  mutable std::mutex mu_;
  std::condition_variable cv_;
  bool stopping_ = false;     // guarded by mu_
  int64_t passes_ = 0;        // guarded by mu_
  int64_t bytes_verified_ = 0;  // guarded by mu_
  std::thread thread_;
};

}  // namespace mr::dfs

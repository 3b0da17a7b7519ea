#include "dfs/block_scrubber.h"

#include <algorithm>
#include <string>

#include <spdlog/spdlog.h>

namespace mr::dfs {
namespace {

// Bytes per Read(): whole chunks, small enough that Stop() is never far off.
constexpr int64_t kStepBytes = 16 * kChecksumChunkBytes;

}  // namespace

BlockScrubber::BlockScrubber(BlockStore& store, Options options, OnCorrupt on_corrupt)
    : store_(store), options_(options), on_corrupt_(std::move(on_corrupt)) {}

BlockScrubber::~BlockScrubber() { Stop(); }

void BlockScrubber::Start() { thread_ = std::thread([this] { Run(); }); }

void BlockScrubber::Stop() {
  {
    std::lock_guard lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  if (thread_.joinable()) thread_.join();
}

int64_t BlockScrubber::passes() const {
  std::lock_guard lock(mu_);
  return passes_;
}

int64_t BlockScrubber::bytes_verified() const {
  std::lock_guard lock(mu_);
  return bytes_verified_;
}

bool BlockScrubber::SleepUntil(std::chrono::steady_clock::time_point t) {
  std::unique_lock lock(mu_);
  cv_.wait_until(lock, t, [&] { return stopping_; });
  return !stopping_;
}

void BlockScrubber::Run() {
  using Clock = std::chrono::steady_clock;
  while (true) {
    const auto start = Clock::now();
    auto budget = start;  // when the bytes read so far are paid for
    int64_t blocks = 0;
    const int64_t before = bytes_verified();
    for (const StoredBlock& b : store_.List()) {
      if (b.quarantined) continue;  // known bad: its repair is under way
      ++blocks;
      if (!ScrubBlock(b, &budget)) return;
    }
    {
      std::lock_guard lock(mu_);
      ++passes_;
    }
    spdlog::debug("scrub pass {} done: {} blocks, {} bytes verified in {} ms", passes(), blocks,
                  bytes_verified() - before,
                  std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - start).count());
    if (!SleepUntil(start + options_.interval)) return;
  }
}

bool BlockScrubber::ScrubBlock(const StoredBlock& b, std::chrono::steady_clock::time_point* budget) {
  std::string data;
  for (int64_t offset = 0; offset < b.bytes; offset += kStepBytes) {
    const int64_t n = std::min(kStepBytes, b.bytes - offset);
    // Pay for the bytes before reading them: the rate holds from the start.
    *budget = std::max(*budget, std::chrono::steady_clock::now()) +
              std::chrono::nanoseconds(n * 1'000'000'000 / options_.bytes_per_second);
    if (!SleepUntil(*budget)) return false;
    Status s = store_.Read(b.id, offset, n, &data);
    if (s.IsNotFound()) return true;  // removed meanwhile
    if (s.IsCorruption()) {
      spdlog::error("scrub: block {} is corrupt: {}", b.id, s.ToString());
      on_corrupt_(b.id, s);
      return true;
    }
    if (!s.ok()) {
      spdlog::warn("scrub: cannot read block {}: {}", b.id, s.ToString());
      return true;
    }
    std::lock_guard lock(mu_);
    bytes_verified_ += n;
  }
  return true;
}

}  // namespace mr::dfs

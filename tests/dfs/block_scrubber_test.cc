#include "dfs/block_scrubber.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <random>
#include <thread>
#include <vector>

namespace mr::dfs {
namespace {

namespace fs = std::filesystem;
using namespace std::chrono_literals;
constexpr int64_t kChunk = kChecksumChunkBytes;

std::string MakeData(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string data(n, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  return data;
}

class BlockScrubberTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "block_scrubber_test_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
           std::to_string(::getpid());
    fs::remove_all(dir_);
    auto store = BlockStore::Open(dir_, {});
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }

  void Put(uint64_t id, const std::string& data) {
    auto writer = store_->NewWriter(id);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->Append(data).ok());
    ASSERT_TRUE((*writer)->Commit().ok());
  }

  // Polls `pred` every 10 ms for at most `limit`.
  static bool WaitFor(const std::function<bool()>& pred, std::chrono::milliseconds limit) {
    const auto deadline = std::chrono::steady_clock::now() + limit;
    while (!pred() && std::chrono::steady_clock::now() < deadline) std::this_thread::sleep_for(10ms);
    return pred();
  }

  std::string dir_;
  std::unique_ptr<BlockStore> store_;
};

// The scrubber finds a bad chunk in a block nobody reads, reports it once
// (the worker quarantines it, and quarantined blocks are not scrubbed
// again), and verifies every good block.
TEST_F(BlockScrubberTest, FindsTheCorruptBlockAndOnlyIt) {
  for (uint64_t id = 1; id <= 4; ++id) Put(id, MakeData(3 * kChunk + 17 * id, id));
  {
    std::fstream f(store_->BlockPath(3), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(2 * kChunk + 5);
    f.put('\x7f');
    f.seekp(2 * kChunk + 6);
    f.put('\x00');
  }
  std::mutex mu;
  std::vector<uint64_t> reported;
  BlockScrubber scrubber(*store_, {.interval = 50ms, .bytes_per_second = 64 << 20},
                         [&](uint64_t id, const Status& why) {
                           EXPECT_TRUE(why.IsCorruption()) << why.ToString();
                           ASSERT_TRUE(store_->Quarantine(id, why.message()).ok());
                           std::lock_guard lock(mu);
                           reported.push_back(id);
                         });
  scrubber.Start();
  ASSERT_TRUE(WaitFor([&] { return scrubber.passes() >= 3; }, 20s));
  scrubber.Stop();
  std::lock_guard lock(mu);
  EXPECT_EQ(reported, std::vector<uint64_t>{3});
  // Pass 1 read all four blocks up to the bad chunk of block 3 (its first
  // two chunks verify); later passes skip block 3.
  int64_t good = 0;
  for (uint64_t id : {1, 2, 4}) good += 3 * kChunk + 17 * id;
  EXPECT_GE(scrubber.bytes_verified(), 3 * good);
  EXPECT_TRUE(store_->Contains(3));
  EXPECT_TRUE(fs::exists(store_->BlockPath(3)));
}

// Stop() ends a pass that the rate limit makes long (1 KiB/s would take
// minutes for this store); the test would hang, not fail, without it.
TEST_F(BlockScrubberTest, StopEndsAThrottledPass) {
  Put(1, MakeData(4 * kChunk, 1));
  BlockScrubber scrubber(*store_, {.interval = 1h, .bytes_per_second = 1024}, [](uint64_t, const Status&) {});
  scrubber.Start();
  std::this_thread::sleep_for(50ms);
  scrubber.Stop();
  EXPECT_EQ(scrubber.passes(), 0);
}

}  // namespace
}  // namespace mr::dfs

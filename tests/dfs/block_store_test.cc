#include "dfs/block_store.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <thread>

namespace mr::dfs {
namespace {

namespace fs = std::filesystem;
constexpr int64_t kChunk = kChecksumChunkBytes;

// Deterministic pseudo-random bytes, different for each seed.
std::string MakeData(int64_t n, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string data(n, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  return data;
}

bool DirIsEmpty(const std::string& dir) { return fs::is_directory(dir) && fs::is_empty(dir); }

class BlockStoreTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = ::testing::TempDir() + "block_store_test_" + info->name() + "_" +
           std::to_string(::getpid());
    fs::remove_all(dir_);
    Reopen();
  }
  void TearDown() override {
    store_.reset();
    fs::remove_all(dir_);
  }

  void Reopen(BlockStore::Options options = {}) {
    store_.reset();
    auto store = BlockStore::Open(dir_, options);
    ASSERT_TRUE(store.ok()) << store.status().ToString();
    store_ = std::move(store).value();
  }

  // Writes `data` as block `id` in appends of up to two chunks, with checksums.
  Status Put(uint64_t id, const std::string& data) {
    MR_ASSIGN_OR_RETURN(auto writer, store_->NewWriter(id));
    for (size_t off = 0; off < data.size(); off += 2 * kChunk) {
      std::span<const char> piece(data.data() + off,
                                  std::min<size_t>(2 * kChunk, data.size() - off));
      std::vector<uint64_t> sums = ChunkChecksums(piece);
      MR_RETURN_IF_ERROR(writer->Append(piece, sums));
    }
    return writer->Commit();
  }

  std::string Read(uint64_t id, int64_t offset, int64_t length) {
    std::string out;
    Status s = store_->Read(id, offset, length, &out);
    EXPECT_TRUE(s.ok()) << s.ToString();
    return out;
  }

  std::string dir_;
  std::unique_ptr<BlockStore> store_;
};

// The basic promise: what was written comes back, short last chunk included.
TEST_F(BlockStoreTest, RoundTripMultiChunkWithShortLastChunk) {
  const std::string data = MakeData(3 * kChunk + 1000, 1);
  ASSERT_TRUE(Put(7, data).ok());
  EXPECT_TRUE(store_->Contains(7));
  EXPECT_EQ(*store_->Length(7), static_cast<int64_t>(data.size()));
  EXPECT_EQ(store_->used_bytes(), static_cast<int64_t>(data.size()));
  EXPECT_EQ(Read(7, 0, data.size()), data);
  EXPECT_EQ(ChunkChecksums(data).size(), 4u);
  EXPECT_TRUE(fs::exists(store_->BlockPath(7)));
}

// A zero-length block is legal (an empty file) and reads as empty.
TEST_F(BlockStoreTest, EmptyBlock) {
  ASSERT_TRUE(Put(8, "").ok());
  EXPECT_EQ(*store_->Length(8), 0);
  EXPECT_EQ(Read(8, 0, 100), "");
}

// Reads are served from covering chunks and trimmed; every alignment must work.
TEST_F(BlockStoreTest, ReadsAtEveryAlignment) {
  const int64_t n = 3 * kChunk + 1000;
  const std::string data = MakeData(n, 2);
  ASSERT_TRUE(Put(1, data).ok());
  const std::vector<std::pair<int64_t, int64_t>> ranges = {{0, 10},
                                                           {100, 50},
                                                           {kChunk - 10, 20},
                                                           {kChunk, kChunk},
                                                           {0, 2 * kChunk},
                                                           {kChunk + 5, 2 * kChunk},
                                                           {3 * kChunk, 1000},
                                                           {3 * kChunk + 999, 1},
                                                           {n, 10},
                                                           {10, n},
                                                           {5, 0}};
  for (auto [offset, length] : ranges) {
    SCOPED_TRACE(std::to_string(offset) + "+" + std::to_string(length));
    int64_t expected = std::max<int64_t>(0, std::min(length, n - offset));
    EXPECT_EQ(Read(1, offset, length), data.substr(offset, expected));
  }
  std::string out;
  EXPECT_TRUE(store_->Read(1, n + 1, 1, &out).IsInvalidArgument());
  EXPECT_TRUE(store_->Read(1, -1, 1, &out).IsInvalidArgument());
  EXPECT_TRUE(store_->Read(2, 0, 1, &out).IsNotFound());
}

// End-to-end verifying readers need the stored checksums of the chunks they get.
TEST_F(BlockStoreTest, ReadChunksReturnsStoredChecksums) {
  const std::string data = MakeData(3 * kChunk + 1000, 3);
  const std::vector<uint64_t> sums = ChunkChecksums(data);
  ASSERT_TRUE(Put(1, data).ok());
  std::string out;
  std::vector<uint64_t> got;
  ASSERT_TRUE(store_->ReadChunks(1, kChunk, 2 * kChunk, &out, &got).ok());
  EXPECT_EQ(out, data.substr(kChunk, 2 * kChunk));
  EXPECT_EQ(got, std::vector<uint64_t>(sums.begin() + 1, sums.begin() + 3));
  ASSERT_TRUE(store_->ReadChunks(1, 0, 1 << 30, &out, &got).ok());
  EXPECT_EQ(out, data);
  EXPECT_EQ(got, sums);
}

// A dn.ReadBlock frame of any range (issue 12, point 6): exactly the bytes,
// the stored checksum for each whole chunk, the piece's own for a piece.
TEST_F(BlockStoreTest, ReadChunksAtAnyOffsetGivesOneChecksumPerPiece) {
  const std::string data = MakeData(3 * kChunk + 1000, 4);
  const std::vector<uint64_t> sums = ChunkChecksums(data);
  ASSERT_TRUE(Put(1, data).ok());
  const std::string_view v = data;
  std::string out;
  std::vector<uint64_t> got;
  const std::vector<std::pair<int64_t, int64_t>> ranges = {
      {1, kChunk}, {kChunk - 1, 2}, {70000, 4096}, {100, 3 * kChunk}, {3 * kChunk + 10, 990},
      {2 * kChunk, 1000 + kChunk}, {5, 1 << 30}, {3 * kChunk + 1000, 10}};
  for (auto [off, len] : ranges) {
    SCOPED_TRACE(testing::Message() << off << "+" << len);
    ASSERT_TRUE(store_->ReadChunks(1, off, len, &out, &got).ok());
    const std::string_view want = v.substr(off, len);
    EXPECT_EQ(out, want);
    EXPECT_EQ(got, RangeChecksums(off, out));
  }
  // A whole chunk inside a range keeps its stored checksum.
  ASSERT_TRUE(store_->ReadChunks(1, 100, 3 * kChunk, &out, &got).ok());
  ASSERT_EQ(got.size(), 4u);
  EXPECT_EQ(got[1], sums[1]);
  EXPECT_EQ(got[2], sums[2]);
}

// A few bytes of a chunk that is damaged elsewhere are refused: the whole
// chunk is verified, not just the bytes asked for.
TEST_F(BlockStoreTest, ReadChunksOfAPieceOfABadChunkIsCorruption) {
  const std::string data = MakeData(3 * kChunk, 5);
  ASSERT_TRUE(Put(1, data).ok());
  {
    std::fstream f(store_->BlockPath(1), std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f.is_open());
    f.seekp(kChunk + 60000);
    f.put(static_cast<char>(data[kChunk + 60000] ^ 1));
  }
  std::string out;
  std::vector<uint64_t> got;
  EXPECT_TRUE(store_->ReadChunks(1, kChunk + 10, 100, &out, &got).IsCorruption());
  EXPECT_TRUE(store_->ReadChunks(1, 1000, kChunk, &out, &got).IsCorruption());
  // The chunks around it are still good.
  ASSERT_TRUE(store_->ReadChunks(1, 2 * kChunk + 7, 100, &out, &got).ok());
  EXPECT_EQ(out, data.substr(2 * kChunk + 7, 100));
}

// Data damaged on the wire must be refused before it is stored.
// A dn.ReadBlock frame's checksums: one per piece of the data cut at the
// block's 64 KiB boundaries, whatever offset the data starts at; from a
// boundary they are the chunk checksums.
TEST(RangeChecksumsTest, OnePerPieceCutAtTheBlocksChunkBoundaries) {
  const std::string data = MakeData(200000, 3);
  EXPECT_EQ(RangeChecksums(0, data), ChunkChecksums(data));
  EXPECT_EQ(RangeChecksums(3 * kChunk, data), ChunkChecksums(data));
  EXPECT_TRUE(RangeChecksums(70000, std::string_view()).empty());
  // From 70000: [70000, 131072), two whole chunks, then 3392 bytes.
  const std::string_view v = data;
  const int64_t first = 2 * kChunk - 70000;
  const std::vector<uint64_t> want = {
      ChunkChecksum(v.substr(0, first)), ChunkChecksum(v.substr(first, kChunk)),
      ChunkChecksum(v.substr(first + kChunk, kChunk)),
      ChunkChecksum(v.substr(first + 2 * kChunk))};
  EXPECT_EQ(RangeChecksums(70000, data), want);
  // Inside one chunk: a single piece.
  EXPECT_EQ(RangeChecksums(kChunk + 5, v.substr(0, 100)),
            std::vector<uint64_t>{ChunkChecksum(v.substr(0, 100))});
}

TEST_F(BlockStoreTest, AppendWithWrongChecksumIsCorruptionAndBlockNeverAppears) {
  const std::string data = MakeData(2 * kChunk, 4);
  {
    auto writer = store_->NewWriter(1);
    ASSERT_TRUE(writer.ok());
    std::vector<uint64_t> sums = ChunkChecksums(data);
    sums[1] ^= 1;
    Status s = (*writer)->Append(data, sums);
    EXPECT_TRUE(s.IsCorruption()) << s.ToString();
    EXPECT_NE(s.message().find("chunk 1"), std::string::npos) << s.ToString();
    EXPECT_FALSE((*writer)->Commit().ok());
  }
  EXPECT_FALSE(store_->Contains(1));
  EXPECT_TRUE(DirIsEmpty(dir_ + "/tmp"));
}

// A writer abandoned mid-block (client died) must leave no trace.
TEST_F(BlockStoreTest, UncommittedWriterDestroyedLeavesNothing) {
  {
    auto writer = store_->NewWriter(1);
    ASSERT_TRUE(writer.ok());
    ASSERT_TRUE((*writer)->Append(MakeData(kChunk, 5)).ok());
    EXPECT_EQ((*writer)->bytes_written(), kChunk);
    EXPECT_FALSE(DirIsEmpty(dir_ + "/tmp"));
  }
  EXPECT_FALSE(store_->Contains(1));
  EXPECT_TRUE(DirIsEmpty(dir_ + "/tmp"));
  EXPECT_FALSE(fs::exists(store_->BlockPath(1)));
  EXPECT_TRUE(store_->List().empty());
}

// Block ids are write-once: no second commit, no second writer once stored.
TEST_F(BlockStoreTest, CommitTwiceAndExistingIdAreAlreadyExists) {
  auto writer = store_->NewWriter(1);
  ASSERT_TRUE(writer.ok());
  auto racer = store_->NewWriter(1);  // a second writer of the same id, before the first commits
  ASSERT_TRUE(racer.ok());
  ASSERT_TRUE((*writer)->Append(std::string("hello")).ok());
  ASSERT_TRUE((*racer)->Append(std::string("other")).ok());
  ASSERT_TRUE((*writer)->Commit().ok());
  EXPECT_TRUE((*writer)->Commit().IsAlreadyExists());
  EXPECT_TRUE((*racer)->Commit().IsAlreadyExists());
  EXPECT_TRUE(store_->NewWriter(1).status().IsAlreadyExists());
  EXPECT_EQ(Read(1, 0, 100), "hello");
}

// Bit rot is caught per chunk, and only the damaged chunk is unreadable.
TEST_F(BlockStoreTest, FlippedByteOnDiskIsCorruptionOfThatChunkOnly) {
  const std::string data = MakeData(3 * kChunk, 6);
  ASSERT_TRUE(Put(0xabc, data).ok());
  {
    std::fstream f(store_->BlockPath(0xabc), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(kChunk + 123);
    f.put(static_cast<char>(data[kChunk + 123] ^ 0x40));
  }
  std::string out;
  Status s = store_->Read(0xabc, kChunk + 100, 10, &out);
  EXPECT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_NE(s.message().find("0000000000000abc"), std::string::npos) << s.ToString();
  EXPECT_NE(s.message().find("chunk 1"), std::string::npos) << s.ToString();
  EXPECT_TRUE(store_->Read(0xabc, 0, 3 * kChunk, &out).IsCorruption());
  EXPECT_EQ(Read(0xabc, 0, kChunk), data.substr(0, kChunk));
  EXPECT_EQ(Read(0xabc, 2 * kChunk, kChunk), data.substr(2 * kChunk));
  EXPECT_TRUE(store_->Contains(0xabc));  // the caller decides to Remove()
}

// Remove drops file and metadata; removing twice is not an error.
TEST_F(BlockStoreTest, RemoveThenContainsFalseAndRemoveMissingIsOk) {
  ASSERT_TRUE(Put(1, MakeData(kChunk + 1, 7)).ok());
  ASSERT_TRUE(store_->Remove(1).ok());
  EXPECT_FALSE(store_->Contains(1));
  EXPECT_TRUE(store_->Length(1).status().IsNotFound());
  EXPECT_FALSE(fs::exists(store_->BlockPath(1)));
  EXPECT_EQ(store_->used_bytes(), 0);
  EXPECT_TRUE(store_->Remove(1).ok());
  EXPECT_TRUE(store_->Remove(42).ok());
  ASSERT_TRUE(Put(1, "again").ok());  // the id may be reused after removal
  EXPECT_EQ(Read(1, 0, 10), "again");
}

// The block report after a restart must match the one before it.
TEST_F(BlockStoreTest, ReopenKeepsList) {
  for (uint64_t id : {uint64_t{300}, uint64_t{5}, uint64_t{0x1234567890abcdef}}) {
    ASSERT_TRUE(Put(id, MakeData(id % 1000 + kChunk, id)).ok());
  }
  const std::vector<StoredBlock> before = store_->List();
  ASSERT_EQ(before.size(), 3u);
  EXPECT_EQ(before[0].id, 5u);  // sorted by id
  Reopen();
  const std::vector<StoredBlock> after = store_->List();
  ASSERT_EQ(after.size(), before.size());
  for (size_t i = 0; i < before.size(); ++i) {
    EXPECT_EQ(after[i].id, before[i].id);
    EXPECT_EQ(after[i].bytes, before[i].bytes);
  }
  EXPECT_EQ(Read(5, 0, 10), MakeData(5 + kChunk, 5).substr(0, 10));
}

// A crash can leave files without metadata, metadata without (whole) files
// and tmp files; Open() must leave only complete blocks.
TEST_F(BlockStoreTest, OpenReconcilesFilesWithMetadata) {
  ASSERT_TRUE(Put(1, MakeData(kChunk, 1)).ok());
  ASSERT_TRUE(Put(2, MakeData(kChunk, 2)).ok());
  ASSERT_TRUE(Put(3, MakeData(kChunk, 3)).ok());
  const std::string orphan = store_->BlockPath(99);
  store_.reset();
  std::ofstream(orphan) << "orphan";
  std::ofstream(dir_ + "/tmp/blk_0000000000000004.1") << "partial";
  fs::remove(dir_ + "/blocks/02/blk_0000000000000002");
  fs::resize_file(dir_ + "/blocks/03/blk_0000000000000003", kChunk - 1);
  Reopen();
  const std::vector<StoredBlock> blocks = store_->List();
  ASSERT_EQ(blocks.size(), 1u);
  EXPECT_EQ(blocks[0].id, 1u);
  EXPECT_EQ(store_->used_bytes(), kChunk);
  EXPECT_FALSE(fs::exists(orphan));
  EXPECT_FALSE(fs::exists(dir_ + "/blocks/03/blk_0000000000000003"));
  EXPECT_TRUE(DirIsEmpty(dir_ + "/tmp"));
  ASSERT_TRUE(Put(2, "rewritten").ok());  // dropped ids are free again
}

// Which blocks Open() dropped, and why, so the worker can say so (issue 10,
// item 3).
TEST_F(BlockStoreTest, OpenNamesEveryDroppedBlockAndWhy) {
  ASSERT_TRUE(Put(1, MakeData(kChunk, 1)).ok());
  ASSERT_TRUE(Put(2, MakeData(kChunk, 2)).ok());
  ASSERT_TRUE(Put(3, MakeData(kChunk, 3)).ok());
  const std::string orphan = store_->BlockPath(99);
  store_.reset();
  std::ofstream(orphan) << "orphan";
  fs::remove(dir_ + "/blocks/02/blk_0000000000000002");
  fs::resize_file(dir_ + "/blocks/03/blk_0000000000000003", kChunk - 1);
  Reopen();
  std::map<uint64_t, std::string> dropped;
  for (const DroppedBlock& d : store_->dropped_at_open()) dropped[d.id] = d.reason;
  EXPECT_EQ(dropped, (std::map<uint64_t, std::string>{
                         {2, "missing"},
                         {3, "length " + std::to_string(kChunk - 1) + " expected " +
                                 std::to_string(kChunk)},
                         {99, "no metadata"}}));
  Reopen();
  EXPECT_TRUE(store_->dropped_at_open().empty());  // nothing left to drop
}

// A bad chunk quarantines the replica: the file stays, the mark is durable,
// the good chunks still read, and the block report says which are marked.
TEST_F(BlockStoreTest, QuarantineKeepsTheReplicaAndTheMarkSurvivesReopen) {
  const std::string data = MakeData(3 * kChunk, 9);
  ASSERT_TRUE(Put(5, data).ok());
  ASSERT_TRUE(Put(6, MakeData(kChunk, 10)).ok());
  {
    std::fstream f(store_->BlockPath(5), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(kChunk + 7);
    f.put(static_cast<char>(data[kChunk + 7] ^ 1));
  }
  std::string out;
  Status bad = store_->Read(5, 0, 3 * kChunk, &out);
  ASSERT_TRUE(bad.IsCorruption()) << bad.ToString();
  auto first = store_->Quarantine(5, bad.message());
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  EXPECT_TRUE(*first);
  EXPECT_FALSE(*store_->Quarantine(5, "again"));  // already marked
  EXPECT_TRUE(store_->Quarantine(77, "x").status().IsNotFound());
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round == 0 ? "before reopen" : "after reopen");
    EXPECT_TRUE(store_->Contains(5));
    EXPECT_TRUE(fs::exists(store_->BlockPath(5)));
    const std::vector<StoredBlock> list = store_->List();
    ASSERT_EQ(list.size(), 2u);
    EXPECT_TRUE(list[0].quarantined);
    EXPECT_FALSE(list[1].quarantined);
    EXPECT_EQ(Read(5, 0, kChunk), data.substr(0, kChunk));
    EXPECT_EQ(Read(5, 2 * kChunk, kChunk), data.substr(2 * kChunk));
    EXPECT_TRUE(store_->Read(5, kChunk, 10, &out).IsCorruption());
    EXPECT_EQ(store_->used_bytes(), 4 * kChunk);
    Reopen();
  }
}

// The repair: a new writer of a quarantined id replaces it in one step; a
// good replica can never be overwritten.
TEST_F(BlockStoreTest, RepairWriterReplacesOnlyAQuarantinedReplica) {
  const std::string data = MakeData(2 * kChunk + 100, 11);
  ASSERT_TRUE(Put(5, data).ok());
  EXPECT_TRUE(store_->NewWriter(5).status().IsAlreadyExists());
  {
    std::fstream f(store_->BlockPath(5), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(10);
    f.put(static_cast<char>(data[10] ^ 1));
  }
  ASSERT_TRUE(store_->Quarantine(5, "checksum mismatch in chunk 0").ok());
  ASSERT_TRUE(Put(5, data).ok()) << "a quarantined replica can be rewritten";
  EXPECT_FALSE(store_->List()[0].quarantined);
  EXPECT_EQ(Read(5, 0, data.size()), data);
  EXPECT_EQ(store_->used_bytes(), static_cast<int64_t>(data.size()));
  EXPECT_TRUE(store_->NewWriter(5).status().IsAlreadyExists());  // good again
  Reopen();
  EXPECT_FALSE(store_->List()[0].quarantined);
  EXPECT_EQ(Read(5, 0, data.size()), data);
}

// A stream of reads (the block server's dn.ReadBlock) reads one file from
// start to end: a repair renaming a new file over the replica, or the
// replica's removal, does not switch or cut it mid-stream; a new reader sees
// the new state. The descriptor it gives (for sendfile) holds the bytes it
// verified.
TEST_F(BlockStoreTest, ReaderKeepsItsFileThroughRepairAndRemoval) {
  const std::string data = MakeData(3 * kChunk + 7, 12);
  ASSERT_TRUE(Put(6, data).ok());
  EXPECT_TRUE(store_->OpenReader(99).status().IsNotFound());
  auto opened = store_->OpenReader(6);
  ASSERT_TRUE(opened.ok()) << opened.status().ToString();
  std::unique_ptr<BlockReader> reader = std::move(opened).value();
  EXPECT_EQ(reader->length(), static_cast<int64_t>(data.size()));

  // Bad chunk 1 on disk: the reader reports it, the replica is quarantined
  // and repaired with other bytes of the same length (a repair renames).
  {
    std::fstream f(store_->BlockPath(6), std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(kChunk + 3);
    f.put(static_cast<char>(data[kChunk + 3] ^ 1));
  }
  std::string out;
  std::vector<uint64_t> sums;
  EXPECT_TRUE(reader->ReadChunks(kChunk, kChunk, &out, &sums).IsCorruption());
  ASSERT_TRUE(store_->Quarantine(6, "chunk 1").ok());
  ASSERT_TRUE(Put(6, data).ok());
  // The old reader still reads the old file: chunk 0 good, chunk 1 bad.
  ASSERT_TRUE(reader->ReadChunks(0, kChunk, &out, &sums).ok());
  EXPECT_EQ(out, data.substr(0, kChunk));
  EXPECT_TRUE(reader->ReadChunks(kChunk, kChunk, &out, &sums).IsCorruption());
  // A new reader reads the repaired file; its descriptor has the same bytes.
  auto repaired = store_->OpenReader(6);
  ASSERT_TRUE(repaired.ok());
  ASSERT_TRUE((*repaired)->ReadChunks(0, 1 << 30, &out, &sums).ok());
  EXPECT_EQ(out, data);
  std::string via_fd(data.size(), '\0');
  EXPECT_EQ(::pread((*repaired)->fd(), via_fd.data(), via_fd.size(), 0),
            static_cast<ssize_t>(data.size()));
  EXPECT_EQ(via_fd, data);

  // Removed while open: the open reader reads to the end; new ones are NotFound.
  ASSERT_TRUE(store_->Remove(6).ok());
  EXPECT_TRUE(store_->OpenReader(6).status().IsNotFound());
  ASSERT_TRUE((*repaired)->ReadChunks(2 * kChunk, kChunk + 7, &out, &sums).ok());
  EXPECT_EQ(out, data.substr(2 * kChunk));
  EXPECT_EQ(sums.size(), 2u);
}

// A full disk refuses new blocks until space is freed.
TEST_F(BlockStoreTest, CapacityLimit) {
  Reopen({.fsync = true, .capacity_bytes = 2 * kChunk});
  ASSERT_TRUE(Put(1, MakeData(kChunk, 1)).ok());
  ASSERT_TRUE(Put(2, MakeData(kChunk, 2)).ok());
  Status s = store_->NewWriter(3).status();
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_NE(s.message().find("over capacity"), std::string::npos) << s.ToString();
  ASSERT_TRUE(store_->Remove(1).ok());
  EXPECT_TRUE(Put(3, "fits").ok());
}

// Workers write many blocks at once while serving reads; nothing may be lost
// or mixed up (also run under -fsanitize=thread).
TEST_F(BlockStoreTest, ConcurrentWritersAndReaders) {
  constexpr int kWriters = 4;
  constexpr int kBlocksEach = 20;
  auto data_of = [](uint64_t id) { return MakeData(kChunk * (id % 3) + id * 37, id); };
  std::atomic<int> failures{0};
  std::atomic<bool> done{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kWriters; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kBlocksEach; ++i) {
        if (!Put(t * 1000 + i, data_of(t * 1000 + i)).ok()) ++failures;
      }
    });
  }
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&] {
      while (!done) {
        for (const StoredBlock& b : store_->List()) {
          std::string out;
          if (!store_->Read(b.id, 0, b.bytes, &out).ok() || out != data_of(b.id)) ++failures;
        }
      }
    });
  }
  for (int t = 0; t < kWriters; ++t) threads[t].join();
  done = true;
  for (size_t t = kWriters; t < threads.size(); ++t) threads[t].join();
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(store_->List().size(), static_cast<size_t>(kWriters * kBlocksEach));
}

}  // namespace
}  // namespace mr::dfs

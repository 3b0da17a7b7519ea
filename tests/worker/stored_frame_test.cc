// Map output at zstd level 0 (worker/segment_io.h, StoredFrame): zstd frames
// of stored blocks. Checked against zstd's own decoder (an independent
// implementation of the format), against the same records written at level 1,
// and for the checksum that must still catch a flipped byte.
#include <fcntl.h>
#include <zstd.h>

#include <random>

#include "tests/worker/map_output_fixture.h"

namespace mr::worker {
namespace {

using namespace map_output_testing;

// Records of random bytes and sizes; some values span several 128 KiB blocks.
Records RandomRecords(uint64_t seed, int n) {
  std::mt19937_64 rng(seed);
  Records records;
  for (int i = 0; i < n; ++i) {
    std::string key(rng() % 40, '\0'), value(rng() % 17 == 0 ? rng() % 300000 : rng() % 80, '\0');
    for (char& c : key) c = static_cast<char>('a' + rng() % 3);
    for (char& c : value) c = static_cast<char>(rng());
    records.emplace_back(std::move(key), std::move(value));
  }
  return records;
}

// `records` as one segment at `level`, the file's bytes.
std::string WriteSegment(const std::string& path, const Records& records, int level) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND, 0644);
  SegmentWriter w(fd, 0, level);
  for (const auto& [k, v] : records) EXPECT_TRUE(w.Add(k, v).ok());
  auto info = w.Finish();
  EXPECT_TRUE(info.ok());
  ::close(fd);
  const std::string bytes = ReadFile(path);
  EXPECT_EQ(info->compressed_bytes, static_cast<int64_t>(bytes.size()));
  return bytes;
}

// zstd's one-shot decoder over a whole frame.
std::string ZstdDecompress(const std::string& frame, size_t capacity) {
  std::string out(capacity, '\0');
  const size_t n = ZSTD_decompress(out.data(), out.size(), frame.data(), frame.size());
  EXPECT_FALSE(ZSTD_isError(n)) << ZSTD_getErrorName(n);
  out.resize(ZSTD_isError(n) ? 0 : n);
  return out;
}

TEST_F(MapOutputTest, StoredSegmentIsAZstdFrameWithTheSameContent) {
  const Records records = RandomRecords(29, 400);
  const std::string stored = WriteSegment(dir_ + "/stored", records, /*level=*/0);
  const std::string compressed = WriteSegment(dir_ + "/zstd1", records, /*level=*/1);
  size_t raw = 0;
  for (const auto& [k, v] : records) raw += k.size() + v.size() + 10;
  // zstd decodes both to the same bytes; the stored one is not compressed
  // (header, 3 bytes per block of at most 128 KiB, 4 bytes of checksum).
  const std::string content = ZstdDecompress(compressed, raw);
  EXPECT_EQ(ZstdDecompress(stored, raw), content);
  const size_t blocks = (content.size() + (128 << 10) - 1) / (128 << 10);
  EXPECT_GE(stored.size(), content.size() + 6 + 4);
  // (a record too large for the batch is written as its own blocks)
  EXPECT_LE(stored.size(), content.size() + 6 + 3 * (blocks + 3 * records.size()) + 4);
  // And the segment reader gives back the records.
  auto got = Drain(*SegmentReader::FromMemory(stored));
  ASSERT_TRUE(got.ok()) << got.status().ToString();
  EXPECT_EQ(*got, records);
}

TEST_F(MapOutputTest, StoredSegmentWithAFlippedByteIsCorruption) {
  const std::string good = WriteSegment(dir_ + "/stored", RandomRecords(7, 300), /*level=*/0);
  int checked = 0;
  for (size_t pos = 6; pos < good.size(); pos += good.size() / 97 + 1, ++checked) {
    std::string bad = good;
    bad[pos] ^= 0x5A;
    const Status s = Drain(*SegmentReader::FromMemory(bad)).status();
    EXPECT_TRUE(s.IsCorruption()) << "flip at " << pos << ": " << s.ToString();
  }
  EXPECT_GT(checked, 90);
}

TEST_F(MapOutputTest, StoredBufferSpillsAndMergesLikeCompressed) {
  // Enough records for several spills of a small buffer, merged with the
  // combiner off: both levels give the same records in every partition.
  const Records records = RandomRecords(3, 600);
  std::vector<std::vector<Records>> outputs;
  for (int level : {1, 0}) {
    MapOutputOptions o = Options(3, 64 << 10);
    o.zstd_level = level;
    auto buffer = NewBuffer(o);
    ASSERT_NE(buffer, nullptr);
    for (size_t i = 0; i < records.size(); ++i) {
      ASSERT_TRUE(buffer->Add(static_cast<int>(i % 3), records[i].first, records[i].second).ok());
    }
    auto index = buffer->Finish(out_path());
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    EXPECT_GT(index->spills, 3);
    outputs.push_back(ReadOutput(*index));
  }
  EXPECT_EQ(outputs[0], outputs[1]);
}

}  // namespace
}  // namespace mr::worker

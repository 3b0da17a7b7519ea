// What the map-output tests share (map_output_test.cc,
// map_output_counting_test.cc): records, reading a segment back, and a
// fixture with a private directory per test that checks a finished output
// against its index.
#pragma once

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "worker/map_output.h"

namespace mr::worker::map_output_testing {

namespace fs = std::filesystem;
using Record = std::pair<std::string, std::string>;
using Records = std::vector<Record>;

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

// Every record of `reader`, or its error.
inline Result<Records> Drain(SegmentReader& reader) {
  Records out;
  std::string_view k, v;
  for (;;) {
    MR_ASSIGN_OR_RETURN(bool more, reader.Next(&k, &v));
    if (!more) return out;
    out.emplace_back(std::string(k), std::string(v));
  }
}

class MapOutputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ =
        ::testing::TempDir() + "map_output_test_" + info->name() + "_" + std::to_string(::getpid());
    fs::remove_all(dir_);
    fs::create_directories(spill_dir());
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string spill_dir() const { return dir_ + "/spill"; }
  std::string out_path() const { return dir_ + "/map.out"; }

  MapOutputOptions Options(int partitions, int64_t buffer) const {
    MapOutputOptions o;
    o.partitions = partitions;
    o.sort_buffer_bytes = buffer;
    o.spill_dir = spill_dir();
    return o;
  }

  std::unique_ptr<MapOutputBuffer> NewBuffer(const MapOutputOptions& o) {
    auto buffer = MapOutputBuffer::Create(o);
    EXPECT_TRUE(buffer.ok()) << buffer.status().ToString();
    return buffer.ok() ? std::move(buffer).value() : nullptr;
  }

  // Reads every segment of a finished output and checks the index against
  // the file: segments back to back, covering the file, keys in order.
  std::vector<Records> ReadOutput(const MapOutputIndex& index) {
    std::vector<Records> parts;
    int64_t expected_offset = 0;
    for (const SegmentInfo& s : index.segments) {
      EXPECT_EQ(s.offset, expected_offset);
      expected_offset += s.compressed_bytes;
      auto reader = SegmentReader::FromFile(out_path(), s.offset, s.compressed_bytes);
      EXPECT_TRUE(reader.ok()) << reader.status().ToString();
      auto records = Drain(**reader);
      EXPECT_TRUE(records.ok()) << records.status().ToString();
      EXPECT_EQ(static_cast<int64_t>(records->size()), s.records);
      int64_t raw = 0;
      for (size_t i = 0; i < records->size(); ++i) {
        raw += (*records)[i].first.size() + (*records)[i].second.size();
        if (i > 0) {
          EXPECT_LE((*records)[i - 1].first, (*records)[i].first);
        }
      }
      EXPECT_EQ(raw, s.raw_bytes);
      parts.push_back(std::move(records).value());
    }
    EXPECT_EQ(expected_offset, static_cast<int64_t>(fs::file_size(out_path())));
    return parts;
  }

  std::string dir_;
};

}  // namespace mr::worker::map_output_testing

// MergeToFanIn (worker/segment_merge.h): many segment files merged down to a
// bounded fan-in give the same stream of keys and values, in the same order,
// as one merge of them all; and the pass sizes are Hadoop's.
#include "worker/segment_merge.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "worker/map_output.h"
#include "tests/worker/map_output_fixture.h"

namespace mr::worker {
namespace {

namespace fs = std::filesystem;
using map_output_testing::Records;

class SegmentMergeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = ::testing::TempDir() + "segment_merge_test_" +
           ::testing::UnitTest::GetInstance()->current_test_info()->name() + "_" +
           std::to_string(::getpid());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Segment file i: keys k000..k(n-1) where (key + i) % 3 == 0, value "m<i>"
  // (so a key's values come from many files and their order shows).
  std::vector<std::string> WriteSegments(int count, int keys) {
    std::vector<std::string> files;
    for (int i = 0; i < count; ++i) {
      const std::string path = dir_ + "/map-" + std::to_string(i);
      const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
      SegmentWriter w(fd, 0);
      for (int k = 0; k < keys; ++k) {
        if ((k + i) % 3 != 0) continue;
        char key[16];
        std::snprintf(key, sizeof key, "k%03d", k);
        EXPECT_TRUE(w.Add(key, "m" + std::to_string(i)).ok());
      }
      EXPECT_TRUE(w.Finish().ok());
      ::close(fd);
      files.push_back(path);
    }
    return files;
  }

  // The merged stream of `files`: key, then its values, flattened.
  static Records MergeAll(const std::vector<std::string>& files) {
    std::vector<std::unique_ptr<SegmentReader>> readers;
    for (const auto& f : files) readers.push_back(SegmentReader::FromFile(f, 0, fs::file_size(f)).value());
    MergingReader m(std::move(readers));
    Records out;
    std::string_view k, v;
    while (*m.NextKey(&k)) {
      while (m.NextValue(&v)) out.emplace_back(std::string(k), std::string(v));
    }
    return out;
  }

  std::string dir_;
};

TEST(MergePassSize, FirstPassLeavesWholePasses) {
  EXPECT_EQ(MergePassSize(10, 10), 0);   // fits: one streaming pass, nothing written
  EXPECT_EQ(MergePassSize(11, 10), 2);   // 11 -> 10
  EXPECT_EQ(MergePassSize(19, 10), 10);  // 19 -> 10
  EXPECT_EQ(MergePassSize(20, 10), 2);   // 20 -> 19 -> 10
  EXPECT_EQ(MergePassSize(3, 2), 2);
}

TEST_F(SegmentMergeTest, FewFilesAreLeftAlone) {
  auto files = WriteSegments(5, 30);
  auto out = MergeToFanIn(files, 5, dir_, [] { return false; });
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(*out, files);
}

TEST_F(SegmentMergeTest, ManyFilesMergeToTheFanInWithTheSameStream) {
  auto files = WriteSegments(137, 200);
  const Records expected = MergeAll(files);
  auto out = MergeToFanIn(files, 4, dir_, [] { return false; });
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(out->size(), 4u);
  EXPECT_EQ(MergeAll(*out), expected);  // same keys, same values, same order
  // An input is either one of the files left, or merged and gone.
  for (const auto& f : files) {
    const bool left = std::find(out->begin(), out->end(), f) != out->end();
    EXPECT_EQ(fs::exists(f), left) << f;
  }
}

TEST_F(SegmentMergeTest, WorksBelowTheDescriptorLimitThatAOnePassMergeNeeds) {
  auto files = WriteSegments(300, 50);
  const Records expected = MergeAll(files);
  rlimit old{};
  ASSERT_EQ(::getrlimit(RLIMIT_NOFILE, &old), 0);
  rlimit low = old;
  low.rlim_cur = 64;  // far fewer than 300 files
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &low), 0);
  auto out = MergeToFanIn(files, 16, dir_, [] { return false; });
  ASSERT_EQ(::setrlimit(RLIMIT_NOFILE, &old), 0);
  ASSERT_TRUE(out.ok()) << out.status().ToString();
  EXPECT_EQ(MergeAll(*out), expected);
}

TEST_F(SegmentMergeTest, CancelledStopsAndRemovesIntermediates) {
  auto files = WriteSegments(20, 30);
  int asked = 0;
  auto out = MergeToFanIn(files, 3, dir_, [&] { return ++asked > 2; });
  EXPECT_TRUE(out.status().IsAborted()) << out.status().ToString();
  for (const auto& e : fs::directory_iterator(dir_)) {
    EXPECT_EQ(e.path().filename().string().rfind("merge-", 0), std::string::npos) << e.path();
  }
}

}  // namespace
}  // namespace mr::worker

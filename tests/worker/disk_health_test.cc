// DiskHealth on a real file system: a small tmpfs that fills up and empties.
#include "worker/disk_health.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace mr::worker {
namespace {

// A 4 MiB tmpfs, unmounted by the destructor.
class Tmpfs {
 public:
  Tmpfs() {
    dir_ = std::filesystem::temp_directory_path() / ("mr-disk-health-" + std::to_string(::getpid()));
    std::filesystem::create_directories(dir_);
    mounted_ = std::system(("mount -t tmpfs -o size=4M tmpfs " + dir_).c_str()) == 0;
  }
  ~Tmpfs() {
    if (mounted_) std::system(("umount " + dir_).c_str());
    std::filesystem::remove_all(dir_);
  }
  bool mounted() const { return mounted_; }
  const std::string& dir() const { return dir_; }

  // Writes zeros into dir/name until the file system is full.
  void Fill(const std::string& name) const {
    std::ofstream f(dir_ + "/" + name, std::ios::binary);
    const std::string mib(1 << 20, '\0');
    for (int i = 0; i < 8 && f; ++i) f.write(mib.data(), static_cast<std::streamsize>(mib.size()));
  }

 private:
  std::string dir_;
  bool mounted_ = false;
};

constexpr int64_t kBlock = 1 << 20;

// Writes `bytes` of zeros into dir/name.
void WriteZeros(const std::string& path, int64_t bytes) {
  std::ofstream f(path, std::ios::binary);
  const std::string chunk(64 << 10, '\0');
  for (int64_t done = 0; done < bytes && f; done += static_cast<int64_t>(chunk.size())) {
    f.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
  }
}

TEST(DiskHealthTest, FreeSpaceUnderTheThresholdIsAProblem) {
  Tmpfs t;
  if (!t.mounted()) GTEST_SKIP() << "cannot mount a tmpfs (not root?)";
  DiskHealth low(t.dir(), 1 << 20, 64 << 10);
  DiskHealth::State s = low.Check();
  EXPECT_GT(s.free_bytes, 3 << 20);
  EXPECT_EQ(s.problem, "");
  DiskHealth high(t.dir(), int64_t{64} << 20, 64 << 10);  // more than the tmpfs holds
  EXPECT_NE(high.Check().problem.find("under the margin"), std::string::npos);
}

// Issue 28 item 11: the margin is at least one block, whatever
// min_free_bytes says (a block that does not fit fails mid-write).
TEST(DiskHealthTest, LessThanOneBlockFreeIsAProblemEvenWithNoMinFree) {
  Tmpfs t;
  if (!t.mounted()) GTEST_SKIP() << "cannot mount a tmpfs (not root?)";
  DiskHealth d(t.dir(), /*min_free_bytes=*/0, /*block_bytes=*/2 * kBlock);
  EXPECT_EQ(d.Check().problem, "");
  WriteZeros(t.dir() + "/filler", 3 * kBlock);  // 1 MiB of 4 left: less than a block
  EXPECT_NE(d.Check().problem.find("under the margin"), std::string::npos) << d.Check().problem;
}

// Issue 28 item 11: a real ENOSPC marks the disk although a 64 KiB probe
// still fits, until the margin and one more block are free again.
TEST(DiskHealthTest, ARealEnospcMarksTheDiskUntilTheSpaceReturns) {
  Tmpfs t;
  if (!t.mounted()) GTEST_SKIP() << "cannot mount a tmpfs (not root?)";
  DiskHealth d(t.dir(), 0, kBlock / 2);  // margin 512 KiB; full until 1 MiB is free
  WriteZeros(t.dir() + "/filler", 13 * kBlock / 4);  // ~768 KiB free: above the margin
  ASSERT_EQ(d.Check().problem, "");
  const int fd = ::open((t.dir() + "/big").c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  ASSERT_GE(fd, 0);
  const std::string two_mib(2 * kBlock, 'x');
  ASSERT_LT(::write(fd, two_mib.data(), two_mib.size()), static_cast<ssize_t>(two_mib.size()));
  const int err = ::write(fd, two_mib.data(), two_mib.size()) < 0 ? errno : 0;
  ::close(fd);
  ASSERT_EQ(err, ENOSPC);
  std::filesystem::remove(t.dir() + "/big");  // the probe would pass now
  d.WriteFailed(std::string("cannot write 'big': ") + std::strerror(err));
  const std::string problem = d.Check().problem;
  EXPECT_NE(problem.find("No space left on device"), std::string::npos) << problem;
  std::filesystem::remove(t.dir() + "/filler");
  EXPECT_EQ(d.Check().problem, "");
}

// Any other failed write counts only when a probe fails too, and lasts
// until a probe succeeds again.
TEST(DiskHealthTest, AFailedWriteCountsUntilAProbeSucceeds) {
  Tmpfs t;
  if (!t.mounted()) GTEST_SKIP() << "cannot mount a tmpfs (not root?)";
  DiskHealth d(t.dir(), 0, 64 << 10);
  d.WriteFailed("cannot write: Input/output error");  // not the disk's: the probe succeeds
  EXPECT_EQ(d.Check().problem, "");
  ::chmod(t.dir().c_str(), 0500);  // root ignores the mode: use a read-only remount
  ASSERT_EQ(std::system(("mount -o remount,ro " + t.dir()).c_str()), 0);
  EXPECT_EQ(d.Check().problem, "") << "nothing failed yet";
  d.WriteFailed("cannot write: Read-only file system");
  DiskHealth::State ro = d.Check();
  EXPECT_NE(ro.problem.find("Read-only file system"), std::string::npos) << ro.problem;
  ASSERT_EQ(std::system(("mount -o remount,rw " + t.dir()).c_str()), 0);
  ::chmod(t.dir().c_str(), 0700);
  EXPECT_EQ(d.Check().problem, "");
}

}  // namespace
}  // namespace mr::worker

// DiskHealth on a real file system: a small tmpfs that fills up and empties.
#include "worker/disk_health.h"

#include <unistd.h>

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

TEST(DiskHealthTest, FreeSpaceUnderTheThresholdIsAProblem) {
  Tmpfs t;
  if (!t.mounted()) GTEST_SKIP() << "cannot mount a tmpfs (not root?)";
  DiskHealth low(t.dir(), 1 << 20);
  DiskHealth::State s = low.Check();
  EXPECT_GT(s.free_bytes, 3 << 20);
  EXPECT_EQ(s.problem, "");
  DiskHealth high(t.dir(), int64_t{64} << 20);  // more than the tmpfs holds
  EXPECT_NE(high.Check().problem.find("under min_free_bytes"), std::string::npos);
}

// With no threshold, only a failed write (confirmed by a probe) counts, and
// it lasts until a probe succeeds again.
TEST(DiskHealthTest, AFailedWriteCountsUntilAProbeSucceeds) {
  Tmpfs t;
  if (!t.mounted()) GTEST_SKIP() << "cannot mount a tmpfs (not root?)";
  DiskHealth d(t.dir(), 0);
  d.WriteFailed();  // a failure that was not the disk's: the probe succeeds
  EXPECT_EQ(d.Check().problem, "");
  t.Fill("filler");
  EXPECT_EQ(d.Check().problem, "") << "nothing failed yet";
  d.WriteFailed();
  DiskHealth::State full = d.Check();
  EXPECT_EQ(full.free_bytes, 0);
  EXPECT_NE(full.problem.find("No space left on device"), std::string::npos) << full.problem;
  EXPECT_NE(d.Check().problem, "") << "still full";
  std::filesystem::remove(t.dir() + "/filler");
  EXPECT_EQ(d.Check().problem, "");
}

}  // namespace
}  // namespace mr::worker

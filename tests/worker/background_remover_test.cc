// Tests for worker/background_remover.h on real directories: a tree's name
// is free as soon as Remove returns, the tree is gone once drained (or once
// the remover is destroyed), and a missing path is no error.
#include "worker/background_remover.h"

#include <gtest/gtest.h>

#include <fstream>
#include <string>

#include <unistd.h>

namespace mr::worker {
namespace {

namespace fs = std::filesystem;

class BackgroundRemoverTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() / ("background_remover_test-" + std::to_string(::getpid()));
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  // A job directory of `tasks` task directories with a file each.
  fs::path MakeTree(const std::string& name, int tasks) {
    const fs::path dir = root_ / name;
    for (int i = 0; i < tasks; ++i) {
      fs::create_directories(dir / ("m-" + std::to_string(i) + "-0"));
      std::ofstream(dir / ("m-" + std::to_string(i) + "-0") / "out") << "bytes " << i;
    }
    return dir;
  }

  size_t Entries() const {
    size_t n = 0;
    for ([[maybe_unused]] const auto& e : fs::directory_iterator(root_)) ++n;
    return n;
  }

  fs::path root_;
};

TEST_F(BackgroundRemoverTest, TheNameIsFreeAtOnceAndTheTreeGoesOnItsThread) {
  BackgroundRemover remover;
  const fs::path job = MakeTree("job-7", 200);
  remover.Remove(job);
  EXPECT_FALSE(fs::exists(job)) << "renamed aside before Remove returns";
  fs::create_directories(job);  // the name can be taken again at once
  remover.Drain();
  EXPECT_TRUE(fs::exists(job)) << "the new tree of that name stays";
  EXPECT_EQ(Entries(), 1u) << "nothing else is left under the root";
}

TEST_F(BackgroundRemoverTest, AMissingPathIsNoError) {
  BackgroundRemover remover;
  remover.Remove(root_ / "never-there");
  remover.Drain();
  EXPECT_EQ(Entries(), 0u);
}

TEST_F(BackgroundRemoverTest, DestroyedItRemovesWhatIsStillQueued) {
  {
    BackgroundRemover remover;
    for (int j = 0; j < 5; ++j) remover.Remove(MakeTree("job-" + std::to_string(j), 50));
  }
  EXPECT_EQ(Entries(), 0u);
}

}  // namespace
}  // namespace mr::worker

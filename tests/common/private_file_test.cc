#include "common/private_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "common/config.h"

namespace mr {
namespace {

namespace fs = std::filesystem;

class PrivateFileTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("mr-private-file-test-" + std::to_string(::getpid()));
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override { fs::remove_all(dir_); }

  // Writes `text` to dir_/name with `mode`; returns the path.
  std::string Write(const std::string& name, const std::string& text, mode_t mode) {
    const fs::path path = dir_ / name;
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
    return path.string();
  }

  fs::path dir_;
};

TEST_F(PrivateFileTest, ReadsAnOwnerOrGroupReadableFileWithoutTheTrailingNewline) {
  // 0640 root:mr is how the package's /etc/mr files are meant to be.
  auto secret = ReadPrivateFile(Write("secret", "s3cret-value\n", 0640), "secret file");
  ASSERT_TRUE(secret.ok()) << secret.status().ToString();
  EXPECT_EQ(*secret, "s3cret-value");
  EXPECT_TRUE(CheckPrivateFile(Write("key", "k", 0600), "key file").ok());
}

TEST_F(PrivateFileTest, RefusesAFileOthersCanAccessWithOneLineSayingTheFix) {
  for (mode_t mode : {0644, 0604, 0602, 0601}) {
    const std::string path = Write("secret", "value", mode);
    auto secret = ReadPrivateFile(path, "secret file");
    ASSERT_FALSE(secret.ok()) << std::oct << mode;
    EXPECT_TRUE(secret.status().IsInvalidArgument());
    EXPECT_NE(secret.status().message().find("chmod o-rwx " + path), std::string::npos)
        << secret.status().message();
    EXPECT_EQ(secret.status().message().find('\n'), std::string::npos);
    EXPECT_FALSE(CheckPrivateFile(path, "key file").ok()) << std::oct << mode;
  }
}

TEST_F(PrivateFileTest, GroupAccessOnlyWhenRootOwnsTheFileAndNeverGroupWrite) {
  // PostgreSQL's rule for its key file: a file owned by root may let its
  // group read it (root:mr 0640, for daemons running as mr); a file owned by
  // anyone else must be 0600 or less, and no group may write or execute.
  if (::geteuid() != 0) GTEST_SKIP() << "needs root to chown the test files";
  const std::string root_owned = Write("root-owned", "value", 0640);
  EXPECT_TRUE(CheckPrivateFile(root_owned, "key file").ok());
  for (mode_t mode : {0660, 0650, 0620}) {
    ::chmod(root_owned.c_str(), mode);
    Status s = CheckPrivateFile(root_owned, "key file");
    EXPECT_TRUE(s.IsInvalidArgument()) << std::oct << mode << " " << s.ToString();
    EXPECT_NE(s.message().find("chmod g-wx " + root_owned), std::string::npos) << s.message();
  }
  const std::string user_owned = Write("user-owned", "value\n", 0640);
  ASSERT_EQ(::chown(user_owned.c_str(), 65534, 65534), 0);
  auto read = ReadPrivateFile(user_owned, "key file");
  ASSERT_FALSE(read.ok());
  EXPECT_TRUE(read.status().IsInvalidArgument());
  EXPECT_NE(read.status().message().find("not owned by root"), std::string::npos)
      << read.status().message();
  EXPECT_NE(read.status().message().find("chmod g-rwx " + user_owned), std::string::npos)
      << read.status().message();
  EXPECT_EQ(read.status().message().find('\n'), std::string::npos);
  ::chmod(user_owned.c_str(), 0600);
  EXPECT_TRUE(ReadPrivateFile(user_owned, "key file").ok());
  ::chmod(user_owned.c_str(), 0400);
  EXPECT_TRUE(CheckPrivateFile(user_owned, "key file").ok());
}

TEST_F(PrivateFileTest, RefusesAMissingEmptyOrNonRegularFile) {
  auto missing = ReadPrivateFile((dir_ / "nope").string(), "secret file");
  EXPECT_TRUE(missing.status().IsNotFound()) << missing.status().ToString();
  EXPECT_TRUE(CheckPrivateFile((dir_ / "nope").string(), "key file").IsNotFound());
  auto empty = ReadPrivateFile(Write("empty", " \n\n", 0600), "secret file");
  EXPECT_TRUE(empty.status().IsInvalidArgument());
  EXPECT_NE(empty.status().message().find("is empty"), std::string::npos);
  ::chmod(dir_.c_str(), 0700);
  auto dir = ReadPrivateFile(dir_.string(), "secret file");
  EXPECT_FALSE(dir.ok());
}

TEST_F(PrivateFileTest, ClusterSecretFileBecomesTheSecret) {
  const std::string path = Write("secret", "from-the-file\n", 0640);
  auto config = ParseClusterConfig(
      "[cluster]\nsecret_file = \"" + path + "\"\n[master]\naddress = \"10.0.0.1:7000\"\n",
      "cluster.toml");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->ResolvedSecret(), "from-the-file");
  EXPECT_EQ(config->cluster.secret_file, path);
}

TEST_F(PrivateFileTest, ClusterSecretFileThatOthersCanReadIsRefused) {
  const std::string path = Write("secret", "from-the-file\n", 0644);
  auto config = ParseClusterConfig(
      "[cluster]\nsecret_file = \"" + path + "\"\n[master]\naddress = \"10.0.0.1:7000\"\n",
      "cluster.toml");
  ASSERT_FALSE(config.ok());
  EXPECT_EQ(config.status().message(),
            "cluster.toml: 'cluster.secret_file' '" + path +
                "' is accessible by others (mode 0644); run: chmod o-rwx " + path);
}

TEST_F(PrivateFileTest, ClusterSecretFileExcludesTheOtherSecretKeys) {
  const std::string path = Write("secret", "x", 0600);
  for (const char* other : {"secret = \"a\"\n", "secret_env = \"MR_SECRET\"\n"}) {
    auto config = ParseClusterConfig(std::string("[cluster]\n") + other + "secret_file = \"" +
                                         path + "\"\n[master]\naddress = \"127.0.0.1:7000\"\n",
                                     "cluster.toml");
    ASSERT_FALSE(config.ok());
    EXPECT_NE(config.status().message().find("set only one of"), std::string::npos);
  }
  auto missing = ParseClusterConfig("[cluster]\nsecret_file = \"" + (dir_ / "nope").string() +
                                        "\"\n[master]\naddress = \"127.0.0.1:7000\"\n",
                                    "cluster.toml");
  EXPECT_TRUE(missing.status().IsNotFound()) << missing.status().ToString();
}

TEST(LogConfigTest, RotationKeysHaveDefaultsAndBounds) {
  auto defaults = ParseClusterConfig("[master]\naddress = \"127.0.0.1:7000\"\n", "c.toml");
  ASSERT_TRUE(defaults.ok());
  EXPECT_EQ(defaults->log.max_file_bytes, 64 << 20);
  EXPECT_EQ(defaults->log.max_files, 5);
  auto set = ParseClusterConfig(
      "[master]\naddress = \"127.0.0.1:7000\"\n[log]\nmax_file_bytes = 0\nmax_files = 9\n",
      "c.toml");
  ASSERT_TRUE(set.ok()) << set.status().ToString();
  EXPECT_EQ(set->log.max_file_bytes, 0);
  EXPECT_EQ(set->log.max_files, 9);
  auto small = ParseClusterConfig(
      "[master]\naddress = \"127.0.0.1:7000\"\n[log]\nmax_file_bytes = 100\n", "c.toml");
  EXPECT_FALSE(small.ok());
  auto none = ParseClusterConfig("[master]\naddress = \"127.0.0.1:7000\"\n[log]\nmax_files = 0\n",
                                 "c.toml");
  EXPECT_FALSE(none.ok());
}

TEST(ExampleClusterFileTest, TheShippedExampleIsValid) {
  // deploy/examples/cluster.toml is installed as the starting point of a
  // tenant's /etc/mr/cluster.toml; it must load as it is (with its secret).
  const char* source = std::getenv("MR_SOURCE_DIR");
  ASSERT_NE(source, nullptr);
  ::setenv("MR_SECRET", "an-example-secret-of-enough-length", 1);
  auto config = LoadClusterConfig(std::string(source) + "/deploy/examples/cluster.toml");
  ::unsetenv("MR_SECRET");
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  EXPECT_EQ(config->workers.size(), 4u);
  EXPECT_EQ(config->master.data_dir, "/var/lib/mr/master");
}

}  // namespace
}  // namespace mr

// Tests for common/config.h: the cluster secret and loading the file from
// disk (the parser's other rules: config_test.cc).
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "common/config.h"
#include "tests/common/config_fixture.h"

namespace mr {
namespace {

using namespace testing_config;

// The secret can come from the environment instead of the file.
TEST(ConfigTest, SecretFromEnvironment) {
  setenv("MR_CONFIG_TEST_SECRET", "from-env", 1);
  ClusterConfig c = ParseOk(
      "[cluster]\nsecret_env = \"MR_CONFIG_TEST_SECRET\"\n[master]\naddress = \"10.0.0.1:7000\"\n");
  EXPECT_EQ(c.ResolvedSecret(), "from-env");
  unsetenv("MR_CONFIG_TEST_SECRET");
  EXPECT_EQ(c.ResolvedSecret(), "");
}

// An unset variable resolves to no secret, which a public master refuses.
TEST(ConfigTest, SecretEnvUnsetOnPublicAddress) {
  unsetenv("MR_CONFIG_TEST_UNSET");
  EXPECT_EQ(ParseError("[cluster]\nsecret_env = \"MR_CONFIG_TEST_UNSET\"\n"
                       "[master]\naddress = \"10.0.0.1:7000\"\n"),
            "cluster.toml: 'cluster.secret' is required when master.address is not a loopback "
            "address");
}

// Two sources of one secret would be ambiguous.
TEST(ConfigTest, SecretAndSecretEnvBothSet) {
  EXPECT_EQ(ParseError(WithMaster("[cluster]\nsecret = \"a\"\nsecret_env = \"B\"\n")),
            "cluster.toml: set only one of 'cluster.secret' and 'cluster.secret_env'");
}

// A reachable master must authenticate; a loopback one may skip it.
TEST(ConfigTest, PublicAddressNeedsSecret) {
  EXPECT_EQ(ParseError("[master]\naddress = \"10.0.0.1:7000\"\n"),
            "cluster.toml: 'cluster.secret' is required when master.address is not a loopback "
            "address");
  EXPECT_EQ(ParseError("[master]\naddress = \"master.example.com:7000\"\n"),
            "cluster.toml: 'cluster.secret' is required when master.address is not a loopback "
            "address");
  EXPECT_EQ(ParseOk("[cluster]\nsecret = \"x\"\n[master]\naddress = \"10.0.0.1:7000\"\n")
                .ResolvedSecret(),
            "x");
  EXPECT_EQ(ParseError("[master]\naddress = \"127.0.0.1:7000\"\n"), "OK");
  EXPECT_EQ(ParseError("[master]\naddress = \"localhost:7000\"\n"), "OK");
  EXPECT_EQ(ParseError("[master]\naddress = \"[::1]:7000\"\n"), "OK");
}

// TOML syntax errors carry toml++'s position and description.
TEST(ConfigTest, SyntaxErrorHasLineAndColumn) {
  std::string message = ParseError("[master]\naddress = \"127.0.0.1:7000\n");
  EXPECT_EQ(message.rfind("cluster.toml:2:", 0), 0u) << message;
  // A repeated table is a TOML error too, reported where it is redefined.
  message = ParseError(WithMaster("[master]\ndata_dir = \"x\"\n"));
  EXPECT_EQ(message.rfind("cluster.toml:4:", 0), 0u) << message;
}

// Loading from a path names the file by its base name in errors.
TEST(ConfigTest, LoadFromFileUsesBaseName) {
  std::string path = ::testing::TempDir() + "/config_test_cluster.toml";
  {
    std::ofstream out(path);
    out << WithMaster("[dfs]\nblocksize = 1\n");
  }
  Result<ClusterConfig> r = LoadClusterConfig(path);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().message(), "config_test_cluster.toml: unknown key 'dfs.blocksize'");
  {
    std::ofstream out(path);
    out << kMinimal;
  }
  EXPECT_TRUE(LoadClusterConfig(path).ok());
  std::remove(path.c_str());
}

// A missing file is NotFound with the path and the system's reason.
TEST(ConfigTest, MissingFileIsNotFound) {
  std::string path = ::testing::TempDir() + "/no-such-cluster.toml";
  Result<ClusterConfig> r = LoadClusterConfig(path);
  ASSERT_TRUE(r.status().IsNotFound()) << r.status().ToString();
  EXPECT_EQ(r.status().message(),
            "cannot read cluster file '" + path + "': No such file or directory");
}

// A directory opens but cannot be read: IOError, not a parse error.
TEST(ConfigTest, DirectoryIsIOError) {
  Result<ClusterConfig> r = LoadClusterConfig(::testing::TempDir());
  EXPECT_TRUE(r.status().IsIOError()) << r.status().ToString();
}

}  // namespace
}  // namespace mr

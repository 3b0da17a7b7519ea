// Helpers of the cluster-file tests (config_test.cc, config_file_test.cc).
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "common/config.h"

namespace mr::testing_config {

// The smallest valid file: only the one required key.
inline constexpr char kMinimal[] = R"(
[master]
address = "127.0.0.1:7000"
)";

// Appends `extra` to the minimal file.
inline std::string WithMaster(const std::string& extra) { return std::string(kMinimal) + extra; }

// A [[worker]] entry with the three required keys.
inline std::string Worker(const std::string& id, const std::string& address,
                   const std::string& more = "") {
  return "[[worker]]\nid = \"" + id + "\"\naddress = \"" + address + "\"\ndatacenter = \"dc1\"\n" +
         more;
}

inline ClusterConfig ParseOk(const std::string& text) {
  Result<ClusterConfig> r = ParseClusterConfig(text, "cluster.toml");
  EXPECT_TRUE(r.ok()) << r.status().ToString();
  return r.ok() ? *r : ClusterConfig{};
}

// The error message, or "OK" when parsing succeeded.
inline std::string ParseError(const std::string& text) {
  Result<ClusterConfig> r = ParseClusterConfig(text, "cluster.toml");
  if (r.ok()) return "OK";
  EXPECT_TRUE(r.status().IsInvalidArgument()) << r.status().ToString();
  EXPECT_EQ(r.status().message().find('\n'), std::string::npos) << "message is not one line";
  return r.status().message();
}

}  // namespace mr::testing_config

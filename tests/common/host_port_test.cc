// Tests for the host and port parsing of common/config.h (common/host_port.cc).
#include <gtest/gtest.h>

#include <string>

#include "common/config.h"

namespace mr {
namespace {

// Host:port forms accepted and refused, each error naming the text.
TEST(HostPortTest, Parse) {
  EXPECT_EQ(*ParseHostPort("127.0.0.1:7000"), (HostPort{"127.0.0.1", 7000}));
  EXPECT_EQ(*ParseHostPort("node-1.example.com:1"), (HostPort{"node-1.example.com", 1}));
  EXPECT_EQ(*ParseHostPort("[::1]:65535"), (HostPort{"::1", 65535}));
  EXPECT_EQ(*ParseHostPort("[fe80::1]:80"), (HostPort{"fe80::1", 80}));
  EXPECT_EQ(ParseHostPort("h:0").status().message(),
            "invalid address 'h:0': port must be an integer in 1..65535");
  EXPECT_EQ(ParseHostPort("h:65536").status().message(),
            "invalid address 'h:65536': port must be an integer in 1..65535");
  EXPECT_EQ(ParseHostPort("h:7x").status().message(),
            "invalid address 'h:7x': port must be an integer in 1..65535");
  EXPECT_EQ(ParseHostPort("h:").status().message(),
            "invalid address 'h:': port must be an integer in 1..65535");
  EXPECT_EQ(ParseHostPort("h").status().message(), "invalid address 'h': expected host:port");
  EXPECT_EQ(ParseHostPort(":7000").status().message(), "invalid address ':7000': empty host");
  EXPECT_EQ(ParseHostPort("::1:7000").status().message(),
            "invalid address '::1:7000': write IPv6 addresses in brackets, e.g. [::1]:7000");
  EXPECT_EQ(ParseHostPort("[::1]7000").status().message(),
            "invalid address '[::1]7000': expected [ipv6]:port");
  EXPECT_EQ(ParseHostPort("[nope]:7000").status().message(),
            "invalid address '[nope]:7000': not an IPv6 address in [ ]");
  EXPECT_EQ(ParseHostPort("300.1.1.1:7000").status().message(),
            "invalid address '300.1.1.1:7000': not a valid host name or IPv4 address");
  EXPECT_EQ(ParseHostPort("a b:7000").status().message(),
            "invalid address 'a b:7000': not a valid host name or IPv4 address");
  EXPECT_TRUE(ParseHostPort("").status().IsInvalidArgument());
}

// ToString is the inverse of ParseHostPort, brackets included.
TEST(HostPortTest, ToStringRoundTrips) {
  for (const char* text : {"127.0.0.1:7000", "example.com:80", "[::1]:7000"}) {
    EXPECT_EQ(ParseHostPort(text)->ToString(), text);
  }
}

// Loopback is 127/8, ::1 and localhost; nothing else.
TEST(HostPortTest, IsLoopbackHost) {
  EXPECT_TRUE(IsLoopbackHost("127.0.0.1"));
  EXPECT_TRUE(IsLoopbackHost("127.255.0.9"));
  EXPECT_TRUE(IsLoopbackHost("localhost"));
  EXPECT_TRUE(IsLoopbackHost("LocalHost"));
  EXPECT_TRUE(IsLoopbackHost("::1"));
  EXPECT_TRUE(IsLoopbackHost("0:0:0:0:0:0:0:1"));
  EXPECT_FALSE(IsLoopbackHost("128.0.0.1"));
  EXPECT_FALSE(IsLoopbackHost("10.0.0.1"));
  EXPECT_FALSE(IsLoopbackHost("0.0.0.0"));
  EXPECT_FALSE(IsLoopbackHost("::"));
  EXPECT_FALSE(IsLoopbackHost("localhost.example.com"));
  EXPECT_FALSE(IsLoopbackHost(""));
}

}  // namespace
}  // namespace mr

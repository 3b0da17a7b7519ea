// Host and port parsing for the cluster file and command lines (config.h:
// ParseHostPort, IsLoopbackHost).
#include <arpa/inet.h>
#include <strings.h>

#include <cctype>
#include <cstdlib>
#include <string>

#include "common/config.h"

namespace mr {
namespace {

// Host names: letters, digits, '-', '_', '.'; all-numeric ones must be IPv4.
bool IsValidHostName(const std::string& host) {
  bool numeric = true;
  for (char c : host) {
    bool alpha = std::isalpha(static_cast<unsigned char>(c)) || c == '-' || c == '_';
    if (!alpha && !std::isdigit(static_cast<unsigned char>(c)) && c != '.') return false;
    numeric = numeric && !alpha;
  }
  in_addr v4;
  return !numeric || inet_pton(AF_INET, host.c_str(), &v4) == 1;
}

}  // namespace

Result<HostPort> ParseHostPort(const std::string& text) {
  auto fail = [&text](const std::string& why) {
    return Status::InvalidArgument("invalid address '" + text + "': " + why);
  };
  HostPort hp;
  std::string port;
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string::npos || close + 1 >= text.size() || text[close + 1] != ':') {
      return fail("expected [ipv6]:port");
    }
    hp.host = text.substr(1, close - 1);
    port = text.substr(close + 2);
    in6_addr v6;
    if (inet_pton(AF_INET6, hp.host.c_str(), &v6) != 1) return fail("not an IPv6 address in [ ]");
  } else {
    size_t colon = text.rfind(':');
    if (colon == std::string::npos) return fail("expected host:port");
    hp.host = text.substr(0, colon);
    port = text.substr(colon + 1);
    if (hp.host.find(':') != std::string::npos) {
      return fail("write IPv6 addresses in brackets, e.g. [::1]:7000");
    }
    if (hp.host.empty()) return fail("empty host");
    if (!IsValidHostName(hp.host)) return fail("not a valid host name or IPv4 address");
  }
  bool digits = !port.empty() && port.size() <= 5;
  for (char c : port) digits = digits && std::isdigit(static_cast<unsigned char>(c));
  int value = digits ? std::atoi(port.c_str()) : 0;
  if (value < 1 || value > 65535) return fail("port must be an integer in 1..65535");
  hp.port = static_cast<uint16_t>(value);
  return hp;
}

bool IsLoopbackHost(const std::string& host) {
  if (host.size() == 9 && strncasecmp(host.c_str(), "localhost", 9) == 0) return true;
  in_addr v4;
  if (inet_pton(AF_INET, host.c_str(), &v4) == 1) return (ntohl(v4.s_addr) >> 24) == 127;
  in6_addr v6;
  return inet_pton(AF_INET6, host.c_str(), &v6) == 1 && IN6_IS_ADDR_LOOPBACK(&v6);
}

}  // namespace mr

// Talking HTTP to a local cluster's status server in tests: raw requests
// over a loopback socket (so a test controls every header), the response's
// status and body, and where the cluster file put the servers.
#pragma once

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <string>

namespace mr::testing {

// The value of the n-th (0-based) line `key = "value"` of the cluster file.
inline std::string TomlValue(const std::string& file, const std::string& key, int n = 0) {
  std::ifstream in(file);
  const std::regex re("^" + key + " = \"([^\"]*)\"");
  std::smatch m;
  for (std::string line; std::getline(in, line);) {
    if (std::regex_search(line, m, re) && n-- == 0) return m[1];
  }
  return "";
}

inline int PortOf(const std::string& host_port) {
  const size_t colon = host_port.rfind(':');
  return colon == std::string::npos ? 0 : std::stoi(host_port.substr(colon + 1));
}

// Sends `request` as is to 127.0.0.1:port and returns everything the server
// sent until it closed (at most 8 MiB, 10 s).
inline std::string Exchange(int port, const std::string& request) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return "";
  timeval tv{10, 0};
  ::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  std::string out;
  if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0) {
    size_t sent = 0;
    while (sent < request.size()) {
      const ssize_t n = ::send(fd, request.data() + sent, request.size() - sent, MSG_NOSIGNAL);
      if (n <= 0) break;  // the server may close early (431): read what it said
      sent += static_cast<size_t>(n);
    }
    char buf[65536];
    for (ssize_t n; out.size() < (8u << 20) && (n = ::recv(fd, buf, sizeof buf, 0)) > 0;) out.append(buf, n);
  }
  ::close(fd);
  return out;
}

struct Response {
  int status = 0;
  std::string body;
};

inline Response Parse(const std::string& raw) {
  Response r;
  if (raw.rfind("HTTP/1.1 ", 0) == 0) r.status = std::stoi(raw.substr(9, 3));
  const size_t end = raw.find("\r\n\r\n");
  if (end != std::string::npos) r.body = raw.substr(end + 4);
  return r;
}

inline Response Get(int port, const std::string& target, const std::string& secret = "") {
  std::string req = "GET " + target + " HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n";
  if (!secret.empty()) req += "Authorization: Bearer " + secret + "\r\n";
  return Parse(Exchange(port, req + "\r\n"));
}

// A form POST of `body` with `headers` (each "Name: value\r\n").
inline Response Post(int port, const std::string& target, const std::string& body,
                     const std::string& headers) {
  return Parse(Exchange(port, "POST " + target + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(port) +
                                  "\r\nConnection: close\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                                  "Content-Length: " + std::to_string(body.size()) + "\r\n" + headers +
                                  "\r\n" + body));
}

}  // namespace mr::testing

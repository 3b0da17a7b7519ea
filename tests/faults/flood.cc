// fault_flood: the hostile client of the fault scenarios flood-unauth and
// flood-fds (tests/faults/, docs/reliability.md). It opens many TCP
// connections to one daemon and holds them open without ever authenticating.
//
//   fault_flood --target 127.0.0.1:PORT --connections N --hold-ms MS
//               [--mode prefix|idle] [--watch-pid PID --max-rss-mb M]
//               [--sources K] [--reopen 1]
//
// Modes:
//   prefix  read the server's Hello frame (docs/wire-format.md: an 8-byte
//           prefix of two big-endian u32, header_len and data_len, then the
//           header), then send one 8-byte prefix announcing a frame of exactly
//           4 MiB (the default max_frame_bytes, so it is not rejected as too
//           large) and nothing after it. Even connections announce it all as
//           header, odd ones as data.
//   idle    connect and send nothing (fills a daemon's descriptor table).
//
// --sources K: connection i comes from 127.0.0.(2 + i % K), so the flood
// has K source addresses (none of them 127.0.0.1, where clients and local
// workers connect from). --reopen 1: while holding, a connection the server
// closes is opened again at once from the same address (idle), as a
// determined attacker would; the summary line counts the reopens.
//
// Safety valve: with --watch-pid, the VmRSS of that process is read every 25
// connections; once it exceeds --max-rss-mb no more connections are opened,
// so a daemon without a bound cannot take the machine's memory. Loopback
// addresses only. Every wait is bounded: connect and Hello 2 s each, opening
// stops after 60 s, the hold is --hold-ms.
//
// Prints one line: what it opened and held. Exit 0 unless the arguments are
// bad (2) or the target is not on 127.0.0.0/8 (2).
//
// Single-threaded; called by tests/faults/scenarios/flood.sh.
#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "common/frame.h"

namespace {

int SourceOf(int sources, int i) { return sources > 0 ? 2 + i % sources : 0; }

using Clock = std::chrono::steady_clock;
constexpr uint32_t kAnnouncedFrameBytes = 4u << 20;
constexpr int kWaitMs = 2000;

struct Options {
  std::string host = "127.0.0.1";
  int port = 0;
  int connections = 1000;
  int hold_ms = 10000;
  std::string mode = "prefix";
  int watch_pid = 0;
  long max_rss_mb = 0;
  int sources = 0;  // 0: the kernel picks (127.0.0.1)
  bool reopen = false;
};

int Usage() {
  std::fprintf(stderr,
               "usage: fault_flood --target 127.0.0.1:PORT --connections N --hold-ms MS "
               "[--mode prefix|idle] [--watch-pid PID --max-rss-mb M] [--sources K] [--reopen 1]\n");
  return 2;
}

// VmRSS of `pid` in MiB, or -1 when it cannot be read.
long RssMb(int pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10) / 1024;
  }
  return -1;
}

// Waits until `fd` is ready for `events`, at most `ms`. True when ready.
bool WaitFd(int fd, short events, int ms) {
  pollfd p{fd, events, 0};
  return poll(&p, 1, ms) == 1 && (p.revents & events) != 0;
}

// A non-blocking connect to `addr` from 127.0.0.`source` (0: any), bounded
// by kWaitMs. Returns the fd or -1.
int ConnectTo(const sockaddr_in& addr, int source) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  if (source > 0) {
    sockaddr_in from{};
    from.sin_family = AF_INET;
    from.sin_addr.s_addr = htonl((127u << 24) | static_cast<uint32_t>(source));
    if (bind(fd, reinterpret_cast<const sockaddr*>(&from), sizeof from) != 0) {
      close(fd);
      return -1;
    }
  }
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0) {
    int err = 0;
    socklen_t len = sizeof err;
    if (errno != EINPROGRESS || !WaitFd(fd, POLLOUT, kWaitMs) ||
        getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) != 0 || err != 0) {
      close(fd);
      return -1;
    }
  }
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  return fd;
}

// Reads exactly `n` bytes, each wait bounded by kWaitMs.
bool ReadExactly(int fd, char* buf, size_t n) {
  size_t got = 0;
  while (got < n) {
    if (!WaitFd(fd, POLLIN, kWaitMs)) return false;
    ssize_t r = read(fd, buf + got, n - got);
    if (r <= 0) return false;
    got += static_cast<size_t>(r);
  }
  return true;
}

// Reads the Hello frame (prefix, then header_len + data_len bytes; a Hello is
// about 46 bytes, anything over 4 KiB is not one) and sends the prefix of a
// frame of kAnnouncedFrameBytes. True when both happened.
bool HelloThenPrefix(int fd, bool as_header) {
  char prefix[mr::kFramePrefixBytes];
  if (!ReadExactly(fd, prefix, sizeof prefix)) return false;
  auto hello_prefix = mr::DecodeFramePrefix(prefix, 4096);
  if (!hello_prefix.ok()) return false;
  std::vector<char> hello(uint64_t{hello_prefix->header_len} + hello_prefix->data_len);
  if (!ReadExactly(fd, hello.data(), hello.size())) return false;
  mr::EncodeFramePrefix({as_header ? kAnnouncedFrameBytes : 0, as_header ? 0 : kAnnouncedFrameBytes},
                        prefix);
  return write(fd, prefix, sizeof prefix) == static_cast<ssize_t>(sizeof prefix);
}

bool ParseArgs(int argc, char** argv, Options* o) {
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string k = argv[i], v = argv[i + 1];
    if (k == "--target") {
      const size_t colon = v.rfind(':');
      if (colon == std::string::npos) return false;
      o->host = v.substr(0, colon);
      o->port = std::atoi(v.c_str() + colon + 1);
    } else if (k == "--connections") {
      o->connections = std::atoi(v.c_str());
    } else if (k == "--hold-ms") {
      o->hold_ms = std::atoi(v.c_str());
    } else if (k == "--mode") {
      o->mode = v;
    } else if (k == "--watch-pid") {
      o->watch_pid = std::atoi(v.c_str());
    } else if (k == "--max-rss-mb") {
      o->max_rss_mb = std::atol(v.c_str());
    } else if (k == "--sources") {
      o->sources = std::atoi(v.c_str());
    } else if (k == "--reopen") {
      o->reopen = v == "1";
    } else {
      return false;
    }
  }
  return argc % 2 == 1 && o->port > 0 && o->port < 65536 && o->connections > 0 &&
         o->connections <= 100000 && o->hold_ms >= 0 && o->hold_ms <= 600000 &&
         (o->mode == "prefix" || o->mode == "idle") && o->sources >= 0 && o->sources <= 250;
}

void Hold(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

// Holds `fds` for o.hold_ms, reading what the server sends and opening again
// (idle, from the same source) each connection it closes. Returns how many
// were opened again.
int64_t HoldReopening(const Options& o, const sockaddr_in& addr, std::vector<int>& fds) {
  const auto end = Clock::now() + std::chrono::milliseconds(o.hold_ms);
  std::vector<pollfd> polled(fds.size());
  int64_t reopened = 0;
  char buf[4096];
  while (Clock::now() < end) {
    for (size_t i = 0; i < fds.size(); ++i) polled[i] = {fds[i], POLLIN, 0};
    if (poll(polled.data(), polled.size(), 100) <= 0) continue;
    for (size_t i = 0; i < fds.size(); ++i) {
      if (polled[i].revents == 0) continue;
      if (fds[i] >= 0 && read(fds[i], buf, sizeof buf) > 0) continue;  // a Hello: keep holding
      if (fds[i] >= 0) close(fds[i]);
      fds[i] = ConnectTo(addr, SourceOf(o.sources, static_cast<int>(i)));
      if (fds[i] >= 0) ++reopened;
    }
  }
  return reopened;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!ParseArgs(argc, argv, &o)) return Usage();
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(o.port));
  if (inet_pton(AF_INET, o.host.c_str(), &addr.sin_addr) != 1 ||
      (ntohl(addr.sin_addr.s_addr) >> 24) != 127) {
    std::fprintf(stderr, "fault_flood: target must be an address on 127.0.0.0/8, got '%s'\n",
                 o.host.c_str());
    return 2;
  }
  // Our own descriptors: as many as the hard limit allows.
  rlimit lim{};
  if (getrlimit(RLIMIT_NOFILE, &lim) == 0) {
    lim.rlim_cur = lim.rlim_max;
    setrlimit(RLIMIT_NOFILE, &lim);
  }

  std::vector<int> fds;
  int failed = 0, prefixes = 0;
  bool rss_stop = false;
  long rss_seen = 0;
  const auto open_deadline = Clock::now() + std::chrono::seconds(60);
  for (int i = 0; i < o.connections && Clock::now() < open_deadline; ++i) {
    if (o.watch_pid > 0 && o.max_rss_mb > 0 && i % 25 == 0) {
      rss_seen = RssMb(o.watch_pid);
      if (rss_seen > o.max_rss_mb) {
        rss_stop = true;
        break;
      }
    }
    const int fd = ConnectTo(addr, SourceOf(o.sources, i));
    if (fd < 0) {
      ++failed;
      continue;
    }
    fds.push_back(fd);
    if (o.mode == "prefix") {
      if (HelloThenPrefix(fd, i % 2 == 0)) {
        ++prefixes;
      } else {
        ++failed;
      }
    }
  }
  if (o.watch_pid > 0) rss_seen = RssMb(o.watch_pid);
  std::printf(
      "fault_flood: %s %s:%d: %zu of %d connections open, %d prefixes of 4 MiB frames sent, "
      "%d failed%s; daemon VmRSS %ld MiB; holding %d ms\n",
      o.mode.c_str(), o.host.c_str(), o.port, fds.size(), o.connections, prefixes, failed,
      rss_stop ? " (stopped: daemon RSS over the limit)" : "", rss_seen, o.hold_ms);
  std::fflush(stdout);
  const int64_t reopened = o.reopen ? HoldReopening(o, addr, fds) : (Hold(o.hold_ms), 0);
  for (int fd : fds) close(fd);
  if (o.reopen) std::printf("fault_flood: reopened %lld connections the server closed\n",
                            static_cast<long long>(reopened));
  return 0;
}

// mr-delayline: a delay line for the testbed's router (docs/testbed.md, "Round
// trips"). The kernel has no netem here, so latency is added in user space:
// netfilter rules (`-j NFQUEUE --queue-num Q --queue-bypass`, set by
// deploy/testbed.sh up) hand every packet forwarded from one datacenter to
// another to queue Q, one queue per ordered datacenter pair; this program
// holds each packet for that queue's one-way delay and then accepts it.
//
// Design. One netlink socket serves every queue. The kernel keeps the packets;
// we only learn their ids (NFQNL_COPY_META: no payload is copied). A queue's
// delay is constant, so release times grow with arrival: each queue is a FIFO
// of (release time, id), released from the front in order, one batch verdict
// (every id up to the last due one) per queue per wake-up. The loop sleeps in
// ppoll until the socket is readable or the earliest front is due.
//
// Limits. The kernel queue holds at most --maxlen packets (deploy/testbed.sh
// sizes it for 4 x rate x delay); beyond that the kernel drops (counted in
// /proc/net/netfilter/nfnetlink_queue). If this process dies, --queue-bypass
// lets packets pass undelayed (never a black hole); its held packets are
// dropped by the kernel. On SIGTERM/SIGINT it accepts what it holds and exits.
// Release precision is the scheduler's: a loaded machine adds its wake-up lag.
//
// Started (in the router's namespace) and stopped (by pid) by deploy/testbed.sh.
#include <arpa/inet.h>
#include <fcntl.h>
#include <linux/netfilter.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <libnetfilter_queue/libnetfilter_queue.h>

#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <deque>
#include <fstream>
#include <memory>
#include <algorithm>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace {

constexpr const char* kUsage =
    "usage: mr-delayline [--maxlen N] [--rcvbuf BYTES] [--pid-file FILE] QUEUE=DELAY...\n"
    "Holds every packet of netfilter queue QUEUE for DELAY, then accepts it, in order.\n"
    "  QUEUE=DELAY     queue number 0..65535 and its one-way delay: 20ms, 250us, 1.5s\n"
    "                  (0..10s; a number alone is milliseconds). Repeat per queue.\n"
    "  --maxlen N      packets the kernel may hold per queue (default 65536)\n"
    "  --rcvbuf BYTES  netlink socket receive buffer (default 16777216)\n"
    "  --pid-file FILE written once every queue is bound (the ready signal), removed at exit\n"
    "  --rt-priority N SCHED_FIFO priority 1..99 so wake-ups are on time on a busy machine\n"
    "                  (default 10; 0: stay SCHED_OTHER)\n"
    "Feed it with: iptables -A FORWARD ... -j NFQUEUE --queue-num QUEUE --queue-bypass\n"
    "Needs CAP_NET_ADMIN. Exits 2 on bad arguments, 1 when a queue cannot be bound.\n";

constexpr int64_t kMaxDelayNs = 10'000'000'000;

volatile sig_atomic_t g_stop = 0;
void OnSignal(int) { g_stop = 1; }

int64_t NowNs() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec * 1'000'000'000LL + ts.tv_nsec;
}

// One queue: its delay and the packets it holds, oldest first.
struct Line {
  uint16_t number = 0;
  int64_t delay_ns = 0;
  nfq_q_handle* handle = nullptr;
  struct Held {
    int64_t release_ns;
    uint32_t id;
  };
  std::deque<Held> held;
  uint64_t delayed = 0;  // packets released so far
};

struct Options {
  std::vector<Line> lines;
  uint32_t maxlen = 65536;
  int rcvbuf = 16 << 20;
  std::string pid_file;
  int rt_priority = 10;
};

// "20ms", "250us", "1.5s", "20" (ms) -> nanoseconds; nullopt when malformed.
std::optional<int64_t> ParseDelay(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || errno != 0 || !std::isfinite(v) || v < 0 || text[0] == '-') return std::nullopt;
  std::string unit(end);
  double scale = unit == "" || unit == "ms" ? 1e6 : unit == "us" ? 1e3 : unit == "s" ? 1e9 : -1;
  if (scale < 0) return std::nullopt;
  return static_cast<int64_t>(std::llround(v * scale));
}

std::optional<long long> ParseInt(const std::string& text, long long lo, long long hi) {
  char* end = nullptr;
  errno = 0;
  long long v = std::strtoll(text.c_str(), &end, 10);
  if (text.empty() || *end != '\0' || errno != 0 || v < lo || v > hi) return std::nullopt;
  return v;
}

// Fills `opt` from argv; on a bad argument prints one line and returns 2,
// after --help returns 0, else -1 (go on). Called by main.
int ParseArgs(int argc, char** argv, Options& opt) {
  auto bad = [](const std::string& what) {
    std::fprintf(stderr, "mr-delayline: %s (see --help)\n", what.c_str());
    return 2;
  };
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "-h" || arg == "--help") {
      std::fputs(kUsage, stdout);
      return 0;
    }
    bool has_value = arg == "--maxlen" || arg == "--rcvbuf" || arg == "--pid-file" || arg == "--rt-priority";
    if (has_value && i + 1 >= argc) return bad(arg + " needs a value");
    if (arg == "--maxlen" || arg == "--rcvbuf") {
      auto v = ParseInt(argv[++i], 1, arg == "--maxlen" ? 1 << 24 : 1 << 30);
      if (!v) return bad("bad " + arg + " '" + argv[i] + "'");
      if (arg == "--maxlen") {
        opt.maxlen = static_cast<uint32_t>(*v);
      } else {
        opt.rcvbuf = static_cast<int>(*v);
      }
    } else if (arg == "--rt-priority") {
      auto v = ParseInt(argv[++i], 0, 99);
      if (!v) return bad("bad --rt-priority '" + std::string(argv[i]) + "' (want 0..99)");
      opt.rt_priority = static_cast<int>(*v);
    } else if (arg == "--pid-file") {
      opt.pid_file = argv[++i];
    } else if (auto eq = arg.find('='); eq != std::string::npos && arg[0] != '-') {
      auto q = ParseInt(arg.substr(0, eq), 0, 65535);
      auto d = ParseDelay(arg.substr(eq + 1));
      if (!q) return bad("bad queue number in '" + arg + "' (want 0..65535)");
      if (!d || *d > kMaxDelayNs) return bad("bad delay in '" + arg + "' (want 0..10s: 20ms, 250us, 1.5s)");
      for (const Line& l : opt.lines) {
        if (l.number == *q) return bad("queue " + std::to_string(*q) + " given twice");
      }
      Line line;
      line.number = static_cast<uint16_t>(*q);
      line.delay_ns = *d;
      opt.lines.push_back(std::move(line));
    } else {
      return bad("unknown argument '" + arg + "'");
    }
  }
  if (opt.lines.empty()) return bad("no QUEUE=DELAY given");
  return -1;
}

// Called by libnetfilter_queue for each packet message: remember its id.
int OnPacket(nfq_q_handle*, nfgenmsg*, nfq_data* nfa, void* data) {
  auto* line = static_cast<Line*>(data);
  const nfqnl_msg_packet_hdr* ph = nfq_get_msg_packet_hdr(nfa);
  if (ph == nullptr) return 0;
  line->held.push_back({NowNs() + line->delay_ns, ntohl(ph->packet_id)});
  return 0;
}

// Accepts every packet of `line` due at `now` (all when now is INT64_MAX):
// one batch verdict covers every id up to the last due one, which are
// exactly the due ones since ids and release times grow together.
void ReleaseDue(Line& line, int64_t now) {
  uint32_t last = 0;
  size_t n = 0;
  while (!line.held.empty() && line.held.front().release_ns <= now) {
    last = line.held.front().id;
    line.held.pop_front();
    ++n;
  }
  if (n == 0) return;
  if (nfq_set_verdict_batch(line.handle, last, NF_ACCEPT) < 0) {
    std::fprintf(stderr, "mr-delayline: verdict on queue %u failed: %s\n", line.number, std::strerror(errno));
  }
  line.delayed += n;
}

// Binds every queue of `opt` on `h`, metadata only, maxlen set. Returns false
// after printing one line. Called once by main.
bool BindQueues(nfq_handle* h, Options& opt) {
  for (Line& line : opt.lines) {
    line.handle = nfq_create_queue(h, line.number, &OnPacket, &line);
    if (line.handle == nullptr) {
      std::fprintf(stderr, "mr-delayline: cannot bind queue %u: %s (another program holds it?)\n", line.number,
                   std::strerror(errno));
      return false;
    }
    if (nfq_set_mode(line.handle, NFQNL_COPY_META, 0) < 0 || nfq_set_queue_maxlen(line.handle, opt.maxlen) < 0) {
      std::fprintf(stderr, "mr-delayline: cannot configure queue %u: %s\n", line.number, std::strerror(errno));
      return false;
    }
  }
  int fd = nfq_fd(h);
  nfnl_rcvbufsiz(nfq_nfnlh(h), opt.rcvbuf);  // SO_RCVBUFFORCE as root
  int one = 1;
  setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof one);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return true;
}

// The loop: read what the socket has, release what is due, sleep until the
// next release or the next packet. Returns when a signal asks it to stop.
void Run(nfq_handle* h, Options& opt, const sigset_t& unblocked) {
  std::vector<char> buf(1 << 16);
  pollfd pfd{.fd = nfq_fd(h), .events = POLLIN, .revents = 0};
  while (!g_stop) {
    int64_t now = NowNs(), next = INT64_MAX;
    for (Line& line : opt.lines) {
      ReleaseDue(line, now);
      if (!line.held.empty()) next = std::min(next, line.held.front().release_ns);
    }
    timespec wait{}, *timeout = nullptr;
    if (next != INT64_MAX) {
      int64_t d = std::max<int64_t>(0, next - now);
      wait = {static_cast<time_t>(d / 1'000'000'000), static_cast<long>(d % 1'000'000'000)};
      timeout = &wait;
    }
    if (ppoll(&pfd, 1, timeout, &unblocked) <= 0) continue;  // timeout or signal
    for (;;) {
      ssize_t n = recv(pfd.fd, buf.data(), buf.size(), 0);
      if (n <= 0) break;  // EAGAIN: drained
      nfq_handle_packet(h, buf.data(), static_cast<int>(n));
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options opt;
  if (int rc = ParseArgs(argc, argv, opt); rc >= 0) return rc;

  // Signals are blocked except inside ppoll, so a TERM is never lost between
  // the check of g_stop and the sleep.
  sigset_t block, unblocked;
  sigemptyset(&block);
  sigaddset(&block, SIGTERM);
  sigaddset(&block, SIGINT);
  sigprocmask(SIG_BLOCK, &block, &unblocked);
  struct sigaction sa{};
  sa.sa_handler = OnSignal;
  sigaction(SIGTERM, &sa, nullptr);
  sigaction(SIGINT, &sa, nullptr);

  std::unique_ptr<nfq_handle, int (*)(nfq_handle*)> h(nfq_open(), &nfq_close);
  if (!h) {
    std::fprintf(stderr, "mr-delayline: cannot open nfnetlink_queue: %s (root? kernel nfnetlink_queue?)\n",
                 std::strerror(errno));
    return 1;
  }
  if (!BindQueues(h.get(), opt)) return 1;
  // A release is only as punctual as our wake-up: under SCHED_OTHER, at a load
  // of 2-3 on 2 cores, pings came back up to 24 ms late on a 40 ms round trip.
  if (opt.rt_priority > 0) {
    sched_param sp{};
    sp.sched_priority = opt.rt_priority;
    if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) {
      std::fprintf(stderr, "mr-delayline: warning: no SCHED_FIFO (%s); releases may be late under load\n",
                   std::strerror(errno));
    }
  }
  if (!opt.pid_file.empty()) std::ofstream(opt.pid_file) << getpid() << "\n";

  Run(h.get(), opt, unblocked);

  for (Line& line : opt.lines) {
    ReleaseDue(line, INT64_MAX);  // accept what is held rather than let the kernel drop it
    std::fprintf(stderr, "mr-delayline: queue %u: %llu packets delayed %.3f ms\n", line.number,
                 static_cast<unsigned long long>(line.delayed), line.delay_ns / 1e6);
    nfq_destroy_queue(line.handle);
  }
  if (!opt.pid_file.empty()) unlink(opt.pid_file.c_str());
  return 0;
}

// mr-delayline: the testbed's delay line (docs/testbed.md, "Round trips"). This
// kernel has no netem, so latency is added in user space: deploy/testbed.sh up
// puts rules in the router (`-j NFQUEUE --queue-num Q --queue-bypass`) that
// hand each packet forwarded between two datacenters to queue Q, one per
// ordered pair, and starts this program there (and ends it, by pid, on down).
// It holds each packet for its queue's one-way delay, then accepts it.
//
// Design. One netlink socket serves every queue; the kernel keeps the packets
// and we learn only their ids (NFQNL_COPY_META). A queue's delay is constant,
// so each queue is a FIFO of (release time, id) released from the front, one
// batch verdict (every id up to the last due one) per wake-up. The loop sleeps
// in ppoll, SCHED_FIFO so that it wakes on time on a busy machine.
//
// Limits. A full queue (--maxlen) makes the kernel drop (counted in
// /proc/net/netfilter/nfnetlink_queue). If this process dies, --queue-bypass
// lets packets pass undelayed, never a black hole (the ones it held are
// dropped); on SIGTERM it accepts what it holds. A packet of a stream may
// leave up to --gather-us / 2 early or late.
#include <arpa/inet.h>
#include <fcntl.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <linux/netfilter.h>
#include <linux/netlink.h>
#include <poll.h>
#include <sched.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <deque>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace {

constexpr const char* kUsage =
    "usage: mr-delayline [--maxlen N] [--pid-file FILE] [--gather-us N] QUEUE=DELAY...\n"
    "Holds every packet of netfilter queue QUEUE for DELAY, then accepts it, in order.\n"
    "  QUEUE=DELAY     queue number 0..65535 and its one-way delay: 20ms, 250us, 1.5s\n"
    "                  (0..10s; a number alone is milliseconds). Repeat per queue.\n"
    "  --maxlen N      packets the kernel may hold per queue (default 65536)\n"
    "  --pid-file FILE written once every queue is bound (the ready signal), removed at exit\n"
    "  --gather-us N   after a wake-up by a packet, wait up to N us for more before the\n"
    "                  next (fewer wake-ups; arrival times then err by up to N/2; default 200)\n"
    "Feed it with: iptables -A FORWARD ... -j NFQUEUE --queue-num QUEUE --queue-bypass\n"
    "Runs SCHED_FIFO (priority 10) when allowed. Needs CAP_NET_ADMIN.\n"
    "Exits 2 on bad arguments, 1 when a queue cannot be bound.\n";

constexpr int64_t kMaxDelayNs = 10'000'000'000;
constexpr int kRcvbuf = 16 << 20;  // netlink socket buffer: ~100k packet messages

volatile sig_atomic_t g_stop = 0;
int64_t g_arrival_ns = 0;  // when the packets being read arrived (set by Drain)
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
  std::string pid_file;
  int64_t gather_ns = 200'000;
};

// "20ms", "250us", "1.5s", "20" (ms) -> nanoseconds; nullopt when malformed.
std::optional<int64_t> ParseDelay(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(text.c_str(), &end);
  if (end == text.c_str() || errno != 0 || !std::isfinite(v) || v < 0 || text[0] == '-')
    return std::nullopt;
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
    if (arg == "-h" || arg == "--help") return std::fputs(kUsage, stdout), 0;
    if (arg == "--pid-file" || arg == "--maxlen" || arg == "--gather-us") {
      if (i + 1 >= argc) return bad(arg + " needs a value");
      std::string value = argv[++i];
      if (arg == "--pid-file") {
        opt.pid_file = value;
        continue;
      }
      long long hi = arg == "--maxlen" ? 1 << 24 : 10'000;
      auto v = ParseInt(value, arg == "--maxlen" ? 1 : 0, hi);
      if (!v) return bad("bad " + arg + " '" + value + "' (out of range or not a number)");
      if (arg == "--maxlen") opt.maxlen = static_cast<uint32_t>(*v);
      if (arg == "--gather-us") opt.gather_ns = *v * 1000;
    } else if (auto eq = arg.find('='); eq != std::string::npos && arg[0] != '-') {
      auto q = ParseInt(arg.substr(0, eq), 0, 65535);
      auto d = ParseDelay(arg.substr(eq + 1));
      if (!q) return bad("bad queue number in '" + arg + "' (want 0..65535)");
      if (!d || *d > kMaxDelayNs)
        return bad("bad delay in '" + arg + "' (want 0..10s: 20ms, 250us, 1.5s)");
      auto same = [&](const Line& l) { return l.number == *q; };
      if (std::any_of(opt.lines.begin(), opt.lines.end(), same))
        return bad("queue " + arg.substr(0, eq) + " given twice");
      opt.lines.emplace_back();
      opt.lines.back().number = static_cast<uint16_t>(*q);
      opt.lines.back().delay_ns = *d;
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
  if (ph != nullptr) line->held.push_back({g_arrival_ns + line->delay_ns, ntohl(ph->packet_id)});
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
    std::fprintf(stderr, "mr-delayline: verdict on queue %u failed: %s\n", line.number,
                 std::strerror(errno));
  }
  line.delayed += n;
}

// Binds every queue of `opt` on `h`, metadata only, maxlen set. Returns false
// after printing one line. Called once by main.
bool BindQueues(nfq_handle* h, Options& opt) {
  for (Line& line : opt.lines) {
    line.handle = nfq_create_queue(h, line.number, &OnPacket, &line);
    if (line.handle == nullptr) {
      std::fprintf(stderr, "mr-delayline: cannot bind queue %u: %s (another program holds it?)\n",
                   line.number, std::strerror(errno));
      return false;
    }
    if (nfq_set_mode(line.handle, NFQNL_COPY_META, 0) < 0 ||
        nfq_set_queue_maxlen(line.handle, opt.maxlen) < 0) {
      std::fprintf(stderr, "mr-delayline: cannot configure queue %u: %s\n", line.number,
                   std::strerror(errno));
      return false;
    }
  }
  int fd = nfq_fd(h), one = 1;
  nfnl_rcvbufsiz(nfq_nfnlh(h), kRcvbuf);  // SO_RCVBUFFORCE as root
  setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof one);
  fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  return true;
}

timespec Timespec(int64_t ns) {  // ns from now, 0 if past
  ns = std::max<int64_t>(0, ns);
  return {static_cast<time_t>(ns / 1'000'000'000), static_cast<long>(ns % 1'000'000'000)};
}

// Reads every message the socket holds, stamping its packets as arrived at
// `arrival_ns`. Called by Run.
void Drain(nfq_handle* h, std::vector<char>& buf, int64_t arrival_ns) {
  g_arrival_ns = arrival_ns;
  for (;;) {
    ssize_t n = recv(nfq_fd(h), buf.data(), buf.size(), 0);
    if (n <= 0) break;  // EAGAIN: drained
    nfq_handle_packet(h, buf.data(), static_cast<int>(n));
  }
}

// Releases what is due in every line; returns the earliest release still
// pending (INT64_MAX if none). Called by Run.
int64_t ReleaseAllDue(Options& opt, int64_t now) {
  int64_t next = INT64_MAX;
  for (Line& line : opt.lines) {
    ReleaseDue(line, now);
    if (!line.held.empty()) next = std::min(next, line.held.front().release_ns);
  }
  return next;
}

// The loop: release what is due, sleep until the next release or packet,
// read. Waking once per packet cost 38 % of a core at 100 Mbit/s (27 % so):
// a packet that wakes it lets more gather for up to --gather-us (never past a
// release), stamped with the middle of that wait, and a release also takes
// those due within half of it. Returns when a signal asks it to stop.
void Run(nfq_handle* h, Options& opt, const sigset_t& unblocked) {
  std::vector<char> buf(1 << 16);
  pollfd pfd{.fd = nfq_fd(h), .events = POLLIN, .revents = 0};
  while (!g_stop) {
    int64_t now = NowNs();
    int64_t next = ReleaseAllDue(opt, now + opt.gather_ns / 2);
    timespec wait = Timespec(next - now);
    if (ppoll(&pfd, 1, next == INT64_MAX ? nullptr : &wait, &unblocked) <= 0)
      continue;  // due, or a signal
    int64_t woke = NowNs();
    Drain(h, buf, woke);
    int64_t until = std::min(woke + opt.gather_ns, next);
    if (until <= woke) continue;
    wait = Timespec(until - woke);
    ppoll(nullptr, 0, &wait, &unblocked);
    Drain(h, buf, woke + (NowNs() - woke) / 2);
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
  struct sigaction sa {};
  sa.sa_handler = OnSignal;
  for (int sig : {SIGTERM, SIGINT}) {
    sigaddset(&block, sig);
    sigaction(sig, &sa, nullptr);
  }
  sigprocmask(SIG_BLOCK, &block, &unblocked);

  std::unique_ptr<nfq_handle, int (*)(nfq_handle*)> h(nfq_open(), &nfq_close);
  if (!h) return std::fprintf(stderr, "mr-delayline: no nfnetlink_queue: %s\n", strerror(errno)), 1;
  if (!BindQueues(h.get(), opt)) return 1;
  // A release is only as punctual as our wake-up: under SCHED_OTHER, at a load
  // of 2-3 on 2 cores, pings came back up to 24 ms late on a 40 ms round trip.
  sched_param sp{.sched_priority = 10};
  if (sched_setscheduler(0, SCHED_FIFO, &sp) != 0) {
    std::fprintf(stderr, "mr-delayline: warning: no SCHED_FIFO (%s)\n", std::strerror(errno));
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

// The master's status pages and the daemons' /metrics against a real local
// cluster (docs/status-page.md): a job's page has a row and a timeline bar
// per task, the DFS browser lists a file put earlier, /metrics passes
// promtool, headless Chromium renders the job page, and bad requests (no or
// a wrong secret, malformed, huge) get one clear line while the server keeps
// serving. Also the task timestamps of `mrctl job show --tasks [--csv]`.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <fstream>
#include <regex>
#include <thread>

#include "tests/integration/http_fixture.h"
#include "tests/integration/job_fixture.h"

namespace mr::testing {
namespace {

std::string UrlEncodeForTest(const std::string& s) {
  std::string out;
  char buf[4];
  for (unsigned char ch : s) {
    if (std::isalnum(ch) || ch == '.') {
      out += static_cast<char>(ch);
    } else {
      std::snprintf(buf, sizeof buf, "%%%02X", ch);
      out += buf;
    }
  }
  return out;
}

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

class StatusPageTest : public JobTest {
 protected:
  // A cluster with --http, a 300 KB text file in 64 KiB blocks at
  // /in/a<b>&c.txt (a name to escape), and a WordCount with 2 reducers.
  void StartAndRunJob(LocalCluster& c) {
    ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
    master_port_ = PortOf(TomlValue(c.config(), "http_address", 0));
    worker_port_ = PortOf(TomlValue(c.config(), "http_address", 1));
    ASSERT_GT(master_port_, 0);
    ASSERT_GT(worker_port_, 0);
    input_ = Generate("text", "300K");
    Put(c, input_, "/in/a<b>&c.txt");
    job_ = RunJob(c, "wordcount", "/in", "/out", 2, "");
    ASSERT_EQ(job_["state"], "succeeded") << job_.dump();
  }

  int master_port_ = 0, worker_port_ = 0;
  std::string input_;
  nlohmann::json job_;
};

// What a user sees: the job with its policy in /jobs; a row per task and a
// timeline bar per task on /job/ID; the file in the DFS browser, escaped.
TEST_F(StatusPageTest, PagesShowTheJobItsTasksAndTheDfs) {
  LocalCluster c(2, 2, "--http --block-size 65536");
  StartAndRunJob(c);
  const std::string id = std::to_string(job_["id"].get<int64_t>());
  const int tasks = job_["maps_total"].get<int>() + job_["reduces_total"].get<int>();
  ASSERT_GE(job_["maps_total"].get<int>(), 4);  // 300 KB in 64 KiB blocks

  Response jobs = Get(master_port_, "/jobs");
  ASSERT_EQ(jobs.status, 200);
  EXPECT_NE(jobs.body.find("<a href=\"/job/" + id + "\">" + id + "</a></td><td>wordcount</td><td>succeeded</td><td>fifo</td>"),
            std::string::npos) << jobs.body;

  Response page = Get(master_port_, "/job/" + id);
  ASSERT_EQ(page.status, 200);
  EXPECT_EQ(Count(page.body, "<tr class=\"task\">"), tasks) << page.body;
  EXPECT_EQ(Count(page.body, "<rect class=\"task\""), tasks);  // the timeline, inline
  // Each task's row names the worker that ran it (which workers the policy
  // chose is its business: the record says, the page must agree).
  ASSERT_FALSE(job_["tasks_per_worker"].empty()) << job_.dump();
  for (const auto& [worker, n] : job_["tasks_per_worker"].items())
    EXPECT_GE(Count(page.body, "<td>" + worker + "</td>"), n.get<int>()) << worker;
  EXPECT_EQ(Count(page.body, "<tr class=\"task\"><td>map</td>"), job_["maps_total"].get<int>());
  EXPECT_NE(page.body.find("<tr><th>policy</th><td>fifo"), std::string::npos);
  // The counters section: the job's sums, a row per task.
  const std::string lines = Shell("wc -l < " + Quote(input_)).out;
  EXPECT_NE(page.body.find("<tr><td>framework</td><td>MAP_INPUT_RECORDS</td><td class=\"n\">" +
                           lines.substr(0, lines.find('\n')) + "</td></tr>"),
            std::string::npos) << page.body;
  EXPECT_EQ(Count(page.body, "<tr class=\"task-counters\">"), tasks);
  Response svg = Get(master_port_, "/job/" + id + "/timeline.svg");
  ASSERT_EQ(svg.status, 200);
  EXPECT_EQ(svg.body.rfind("<svg", 0), 0u);
  EXPECT_EQ(Count(svg.body, "<rect class=\"task\""), tasks);

  // A link to each attempt's log, which the master fetches from its worker:
  // the first ask starts the fetch and answers a page that reloads itself.
  EXPECT_GE(Count(page.body, "/log?task=m"), job_["maps_total"].get<int>()) << page.body;
  Response log;
  for (int tries = 0; tries < 100; ++tries) {  // bounded: 10 s
    log = Get(master_port_, "/job/" + id + "/log?task=m0&attempt=0");
    if (log.body.find("Fetching the log") == std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(log.status, 200) << log.body;
  EXPECT_NE(log.body.find("] map 0 attempt 0 of job " + id + " (wordcount) on worker w"), std::string::npos) << log.body;
  EXPECT_NE(log.body.find("] map 0 attempt 0 succeeded after"), std::string::npos) << log.body;
  EXPECT_EQ(Get(master_port_, "/job/" + id + "/log?task=x9").status, 400);
  EXPECT_EQ(Get(master_port_, "/job/" + id + "/log?task=m999").status, 404);

  Response dfs = Get(master_port_, "/dfs?path=/in");
  ASSERT_EQ(dfs.status, 200);
  EXPECT_NE(dfs.body.find("a&lt;b&gt;&amp;c.txt"), std::string::npos) << dfs.body;
  EXPECT_EQ(dfs.body.find("a<b>&c.txt"), std::string::npos);  // never raw
  Response file = Get(master_port_, "/dfs?path=" + UrlEncodeForTest("/in/a<b>&c.txt"));
  ASSERT_EQ(file.status, 200);
  EXPECT_EQ(Count(file.body, "<tr><td class=\"n\">"), job_["maps_total"].get<int>());  // a row per block
  EXPECT_EQ(Get(master_port_, "/dfs?path=/no/such").status, 404);
  EXPECT_EQ(Get(master_port_, "/job/999999").status, 404);

  Response home = Get(master_port_, "/");
  ASSERT_EQ(home.status, 200);
  EXPECT_NE(home.body.find("Datacenter dc1"), std::string::npos);
  EXPECT_NE(home.body.find("Datacenter dc2"), std::string::npos);
  EXPECT_EQ(Count(home.body, "<td>live</td>"), 2);
}

// The records carry wall-clock start and end and phase times per task;
// `mrctl job show --tasks` prints one line per task and --csv the same as
// CSV. The map inputs sum to the file's size (stat, independently).
TEST_F(StatusPageTest, TaskTimestampsInRecordsAndMrctl) {
  LocalCluster c(2, 2, "--http --block-size 65536");
  StartAndRunJob(c);
  const std::string id = std::to_string(job_["id"].get<int64_t>());
  nlohmann::json show = c.MrctlJson("job show " + id + " --json");
  const int64_t submit = show["submit_ms"], end = show["end_ms"];
  int64_t input_sum = 0;
  for (const auto* kind : {"map_tasks", "reduce_tasks"}) {
    for (const auto& t : show[kind]) {
      EXPECT_GE(t["start_ms"].get<int64_t>(), submit) << t.dump();
      EXPECT_GE(t["end_ms"].get<int64_t>(), t["start_ms"].get<int64_t>()) << t.dump();
      EXPECT_LE(t["end_ms"].get<int64_t>(), end) << t.dump();
      if (std::string(kind) == "map_tasks") {
        input_sum += t["input_bytes"].get<int64_t>();
        for (const char* p : {"setup", "read", "map", "sort"}) EXPECT_TRUE(t["phase_ms"].contains(p)) << p << t.dump();
      } else {
        for (const char* p : {"fetch", "reduce", "write"}) EXPECT_TRUE(t["phase_ms"].contains(p)) << p << t.dump();
      }
    }
  }
  EXPECT_EQ(input_sum, static_cast<int64_t>(std::filesystem::file_size(input_)));

  const int tasks = job_["maps_total"].get<int>() + job_["reduces_total"].get<int>();
  CommandResult lines = c.Mrctl("job show " + id + " --tasks");
  ASSERT_EQ(lines.exit_code, 0) << lines.err;
  EXPECT_EQ(Count(lines.out, "\n  map "), job_["maps_total"].get<int>()) << lines.out;
  EXPECT_EQ(Count(lines.out, "\n  reduce "), job_["reduces_total"].get<int>()) << lines.out;
  CommandResult csv = c.Mrctl("job show " + id + " --tasks --csv");
  ASSERT_EQ(csv.exit_code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("job_id,kind,index,node,locality,in_bytes,out_bytes,start_ms,end_ms,run_ms,attempts,", 0), 0u);
  EXPECT_EQ(Count(csv.out, "\n" + id + ","), tasks) << csv.out;
  CommandResult list = c.Mrctl("job list --csv");
  ASSERT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("\n" + id + ",wordcount,succeeded,fifo,"), std::string::npos) << list.out;
  CommandResult history = c.Mrctl("history --csv");
  ASSERT_EQ(history.exit_code, 0) << history.err;
  EXPECT_NE(history.out.find("\nwordcount,"), std::string::npos) << history.out;
  EXPECT_NE(c.Mrctl("job show " + id + " --csv").exit_code, 0);  // --csv needs --tasks
}

// Both /metrics pass `promtool check metrics` and count what happened.
TEST_F(StatusPageTest, MetricsPassPromtool) {
  if (Shell("command -v promtool").exit_code != 0) {
    GTEST_SKIP() << "promtool is not installed (Debian package prometheus; deploy/install-deps.sh)";
  }
  LocalCluster c(2, 2, "--http --block-size 65536");
  StartAndRunJob(c);
  for (int port : {master_port_, worker_port_}) {
    Response m = Get(port, "/metrics");
    ASSERT_EQ(m.status, 200);
    const std::string file = work_ + "/metrics-" + std::to_string(port);
    std::ofstream(file) << m.body;
    CommandResult check = Shell("promtool check metrics < " + Quote(file));
    EXPECT_EQ(check.exit_code, 0) << check.out << check.err << m.body;
    EXPECT_NE(m.body.find("mr_rpc_requests_total{"), std::string::npos);
  }
  const std::string m = Get(master_port_, "/metrics").body;
  for (const char* name : {"mr_heartbeats_total ", "mr_scheduler_decision_seconds_bucket{le=",
                           "mr_task_bytes_total{", "mr_slots{kind=\"map\",use=\"total\"} 4",
                           "mr_dfs_under_replicated_blocks ", "mr_workers{state=\"live\"} 2",
                           "mr_map_tasks_total{", "outcome=\"OK\""}) {
    EXPECT_NE(m.find(name), std::string::npos) << name << "\n" << m;
  }
  EXPECT_EQ(m.find("mr_heartbeats_total 0\n"), std::string::npos);
  // The finished job's counters, summed.
  const std::string lines = Shell("wc -l < " + Quote(input_)).out;
  EXPECT_NE(m.find("mr_job_counts_total{group=\"framework\",name=\"MAP_INPUT_RECORDS\"} " +
                   lines.substr(0, lines.find('\n')) + "\n"),
            std::string::npos) << m;
  const std::string w = Get(worker_port_, "/metrics").body;
  EXPECT_NE(w.find("mr_worker_tasks_total{"), std::string::npos) << w;
  EXPECT_NE(w.find("mr_worker_task_bytes_total{"), std::string::npos) << w;
}

// Headless Chromium loads /job/ID; the DOM it renders has the task rows and
// the timeline's bars.
TEST_F(StatusPageTest, ChromiumRendersTheJobPage) {
  std::string chromium;
  for (const char* name : {"chromium", "chromium-browser"}) {
    if (Shell(std::string("command -v ") + name).exit_code == 0) chromium = name;
  }
  if (chromium.empty()) GTEST_SKIP() << "chromium is not installed (deploy/install-deps.sh)";
  LocalCluster c(1, 1, "--http --block-size 65536");
  StartAndRunJob(c);
  const std::string id = std::to_string(job_["id"].get<int64_t>());
  const int tasks = job_["maps_total"].get<int>() + job_["reduces_total"].get<int>();
  CommandResult dom = Shell("HOME=" + Quote(work_) + " timeout 60 " + chromium +
                            " --headless --no-sandbox --disable-gpu --user-data-dir=" + Quote(work_ + "/chromium") +
                            " --dump-dom http://127.0.0.1:" + std::to_string(master_port_) + "/job/" + id);
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  EXPECT_EQ(Count(dom.out, "<tr class=\"task\">"), tasks) << dom.out;
  EXPECT_NE(dom.out.find("<svg"), std::string::npos);
  EXPECT_EQ(Count(dom.out, "<rect class=\"task\""), tasks);
  EXPECT_NE(dom.out.find("<title>Job " + id + ": wordcount"), std::string::npos);
}

// Credentials, malformed and huge requests: one clear line each, the
// connection closed, and the server still answers afterwards.
TEST_F(StatusPageTest, BadRequestsGetOneLineAndTheServerKeepsServing) {
  LocalCluster c(1, 1, "--http --master-option 'http_require_secret = true'");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const int port = PortOf(TomlValue(c.config(), "http_address", 0));
  const int worker = PortOf(TomlValue(c.config(), "http_address", 1));
  const std::string secret = TomlValue(c.config(), "secret");
  ASSERT_FALSE(secret.empty());

  Response none = Get(port, "/");
  EXPECT_EQ(none.status, 401);
  EXPECT_EQ(none.body, "credentials required: send Authorization: Bearer <cluster secret>\n");
  Response wrong = Get(port, "/", secret + "x");
  EXPECT_EQ(wrong.status, 401);
  EXPECT_EQ(Count(wrong.body, "\n"), 1);
  EXPECT_EQ(Get(worker, "/metrics").status, 401);
  EXPECT_EQ(Get(worker, "/metrics", secret).status, 200);
  EXPECT_EQ(Get(port, "/", secret).status, 200);

  Response malformed = Parse(Exchange(port, "GARBAGE\r\n\r\n"));
  EXPECT_EQ(malformed.status, 400);
  EXPECT_EQ(Count(malformed.body, "\n"), 1);
  Response bad_target = Parse(Exchange(port, "GET /dfs?path=%zz HTTP/1.1\r\nAuthorization: Bearer " + secret + "\r\n\r\n"));
  EXPECT_EQ(bad_target.status, 400);
  const std::string huge = "GET / HTTP/1.1\r\nX-Filler: " + std::string(20000, 'a') + "\r\n\r\n";
  Response too_big = Parse(Exchange(port, huge));
  EXPECT_EQ(too_big.status, 431);
  EXPECT_EQ(Count(too_big.body, "\n"), 1);
  Response big_body = Parse(Exchange(port, "GET / HTTP/1.1\r\nContent-Length: 100000\r\nAuthorization: Bearer " +
                                                secret + "\r\n\r\n" + std::string(100000, 'b')));
  EXPECT_EQ(big_body.status, 413);
  // Idle connections (a slow or silent client) hold no one else up.
  std::vector<int> idle;
  for (int i = 0; i < 8; ++i) {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<uint16_t>(port));
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ASSERT_EQ(::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr), 0);
    ::send(fd, "GET / HT", 8, MSG_NOSIGNAL);  // half a request line, then silence
    idle.push_back(fd);
  }
  EXPECT_EQ(Get(port, "/", secret).status, 200);  // still serving
  for (int fd : idle) ::close(fd);
  EXPECT_EQ(Get(port, "/metrics", secret).status, 200);
  EXPECT_EQ(c.LiveWorkers(), 1);  // and the master's RPC side too
}

}  // namespace
}  // namespace mr::testing

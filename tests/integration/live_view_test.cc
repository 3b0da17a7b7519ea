// The live view of a job on a real local cluster (issue 27, item 3;
// docs/status-page.md): a job seconds into its run lists its running
// attempts in `mrctl job show` and on /job/ID; a failed job lists every
// failed attempt with its node and error; the job page's kill button is
// refused without the secret, cross-origin and without its token, and kills
// with them; `job list --json`, `--csv` and /jobs show the FP `job show` has.
#include <chrono>
#include <fstream>
#include <thread>

#include "tests/integration/http_fixture.h"
#include "tests/integration/job_fixture.h"

namespace mr::testing {
namespace {

using nlohmann::json;

int Count(const std::string& text, const std::string& what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

// A text file of `lines` lines of 63 characters and a newline.
std::string Lines(const std::string& path, int lines) {
  std::ofstream out(path);
  for (int i = 0; i < lines; ++i) out << std::string(50, 'a' + i % 26) << " line " << std::to_string(1000000 + i) << "\n";
  return path;
}

class LiveViewTest : public JobTest {
 protected:
  // A cluster whose status server wants the secret on loopback too, as
  // every server off loopback does.
  void Start(LocalCluster& c) {
    ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
    port_ = PortOf(TomlValue(c.config(), "http_address", 0));
    secret_ = TomlValue(c.config(), "secret");
    ASSERT_GT(port_, 0);
    ASSERT_FALSE(secret_.empty());
  }
  std::string Auth() const { return "Authorization: Bearer " + secret_ + "\r\n"; }

  int port_ = 0;
  std::string secret_;
};

// A streaming job whose mapper sleeps: a few seconds in, `job show` and the
// page list its running attempts (before: an empty table). Then the kill
// button: refused without the secret, from another origin, and without the
// page's token; accepted with all three, and the job ends killed with its
// stopped attempts listed.
TEST_F(LiveViewTest, RunningAttemptsAndTheKillButton) {
  LocalCluster c(2, 1, "--block-size 65536 --heartbeat-ms 100 --master-option 'http_require_secret = true'");
  ASSERT_NO_FATAL_FAILURE(Start(c));
  Put(c, Lines(work_ + "/in.txt", 4096), "/in/slow.txt");  // 4 blocks: 4 maps
  CommandResult run = c.Mrctl("job run streaming --mapper 'sh -c \"sleep 60; cat\"' --reducer cat "
                              "-i /in/slow.txt -o /out/slow -r 1 --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  const std::string id = std::to_string(json::parse(run.out)["id"].get<int64_t>());
  json show;
  for (int i = 0; i < 300; ++i) {  // up to 30 s on a loaded machine; ~1 s usually
    show = c.MrctlJson("job show " + id + " --json");
    if (show["running_attempts"].size() >= 2) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  ASSERT_EQ(show["state"], "running") << show.dump();
  ASSERT_GE(show["running_attempts"].size(), 2u) << show.dump();  // two workers, a map slot each at least
  for (const json& a : show["running_attempts"]) {
    EXPECT_EQ(a["state"], "running");
    EXPECT_EQ(a["kind"], "map");
    EXPECT_TRUE(a["node"] == "w1" || a["node"] == "w2") << a.dump();
    EXPECT_GE(a["start_ms"].get<int64_t>(), show["submit_ms"].get<int64_t>());
    EXPECT_GE(a["progress"].get<double>(), 0.0);
    EXPECT_LE(a["progress"].get<double>(), 1.0);
  }
  CommandResult text = c.Mrctl("job show " + id);
  EXPECT_NE(text.out.find("  running attempts ("), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("attempt 0 "), std::string::npos) << text.out;

  Response page = Get(port_, "/job/" + id, secret_);
  ASSERT_EQ(page.status, 200);
  EXPECT_NE(page.body.find("<h2>Running attempts ("), std::string::npos) << page.body;
  EXPECT_GE(Count(page.body, "<tr class=\"attempt\"><td>map</td>"), 2) << page.body;
  EXPECT_NE(page.body.find("<meta http-equiv=\"refresh\""), std::string::npos);
  const std::string marker = "name=\"token\" value=\"";
  const size_t at = page.body.find(marker);
  ASSERT_NE(at, std::string::npos) << page.body;
  const std::string token = page.body.substr(at + marker.size(), page.body.find('"', at + marker.size()) - at - marker.size());
  ASSERT_EQ(token.size(), 32u);
  EXPECT_NE(Get(port_, "/jobs", secret_).body.find("<meta http-equiv=\"refresh\""), std::string::npos);
  EXPECT_NE(Get(port_, "/", secret_).body.find("<meta http-equiv=\"refresh\""), std::string::npos);

  const std::string kill = "/job/" + id + "/kill";
  const std::string same_origin = "Origin: http://127.0.0.1:" + std::to_string(port_) + "\r\n";
  Response no_secret = Post(port_, kill, "token=" + token, same_origin);
  EXPECT_EQ(no_secret.status, 401) << no_secret.body;
  Response other_origin = Post(port_, kill, "token=" + token, Auth() + "Origin: http://evil.example\r\n");
  EXPECT_EQ(other_origin.status, 403);
  EXPECT_EQ(other_origin.body, "cross-origin request refused (Origin http://evil.example)\n");
  Response cross_site = Post(port_, kill, "token=" + token, Auth() + "Sec-Fetch-Site: cross-site\r\n");
  EXPECT_EQ(cross_site.status, 403) << cross_site.body;
  Response no_token = Post(port_, kill, "", Auth() + same_origin);
  EXPECT_EQ(no_token.status, 403);
  EXPECT_EQ(no_token.body, "missing or wrong token: use the kill button of the job's page\n");
  Response bad_token = Post(port_, kill, "token=" + std::string(32, '0'), Auth() + same_origin);
  EXPECT_EQ(bad_token.status, 403);
  EXPECT_EQ(c.MrctlJson("job show " + id + " --json")["state"], "running") << "no refusal killed it";

  Response killed = Post(port_, kill, "token=" + token, Auth() + same_origin + "Sec-Fetch-Site: same-origin\r\n");
  EXPECT_EQ(killed.status, 303) << killed.body;
  show = c.MrctlJson("job show " + id + " --json");
  EXPECT_EQ(show["state"], "killed");
  EXPECT_TRUE(show["running_attempts"].empty());
  ASSERT_GE(show["ended_attempts"].size(), 2u) << show.dump();
  for (const json& a : show["ended_attempts"]) {
    EXPECT_EQ(a["state"], "killed");
    EXPECT_EQ(a["error"], "the job was killed by request");
  }
  EXPECT_EQ(Post(port_, kill, "token=" + token, Auth() + same_origin).status, 409) << "already killed";
}

// A job whose mapper always fails: its record lists every failed attempt
// with its node and error (before: the job's last error only). A WordCount
// next to it: list (JSON, CSV, /jobs) and show give the same FP, not 0.
TEST_F(LiveViewTest, FailedAttemptsAndTheFpOfLists) {
  LocalCluster c(2, 1, "--block-size 65536 --heartbeat-ms 100");
  ASSERT_NO_FATAL_FAILURE(Start(c));
  Put(c, Lines(work_ + "/small.txt", 100), "/in/small.txt");  // one block, one map
  CommandResult failed = c.Mrctl("job run streaming --mapper 'sh -c \"echo doomed >&2; exit 3\"' "
                                 "-i /in/small.txt -o /out/failed -r 0 --wait --json");
  EXPECT_EQ(failed.exit_code, 1) << failed.err;
  const json f = json::parse(failed.out);
  ASSERT_EQ(f["state"], "failed") << f.dump();
  ASSERT_EQ(f["ended_attempts"].size(), 4u) << f.dump();  // jobs.max_attempts
  for (size_t i = 0; i < 4; ++i) {
    const json& a = f["ended_attempts"][i];
    EXPECT_EQ(a["state"], "failed");
    EXPECT_EQ(a["attempt"], static_cast<int>(i));
    EXPECT_TRUE(a["node"] == "w1" || a["node"] == "w2") << a.dump();
    EXPECT_NE(a["error"].get<std::string>().find("exited with status 3; stderr: doomed"), std::string::npos) << a.dump();
  }
  const std::string failed_id = std::to_string(f["id"].get<int64_t>());
  CommandResult text = c.Mrctl("job show " + failed_id);
  EXPECT_EQ(Count(text.out, " failed  "), 4) << text.out;
  Response page = Get(port_, "/job/" + failed_id);
  EXPECT_NE(page.body.find("<h2>Failed and killed attempts (4)</h2>"), std::string::npos) << page.body;
  EXPECT_EQ(page.body.find("<form"), std::string::npos) << "no kill button for an ended job";

  const json wc = RunJob(c, "wordcount", "/in/small.txt", "/out/wc", 1, "");
  ASSERT_EQ(wc["state"], "succeeded") << wc.dump();
  const std::string id = std::to_string(wc["id"].get<int64_t>());
  const double fp = wc["fp_raw"].get<double>();
  ASSERT_GT(fp, 0.0);
  json listed;
  for (const json& j : c.MrctlJson("job list --json")) {
    if (j["id"] == wc["id"]) listed = j;
  }
  EXPECT_DOUBLE_EQ(listed["fp_raw"].get<double>(), fp) << listed.dump();
  EXPECT_DOUBLE_EQ(listed["fp_wire"].get<double>(), wc["fp_wire"].get<double>());
  char csv_fp[64];
  std::snprintf(csv_fp, sizeof csv_fp, ",%.4f,%.4f,", fp, wc["fp_wire"].get<double>());
  CommandResult csv = c.Mrctl("job list --csv");
  EXPECT_NE(csv.out.find(csv_fp), std::string::npos) << csv_fp << "\n" << csv.out;
  char page_fp[64];
  std::snprintf(page_fp, sizeof page_fp, "<td class=\"n\">%.3f</td>", fp);
  EXPECT_NE(Get(port_, "/jobs").body.find(page_fp), std::string::npos) << page_fp;
}

}  // namespace
}  // namespace mr::testing

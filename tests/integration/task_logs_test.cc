// Task logs and the streaming task environment on a local cluster
// (docs/logs-and-counters.md, docs/user-jobs.md):
//   - a mapper's stderr (2 MiB of it, progress lines and Hadoop's reporter
//     lines included) is kept on its worker, head and tail within the cap,
//     with the framework's lines, and `mrctl job logs` fetches it; a worker
//     that is gone gives one line and a non-zero exit;
//   - `--follow` prints a running attempt's log until it ends;
//   - each attempt runs in a directory of its own, with the shipped files
//     linked in and Hadoop's variables and the job's --cmdenv set; the
//     directory goes when the attempt ends.
#include <sys/stat.h>

#include <map>
#include <thread>

#include "tests/integration/job_fixture.h"

namespace mr::testing {
namespace {

using nlohmann::json;

class TaskLogsTest : public JobTest {
 protected:
  // `mrctl job run streaming ... --wait --json`: the record.
  static json RunStreaming(const LocalCluster& c, const std::string& flags, const std::string& output,
                           int reducers) {
    CommandResult r = c.Mrctl("job run streaming " + flags + " -i /in/text.txt -o " + Quote(output) +
                              " -r " + std::to_string(reducers) + " --wait --json");
    auto j = json::parse(r.out, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) return {{"state", "mrctl failed: " + r.err}};
    return j;
  }
  static int Lines(const std::string& s) { return static_cast<int>(std::count(s.begin(), s.end(), '\n')); }
};

// Fails on a runtime without task logs: the stderr of a successful mapper
// went nowhere (and `job logs` did not exist).
TEST_F(TaskLogsTest, AMappersStderrIsKeptHeadAndTailWithTheFrameworksLines) {
  LocalCluster c(2, 1, "--block-size 1048576 --replication 2 --heartbeat-ms 100");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  Put(c, Generate("text", "200K", 3), "/in/text.txt");
  // 2 MiB of filler (74,898 whole lines of 28 bytes) between a first and a
  // last line, all on stderr.
  const std::string mapper =
      "echo mapper-started >&2; echo reporter:status:halfway >&2; "
      "yes filler-filler-filler-filler | head -n 74898 >&2; cat; echo mapper-ended >&2";
  json job = RunStreaming(c, "--mapper " + Quote(mapper), "/out/logs", 1);
  ASSERT_EQ(job["state"], "succeeded") << job.dump(2);
  const std::string id = std::to_string(job["id"].get<int64_t>());

  CommandResult logs = c.Mrctl("job logs " + id + " m0");
  ASSERT_EQ(logs.exit_code, 0) << logs.err;
  const std::string& out = logs.out;
  EXPECT_NE(out.find("==> map 0 attempt 0 on w"), std::string::npos) << out.substr(0, 300);
  EXPECT_NE(out.find("] map 0 attempt 0 of job " + id + " (streaming) on worker w"), std::string::npos);
  EXPECT_NE(out.find("mapper-started\nreporter:status:halfway\nfiller"), std::string::npos);
  EXPECT_NE(out.find("bytes left out here: a log keeps its first and last 512 KiB"), std::string::npos);
  EXPECT_NE(out.find("filler-filler\nmapper-ended\n"), std::string::npos)
      << out.substr(out.size() > 600 ? out.size() - 600 : 0);
  EXPECT_NE(out.find("] map 0 attempt 0 succeeded after"), std::string::npos);
  EXPECT_LT(out.size(), (1u << 20) + 4096u);   // within the 1024 KiB cap
  EXPECT_GT(out.size(), (1u << 20) - 4096u);   // and the cap's worth of it

  // Every attempt of the job: the reduce's too, by the framework's lines.
  CommandResult all = c.Mrctl("job logs " + id);
  ASSERT_EQ(all.exit_code, 0) << all.err;
  EXPECT_NE(all.out.find("==> reduce 0 attempt 0 on w"), std::string::npos);
  EXPECT_NE(all.out.find("] reduce 0 attempt 0 succeeded after"), std::string::npos);
  EXPECT_NE(c.Mrctl("job logs " + id + " x1").err.find("'x1' is not a task"), std::string::npos);

  // The worker that ran the map goes: one line saying so, exit 1.
  const std::string header = out.substr(0, out.find('\n'));
  const std::string worker = header.substr(header.find(" on ") + 4, header.find(" <==") - header.find(" on ") - 4);
  ASSERT_EQ(c.Script("stop " + worker).exit_code, 0);
  CommandResult gone = c.Mrctl("job logs " + id + " m0");
  EXPECT_EQ(gone.exit_code, 1);
  EXPECT_NE(gone.err.find("worker " + worker + ", which ran map 0 attempt 0, "), std::string::npos) << gone.err;
  EXPECT_NE(gone.err.find("its logs cannot be read"), std::string::npos) << gone.err;
  EXPECT_EQ(Lines(gone.err), 1) << gone.err;
}

// --follow prints a running attempt's log as it grows and returns when the
// attempt ends.
TEST_F(TaskLogsTest, FollowPrintsARunningAttemptUntilItEnds) {
  LocalCluster c(1, 1, "--heartbeat-ms 100");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  Put(c, Generate("text", "20K", 3), "/in/text.txt");
  const std::string mapper = "cat; for i in 1 2 3 4 5 6; do echo tick $i >&2; sleep 0.3; done";
  CommandResult submitted = c.Mrctl("job run streaming --mapper " + Quote(mapper) +
                                    " -i /in/text.txt -o /out/follow -r 0 --json");
  ASSERT_EQ(submitted.exit_code, 0) << submitted.err;
  const std::string id = std::to_string(json::parse(submitted.out)["id"].get<int64_t>());
  CommandResult follow;
  for (int tries = 0; tries < 100; ++tries) {  // until the master launched the map (bounded: 10 s)
    follow = c.Mrctl("job logs " + id + " m0 --follow");
    if (follow.err.find("never ran") == std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  EXPECT_EQ(follow.exit_code, 0) << follow.err;
  EXPECT_NE(follow.out.find("tick 1\ntick 2\ntick 3\ntick 4\ntick 5\ntick 6\n"), std::string::npos) << follow.out;
  EXPECT_NE(follow.out.find("] map 0 attempt 0 succeeded after"), std::string::npos) << follow.out;
}

// Fails on the old runtime: commands ran in the worker's own directory,
// without Hadoop's variables, and --cmdenv did not exist.
TEST_F(TaskLogsTest, EachAttemptRunsInItsOwnDirectoryWithHadoopsVariables) {
  LocalCluster c(2, 1, "--block-size 262144 --replication 1 --heartbeat-ms 100");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string text = Generate("text", "400K", 5);  // two splits
  Put(c, text, "/in/text.txt");
  const std::string shipped = work_ + "/lookup.txt";
  std::ofstream(shipped) << "shipped\n";
  const std::string mapper =
      "cat >/dev/null; printf 'cwd\\t%s\\n' \"$(pwd)\"; printf 'shipped\\t%s\\n' \"$(cat lookup.txt)\"; "
      "env | grep -E '^(mapreduce_|GREETING=)' | sed 's/=/\\t/'";
  json job = RunStreaming(c, "--mapper " + Quote(mapper) + " --file " + Quote(shipped) +
                                 " --cmdenv GREETING=hello --cmdenv 'SPACED=a b'", "/out/env", 0);
  ASSERT_EQ(job["state"], "succeeded") << job.dump(2);
  const int64_t id = job["id"];
  char padded[16];
  std::snprintf(padded, sizeof padded, "%04lld", static_cast<long long>(id));
  // Each map's output: one part file, key TAB value lines.
  std::vector<std::string> cwds;
  for (int m = 0; m < 2; ++m) {
    char part[32];
    std::snprintf(part, sizeof part, "/out/env/part-m-%05d", m);
    std::map<std::string, std::string> kv;
    std::istringstream lines(Cat(c, part));
    for (std::string line; std::getline(lines, line);) kv[line.substr(0, line.find('\t'))] = line.substr(line.find('\t') + 1);
    const std::string task = std::string("task_local_") + padded + "_m_00000" + std::to_string(m);
    EXPECT_EQ(kv["mapreduce_job_id"], std::string("job_local_") + padded);
    EXPECT_EQ(kv["mapreduce_task_id"], task);
    EXPECT_EQ(kv["mapreduce_task_attempt_id"], "attempt" + task.substr(4) + "_0");
    EXPECT_EQ(kv["mapreduce_task_partition"], std::to_string(m));
    EXPECT_EQ(kv["mapreduce_task_ismap"], "true");
    EXPECT_EQ(kv["mapreduce_map_input_file"], "/in/text.txt");
    EXPECT_EQ(kv["mapreduce_map_input_start"], std::to_string(m * 262144));
    const auto size = static_cast<int64_t>(std::filesystem::file_size(text));
    EXPECT_EQ(kv["mapreduce_map_input_length"], std::to_string(m == 0 ? 262144 : size - 262144));
    EXPECT_EQ(kv["GREETING"], "hello");
    EXPECT_EQ(kv["shipped"], "shipped");  // linked into the attempt's directory
    // Its own directory under the worker's data directory, gone since.
    const std::string suffix = "/tasks/job-" + std::to_string(id) + "/m-" + std::to_string(m) + "-0/work";
    EXPECT_TRUE(kv["cwd"].starts_with(c.dir() + "/data/w")) << kv["cwd"];
    EXPECT_TRUE(kv["cwd"].ends_with(suffix)) << kv["cwd"];
    struct stat st {};
    EXPECT_NE(::stat(kv["cwd"].c_str(), &st), 0) << kv["cwd"] << " is still there";
    cwds.push_back(kv["cwd"]);
  }
  EXPECT_NE(cwds[0], cwds[1]);
  // A name that is no variable name is refused at submission.
  CommandResult bad = c.Mrctl("job run streaming --mapper cat --cmdenv 1X=2 -i /in/text.txt -o /out/bad");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_NE(bad.err.find("--cmdenv wants NAME=VALUE"), std::string::npos) << bad.err;
}

}  // namespace
}  // namespace mr::testing

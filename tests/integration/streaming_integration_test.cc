// Streaming jobs on a local cluster of real processes (docs/user-jobs.md):
// the example WordCounts shipped with --file, compared byte for byte with
// the built-in wordcount on the same cluster and with mr-local; their code
// hash in the FP table; the shipped files gone when the job ends; and bad
// commands (exit 1 with a stderr, a crash, a loop past the time limit):
// the job fails with one line naming the reason and the stderr tail, and the
// same workers then run a good job.
#include "tests/integration/job_fixture.h"

namespace mr::testing {
namespace {

using nlohmann::json;

class StreamingIntegrationTest : public JobTest {
 protected:
  static std::string Example(const std::string& name) { return SourceDir() + "/examples/streaming/" + name; }

  // `mrctl job run streaming ... --wait --json`: the record, or {"state": "mrctl failed: ..."}.
  static json RunStreaming(const LocalCluster& c, const std::string& flags, const std::string& input,
                           const std::string& output, int reducers) {
    CommandResult r = c.Mrctl("job run streaming " + flags + " -i " + Quote(input) + " -o " +
                              Quote(output) + " -r " + std::to_string(reducers) + " --wait --json");
    auto j = json::parse(r.out, nullptr, /*allow_exceptions=*/false);
    if (!j.is_object()) return {{"state", "mrctl failed: " + r.err}};
    j["stderr"] = r.err;
    return j;
  }
  std::string PythonFlags() const {
    return "--mapper '/usr/bin/python3 wc_mapper.py' --reducer '/usr/bin/python3 wc_reducer.py' --file " +
           Quote(Example("wc_mapper.py")) + " --file " + Quote(Example("wc_reducer.py"));
  }
};

TEST_F(StreamingIntegrationTest, WordCountMatchesTheBuiltInOne) {
  LocalCluster c(3, 2, "--block-size 262144 --replication 2 --heartbeat-ms 100");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string text = Generate("text", "1500K", 5);
  Put(c, text, "/in/text.txt");
  json builtin = RunJob(c, "wordcount", "/in/text.txt", "/out/builtin", 3, "");
  ASSERT_EQ(builtin["state"], "succeeded") << builtin.dump(2);
  json py = RunStreaming(c, PythonFlags(), "/in/text.txt", "/out/python", 3);
  ASSERT_EQ(py["state"], "succeeded") << py.dump(2);
  const std::string awk_flags = "--mapper 'LC_ALL=C awk -f wc_mapper.awk' --reducer 'LC_ALL=C awk -f "
                                "wc_reducer.awk' --file " + Quote(Example("wc_mapper.awk")) +
                                " --file " + Quote(Example("wc_reducer.awk"));
  json awk = RunStreaming(c, awk_flags, "/in/text.txt", "/out/awk", 3);
  ASSERT_EQ(awk["state"], "succeeded") << awk.dump(2);
  const std::string expected = Cat(c, "/out/builtin");
  ASSERT_GT(expected.size(), 10000u);
  EXPECT_TRUE(Cat(c, "/out/python") == expected);
  EXPECT_TRUE(Cat(c, "/out/awk") == expected);
  EXPECT_TRUE(Oracle("wordcount", text, 3, "", 262144) == expected);

  // Its own FP row: the code hash of the commands and files, not wordcount's.
  EXPECT_NE(py["code_hash"], builtin["code_hash"]);
  EXPECT_NE(py["code_hash"], awk["code_hash"]);
  bool found = false;
  for (const json& row : c.MrctlJson("history --json")) found = found || row["code_hash"] == py["code_hash"];
  EXPECT_TRUE(found);
  // The shipped files went with the job's directory; nothing is left staged.
  EXPECT_NE(c.Mrctl("dfs ls /.mr/jobs/" + std::to_string(py["id"].get<int64_t>())).exit_code, 0);
  EXPECT_EQ(c.MrctlJson("dfs ls --json /.mr/staging").size(), 0u);
}

TEST_F(StreamingIntegrationTest, BadCommandsFailTheJobNotTheWorkers) {
  LocalCluster c(2, 1, "--block-size 262144 --replication 1 --heartbeat-ms 100");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  Put(c, Generate("text", "600K", 9), "/in/text.txt");
  struct Case {
    std::string flags, reason;
  };
  const std::vector<Case> cases = {
      {"--mapper 'cat >/dev/null; echo \"Traceback: boom\" >&2; exit 1'",
       "exited with status 1; stderr: Traceback: boom"},
      {"--mapper ./missing.py", "exited with status 127 (command not found)"},
      {"--mapper 'kill -SEGV $$'", "was killed by signal 11 (Segmentation fault)"},
      {"--mapper 'sleep 60' -p timeout_ms=500", "ran longer than the task time limit (500 ms"},
  };
  int n = 0;
  for (const Case& k : cases) {
    SCOPED_TRACE(k.flags);
    json r = RunStreaming(c, k.flags, "/in/text.txt", "/out/bad" + std::to_string(n++), 1);
    ASSERT_EQ(r["state"], "failed") << r.dump(2);
    const std::string error = r["error"];
    EXPECT_NE(error.find(k.reason), std::string::npos) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
    EXPECT_NE(r["stderr"].get<std::string>().find(k.reason), std::string::npos);
  }
  // The same workers still serve: a good streaming job succeeds.
  EXPECT_EQ(c.LiveWorkers(), 2);
  json good = RunStreaming(c, PythonFlags(), "/in/text.txt", "/out/good", 2);
  EXPECT_EQ(good["state"], "succeeded") << good.dump(2);
  // And no command of the bad jobs is left running.
  EXPECT_EQ(c.CountProcesses("sleep 60"), 0);
}

TEST_F(StreamingIntegrationTest, BadSubmissionsAreRefused) {
  LocalCluster c(1, 1, "--heartbeat-ms 100");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  Put(c, Generate("text", "10K", 1), "/in/t.txt");
  CommandResult r = c.Mrctl("job run wordcount --mapper cat -i /in/t.txt -o /o");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("are for the 'streaming' job"), std::string::npos) << r.err;
  r = c.Mrctl("job run streaming --mapper cat --file /no/such/file -i /in/t.txt -o /o");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("--file '/no/such/file' is not a regular file"), std::string::npos) << r.err;
  r = c.Mrctl("job run streaming -i /in/t.txt -o /o");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("'mapper' is required"), std::string::npos) << r.err;
}

}  // namespace
}  // namespace mr::testing

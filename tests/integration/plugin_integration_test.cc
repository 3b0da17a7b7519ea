// Plug-in jobs (jobs/plugin.h) on a local cluster: the example WordCount
// .so (examples/plugin-wordcount, built against the build tree's SDK
// target) against the built-in wordcount and mr-local, its code hash the
// .so's digest, listed under its own name; a parameter typo refused at
// submission; and four bad plug-ins (tests/plugins/bad_plugins.cc): no
// entry point and another API version refused at submission, a segfault
// and an endless loop failing their jobs with one line naming the cause;
// the workers keep serving (their tasks ran in mr-task children) and run
// the good plug-in after.
#include "tests/integration/job_fixture.h"

namespace mr::testing {
namespace {

using nlohmann::json;

class PluginIntegrationTest : public JobTest {
 protected:
  static std::string So(const std::string& name) { return BuildDir() + "/tests/plugins/lib" + name + ".so"; }
};

TEST_F(PluginIntegrationTest, WordCountPluginMatchesTheBuiltInOne) {
  LocalCluster c(3, 2, "--block-size 262144 --replication 2 --heartbeat-ms 100");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string text = Generate("text", "1500K", 11);
  Put(c, text, "/in/text.txt");
  json builtin = RunJob(c, "wordcount", "/in/text.txt", "/out/builtin", 3, "");
  ASSERT_EQ(builtin["state"], "succeeded") << builtin.dump(2);
  json plugin = RunJob(c, So("plugin_wordcount"), "/in/text.txt", "/out/plugin", 3, "");
  ASSERT_EQ(plugin["state"], "succeeded") << plugin.dump(2);
  const std::string expected = Cat(c, "/out/builtin");
  ASSERT_GT(expected.size(), 10000u);
  EXPECT_TRUE(Cat(c, "/out/plugin") == expected);
  // mr-local runs the same .so in its own process: the same bytes.
  const std::string out = work_ + "/local-out";
  CommandResult r = Shell(Quote(BuildDir() + "/jobs/mr-local") + " " + Quote(So("plugin_wordcount")) +
                          " --input " + Quote(text) + " --output " + Quote(out) +
                          " --reducers 3 --split-bytes 262144 && cat " + Quote(out) + "/part-*");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.out == expected);
  // JoSS Fig. 4's code hash of a plug-in: its .so's SHA-256.
  EXPECT_EQ(plugin["code_hash"], Sha256OfFile(So("plugin_wordcount")).substr(0, 16));
  // Listed under its own name (its JobInfo's), not "plugin".
  EXPECT_EQ(plugin["job"], "wordcount-plugin");
  bool listed = false;
  for (const json& j : c.MrctlJson("job list --json")) listed = listed || (j["id"] == plugin["id"] && j["job"] == "wordcount-plugin");
  EXPECT_TRUE(listed);
}

// A plug-in's parameters are checked at submission, by a child process that
// loads the .so (mr-task --describe): a typo fails `job run` with one line,
// and no job (no attempt) exists.
TEST_F(PluginIntegrationTest, AnUnknownParameterFailsTheSubmission) {
  LocalCluster c(1, 1, "--heartbeat-ms 100");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  Put(c, Generate("text", "10K", 4), "/in/text.txt");
  CommandResult r = c.Mrctl("job run " + Quote(So("plugin_wordcount")) + " -i /in/text.txt -o /out/typo -p tokenz=1");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_EQ(r.err.rfind("mrctl: job 'wordcount-plugin': unknown parameter 'tokenz'", 0), 0u) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_EQ(c.MrctlJson("job list --json").size(), 0u);  // nothing was submitted
}

TEST_F(PluginIntegrationTest, BadPluginsFailTheirJobsNotTheWorkers) {
  LocalCluster c(2, 1, "--block-size 262144 --replication 1 --heartbeat-ms 100");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  Put(c, Generate("text", "600K", 4), "/in/text.txt");
  struct Case {
    std::string so, params, reason;
  };
  // A .so that cannot be loaded fails `job run` at once, with one line.
  for (const auto& [so, reason] : std::vector<std::pair<std::string, std::string>>{
           {"plugin_bad_no_entry", "has no entry point mr_job_api_version/mr_job_info"},
           {"plugin_bad_wrong_version", "was built against job API version 3; this runtime has version 2"}}) {
    CommandResult r = c.Mrctl("job run " + Quote(So(so)) + " -i /in/text.txt -o /out/" + so);
    EXPECT_EQ(r.exit_code, 2) << so;
    EXPECT_NE(r.err.find(reason), std::string::npos) << r.err;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  }
  EXPECT_EQ(c.MrctlJson("job list --json").size(), 0u);
  // One that loads but misbehaves in its tasks fails its job, not a worker.
  const std::vector<Case> cases = {
      {"plugin_bad_segfault", "", "task process (mr-task) was killed by signal 11 (Segmentation fault)"},
      {"plugin_bad_loop", "timeout_ms=500", "task process (mr-task) ran longer than the task time limit (500 ms"},
  };
  int n = 0;
  for (const Case& k : cases) {
    SCOPED_TRACE(k.so);
    json r = RunJob(c, So(k.so), "/in/text.txt", "/out/bad" + std::to_string(n++), 1, k.params);
    ASSERT_EQ(r["state"], "failed") << r.dump(2);
    const std::string error = r["error"];
    EXPECT_NE(error.find(k.reason), std::string::npos) << error;
    EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  }
  EXPECT_EQ(c.LiveWorkers(), 2);
  json good = RunJob(c, So("plugin_wordcount"), "/in/text.txt", "/out/good", 2, "");
  EXPECT_EQ(good["state"], "succeeded") << good.dump(2);
  EXPECT_EQ(c.CountProcesses("mr-task"), 0);  // no child left behind
}

}  // namespace
}  // namespace mr::testing

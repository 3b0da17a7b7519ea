// The crash test, in the style of the classic course MapReduce labs: while
// several jobs run, SIGKILL random workers and restart them; every job must
// still finish with exactly the oracle's output.
//
// What it exercises: running tasks of a dead worker run again elsewhere;
// finished map outputs it held run again; reducers whose fetches fail report
// it and wait for the re-run; a worker that comes back is registered afresh
// (its old tasks forgotten on both sides); output commit keeps exactly one
// attempt per task. The seed is printed so a failure can be replayed.
#include <random>

#include "tests/integration/job_fixture.h"
#include "tests/jobs/job_cases.h"

namespace mr::testing {
namespace {

using nlohmann::json;
using namespace std::chrono_literals;

class JobCrashTest : public JobTest {};

TEST_F(JobCrashTest, JobsSurviveWorkersKilledAndRestarted) {
  // Input replication 2 over 2 datacenters: with one worker down at a time
  // every block stays readable.
  LocalCluster c(4, 2, "--block-size 262144 --replication 2 --heartbeat-ms 100");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string text = Generate("text", "16M", 21);
  const std::string dna = Generate("dna", "6M", 22);
  Put(c, text, "/in/text.txt");
  Put(c, dna, "/in/dna.fa");

  struct Run {
    std::string job, input, local, params;
    int reducers;
    int64_t id = 0;
  };
  std::vector<Run> runs = {{"wordcount", "/in/text.txt", text, "", 3},
                           {"sort", "/in/text.txt", text, "", 2},
                           {"permu", "/in/dna.fa", dna, "", 2},
                           {"sequencecount", "/in/text.txt", text, "", 2}};
  // A registered job the list above does not run (a student's,
  // tests/jobs/job_cases.h) runs too, on the text, with 2 reducers.
  for (const RegisteredJobCase& k : RegisteredJobCases()) {
    EXPECT_TRUE(k.problem.empty()) << k.problem;
    bool listed = false;
    for (const Run& r : runs) listed = listed || r.job == k.job;
    for (const char* other : {"grep", "invertedindex"}) listed = listed || k.job == other;
    if (!listed && k.problem.empty()) runs.push_back({k.job, "/in/text.txt", text, ParamsText(k.params), 2});
  }
  for (size_t i = 0; i < runs.size(); ++i) {
    Run& r = runs[i];
    CommandResult s = c.Mrctl("job run " + r.job + " -i " + r.input + " -o /out/" + std::to_string(i) +
                              " -r " + std::to_string(r.reducers) + ParamFlags(r.params, "-p") + " --json");
    ASSERT_EQ(s.exit_code, 0) << s.err;
    r.id = json::parse(s.out)["id"].get<int64_t>();
  }

  const uint64_t seed = std::random_device{}();
  std::printf("crash test seed %llu\n", static_cast<unsigned long long>(seed));
  std::mt19937_64 rng(seed);
  auto all_over = [&] {
    for (const Run& r : runs) {
      json j = c.MrctlJson("job show --json " + std::to_string(r.id));
      if (!j.is_object() || j["state"] == "running") return false;
    }
    return true;
  };
  // At most 8 rounds, each: kill one worker, let the jobs run on without it
  // for a while (sometimes long enough for it to be declared dead), bring it
  // back.
  int kills = 0;
  for (int round = 0; round < 8 && !all_over(); ++round) {
    const std::string victim = "w" + std::to_string(1 + rng() % 4);
    ASSERT_EQ(c.Script("kill " + victim).exit_code, 0);
    ++kills;
    std::this_thread::sleep_for(std::chrono::milliseconds(200 + rng() % 1200));
    CommandResult started = c.Script("start " + victim);
    ASSERT_EQ(started.exit_code, 0) << started.err;
    std::this_thread::sleep_for(std::chrono::milliseconds(100 + rng() % 400));
  }
  ASSERT_TRUE(WaitFor(all_over, 180s)) << "jobs did not end";
  std::printf("%d workers killed\n", kills);
  EXPECT_GE(kills, 2) << "the jobs ended before the test could kill workers";
  ASSERT_TRUE(WaitFor([&] { return c.LiveWorkers() == 4; }, 30s));

  for (size_t i = 0; i < runs.size(); ++i) {
    const Run& r = runs[i];
    SCOPED_TRACE(r.job);
    json j = c.MrctlJson("job show --json " + std::to_string(r.id));
    ASSERT_EQ(j["state"], "succeeded") << j.dump(2);
    EXPECT_EQ(ListParts(c, "/out/" + std::to_string(i)).size(), static_cast<size_t>(r.reducers));
    EXPECT_TRUE(Cat(c, "/out/" + std::to_string(i)) == Oracle(r.job, r.local, r.reducers, r.params, 262144))
        << "job " << r.id << " output differs from mr-local's";
  }
  // Nothing of the jobs' temporary state is left in the namespace.
  json tmp = c.MrctlJson("dfs ls --json /.mr/jobs");
  EXPECT_TRUE(tmp.is_array() && tmp.empty()) << tmp.dump();
}

// A job's output has [dfs] replication replicas unless the job or the
// cluster file asks for others, as Hadoop writes job output with
// dfs.replication: killing the worker that ran the reduce leaves the output
// readable and whole. (With one replica, the default before, `dfs cat` failed
// here: the output's only replicas were on the killed worker.)
TEST_F(JobCrashTest, OutputOutlivesTheWorkerThatWroteIt) {
  LocalCluster c(3, 1, "--block-size 262144 --replication 2 --heartbeat-ms 100");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string text = Generate("text", "2M", 31);
  Put(c, text, "/in/text.txt");

  json job = RunJob(c, "sort", "/in/text.txt", "/out/default", 1, "");
  ASSERT_EQ(job["state"], "succeeded") << job.dump(2);
  EXPECT_EQ(job["output_replication"], 2);
  // Asked for one replica, a job gets one.
  CommandResult one = c.Mrctl("job run sort -i /in/text.txt -o /out/one -r 1 --output-replication 1 --wait --json");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  EXPECT_EQ(json::parse(one.out)["output_replication"], 1);
  for (const auto& [dir, want] : {std::pair{"/out/default", 2}, std::pair{"/out/one", 1}}) {
    for (const auto& e : c.MrctlJson(std::string("dfs ls --json ") + dir)) {
      if (e["path"].get<std::string>().find("part-") == std::string::npos) continue;
      EXPECT_EQ(e["replication"], want) << e.dump();
    }
  }
  // More than the cluster's workers, or than dfs.max_replication: one line,
  // refused at submission as `dfs put -r N` is.
  for (const auto& [n, why] : {std::pair{"4", "output replication 4 is above the 3 workers of the cluster"},
                               std::pair{"600", "output replication 600 is above the cluster's maximum of 512"}}) {
    CommandResult many = c.Mrctl(std::string("job run sort -i /in/text.txt -o /out/many -r 1 --output-replication ") + n);
    EXPECT_NE(many.exit_code, 0);
    EXPECT_NE(many.err.find(why), std::string::npos) << many.err;
  }
  EXPECT_NE(c.Mrctl("dfs ls /out/many").exit_code, 0);

  json shown = c.MrctlJson("job show --json " + std::to_string(job["id"].get<int64_t>()));
  ASSERT_EQ(shown["reduce_tasks"].size(), 1u) << shown.dump(2);
  const std::string writer = shown["reduce_tasks"][0]["node"];
  ASSERT_EQ(c.Script("kill " + writer).exit_code, 0);
  EXPECT_TRUE(Cat(c, "/out/default") == Oracle("sort", text, 1, "", 262144))
      << "the output differs from mr-local's after " << writer << " was killed";
}

}  // namespace
}  // namespace mr::testing

// Measured read rates reach the probabilistic policy (issue 13, item 5):
// workers time their map reads from the other datacenter
// (dfs/link_rates.h), carry the estimates in every heartbeat
// (HeartbeatRequest.link_rates), and the master, hosting "probabilistic",
// builds its distance matrix from them (master/link_costs.h) and logs the
// rates it used. Real master and workers in two datacenters.
#include <fstream>
#include <sstream>
#include <thread>

#include "tests/integration/job_fixture.h"

namespace mr::testing {
namespace {

using namespace std::chrono_literals;

class LinkCostsLiveTest : public JobTest {};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

TEST_F(LinkCostsLiveTest, TheMastersMatrixComesFromTheWorkersReadRates) {
  // 1 MiB blocks (a rate sample needs 256 KiB), one replica each: a map
  // placed in the other datacenter from its block reads across.
  LocalCluster c(4, 2, "--block-size 1048576 --replication 1 --heartbeat-ms 100 --scheduler fifo");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  Put(c, Generate("text", "12M", 43), "/in/text.txt");
  const std::string log = c.dir() + "/logs/master.log";
  const std::string line = "probabilistic: link costs from measured read rates:";

  // FIFO takes any map for a free slot, so some maps read a whole block
  // across (a rate sample); while the policy is fifo no matrix is built.
  // Hosting probabilistic, the next heartbeats build it. A run whose
  // cross-datacenter reads were all small (a map's look past its split) has
  // no sample: run again under fifo (bounded).
  std::string text;
  for (int run = 0; run < 5 && text.find(line) == std::string::npos; ++run) {
    ASSERT_EQ(c.Mrctl("scheduler set fifo").exit_code, 0);
    nlohmann::json r = RunJob(c, "wordcount", "/in/text.txt", "/out/" + std::to_string(run), 2, "");
    ASSERT_EQ(r["state"], "succeeded") << r.dump();
    EXPECT_EQ(ReadAll(log).find(line), std::string::npos);
    ASSERT_EQ(c.Mrctl("scheduler set probabilistic").exit_code, 0);
    for (int i = 0; i < 30 && (text = ReadAll(log)).find(line) == std::string::npos; ++i) {
      std::this_thread::sleep_for(100ms);
    }
  }
  const size_t at = text.find(line);
  ASSERT_NE(at, std::string::npos) << "no link-cost line in " << log;
  // " dc0->dc1 12.3 MiB/s;" — a measured pair between the two datacenters.
  const std::string rates = text.substr(at + line.size(), text.find('\n', at) - at - line.size());
  EXPECT_NE(rates.find("->"), std::string::npos) << rates;
  EXPECT_NE(rates.find("MiB/s"), std::string::npos) << rates;
  EXPECT_EQ(rates.find(" 0.0 MiB/s"), std::string::npos) << rates;
}

}  // namespace
}  // namespace mr::testing

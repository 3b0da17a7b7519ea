// Group commit of namespace mutations (issue 29, dfs/group_commit.h) against
// a real local cluster: many creates from several client connections at
// once all succeed, share syncs (the master's /metrics counts fewer synced
// writes than mutations), and every create that was answered is still there
// after the master is killed with SIGKILL and started again.
#include <set>
#include <thread>

#include "common/config.h"
#include "dfs/client.h"
#include "tests/integration/cluster_fixture.h"
#include "tests/integration/http_fixture.h"

namespace mr::testing {
namespace {

using namespace std::chrono_literals;

constexpr int kClients = 8;
constexpr int kFilesPerClient = 25;

// The value of an unlabelled sample `name` in a /metrics page, or -1.
double Sample(const std::string& metrics, const std::string& name) {
  const size_t at = metrics.find("\n" + name + " ");
  return at == std::string::npos ? -1 : std::stod(metrics.substr(at + name.size() + 2));
}

// One empty file, as a put of nothing sends it: create, then complete; then
// the client reads it back (a read after an answered write sees it).
awaitable<Status> CreateEmpty(dfs::DfsClient& c, const std::string& path) {
  pb::CreateFileRequest create;
  create.set_path(path);
  create.set_client_id(c.client_id());
  pb::CreateFileReply lease;
  MR_CO_RETURN_IF_ERROR(co_await c.CallMaster("dfs.Create", create, &lease));
  pb::CompleteFileRequest complete;
  complete.set_lease_id(lease.lease_id());
  complete.set_path(path);
  complete.set_client_id(c.client_id());
  pb::Empty done;
  MR_CO_RETURN_IF_ERROR(co_await c.CallMaster("dfs.CompleteFile", complete, &done));
  pb::LocateRequest stat;
  stat.set_path(path);
  pb::StatReply found;
  co_return co_await c.CallMaster("dfs.Stat", stat, &found);
}

std::string PathOf(int client, int i) {
  return "/gc/c" + std::to_string(client) + "/f" + std::to_string(i);
}

TEST(DfsGroupCommitTest, ConcurrentCreatesShareSyncsAndSurviveSigkill) {
  LocalCluster c(1, 1, "--replication 1");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  auto config = LoadClusterConfig(c.config());
  ASSERT_TRUE(config.ok()) << config.status().ToString();
  const int http = PortOf(TomlValue(c.config(), "http_address", 0));
  ASSERT_GT(http, 0);
  const std::string before = Get(http, "/metrics").body;
  const double mutations0 = Sample(before, "mr_namespace_mutations_total");
  const double syncs0 = Sample(before, "mr_namespace_syncs_total");
  ASSERT_GE(mutations0, 0) << "no mr_namespace_mutations_total in /metrics";
  ASSERT_GE(syncs0, 0) << "no mr_namespace_syncs_total in /metrics";

  // Each client on its own thread and connection, creating its files one
  // after the other: kClients requests are in flight at any time.
  std::vector<Status> results(kClients);
  std::vector<std::thread> clients;
  for (int k = 0; k < kClients; ++k) {
    clients.emplace_back([&, k] {
      results[k] = RunSync([&]() -> awaitable<Status> {
        dfs::DfsClient client(config->master.address, RpcOptions::FromConfig(*config, "test"),
                              config->dfs.transfer_chunk_bytes);
        for (int i = 0; i < kFilesPerClient; ++i) {
          const std::string path = PathOf(k, i);
          MR_CO_RETURN_IF_ERROR(co_await CreateEmpty(client, path));
        }
        co_return Status::OK();
      });
    });
  }
  for (auto& t : clients) t.join();
  for (int k = 0; k < kClients; ++k) ASSERT_TRUE(results[k].ok()) << k << ": " << results[k].ToString();

  // Every create is one mutation at least (its file; its directory once);
  // the syncs that made them durable are fewer than the creates.
  const std::string after = Get(http, "/metrics").body;
  const double mutations = Sample(after, "mr_namespace_mutations_total") - mutations0;
  const double syncs = Sample(after, "mr_namespace_syncs_total") - syncs0;
  constexpr int kCreates = kClients * kFilesPerClient;
  EXPECT_GE(mutations, kCreates);
  EXPECT_GT(syncs, 0);
  EXPECT_LT(syncs, kCreates) << mutations << " mutations";
  std::printf("%d creates from %d connections: %.0f mutations, %.0f syncs\n", kCreates, kClients,
              mutations, syncs);

  // SIGKILL right after the last reply: nothing gets flushed on the way out.
  ASSERT_EQ(c.Script("kill master").exit_code, 0);
  ASSERT_EQ(c.Script("start master").exit_code, 0);
  ASSERT_TRUE(WaitFor([&] { return c.LiveWorkers() == 1; }, 30s));
  std::set<std::string> want;
  for (int k = 0; k < kClients; ++k) {
    for (int i = 0; i < kFilesPerClient; ++i) want.insert(PathOf(k, i));
  }
  std::set<std::string> got;
  for (int k = 0; k < kClients; ++k) {
    const CommandResult ls = c.Mrctl("dfs ls /gc/c" + std::to_string(k));
    ASSERT_EQ(ls.exit_code, 0) << ls.err;
    for (int i = 0; i < kFilesPerClient; ++i) {
      const std::string name = "f" + std::to_string(i);
      if (ls.out.find(" " + name + "\n") != std::string::npos ||
          ls.out.find("/" + name + "\n") != std::string::npos) {
        got.insert(PathOf(k, i));
      }
    }
  }
  EXPECT_EQ(got, want);
}

}  // namespace
}  // namespace mr::testing

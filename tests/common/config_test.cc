// Tests for common/config.h: the cluster file parser and validator.

#include "common/config.h"
#include "tests/common/config_fixture.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

namespace mr {
namespace {

using namespace testing_config;

// Every key of every table lands in its field.
TEST(ConfigTest, FullFileRoundTrips) {
  ClusterConfig c = ParseOk(R"(
[cluster]
name = "joss"
secret = "s3cret"
heartbeat_interval_ms = 500
dead_after_missed_heartbeats = 4
rpc_timeout_ms = 2000
max_frame_bytes = 8388608

[master]
address = "10.0.0.1:7000"
data_dir = "/var/mr/master"

[dfs]
block_size = 1048576
replication = 3
placement = "skewed"
transfer_chunk_bytes = 131072
fsync = true
placement_seed = 42

[dfs.skewed]
hot_node_fraction = 0.25
hot_block_fraction = 1

[scheduler]
name = "pandas"
seed = 7

[scheduler.params]
alpha = 0.5

[log]
level = "debug"

[[worker]]
id = "w1"
address = "10.0.0.2:7101"
datacenter = "dc1"
rack = "r1"
map_slots = 4
reduce_slots = 0
data_dir = "/var/mr/w1"
capacity_bytes = 1000000

[[worker]]
id = "w2"
address = "[::1]:7102"
datacenter = "dc2"
)");
  EXPECT_EQ(c.cluster.name, "joss");
  EXPECT_EQ(c.cluster.secret, "s3cret");
  EXPECT_EQ(c.cluster.heartbeat_interval_ms, 500);
  EXPECT_EQ(c.cluster.dead_after_missed_heartbeats, 4);
  EXPECT_EQ(c.cluster.rpc_timeout_ms, 2000);
  EXPECT_EQ(c.cluster.max_frame_bytes, 8388608);
  EXPECT_EQ(c.master.address, (HostPort{"10.0.0.1", 7000}));
  EXPECT_EQ(c.master.data_dir, "/var/mr/master");
  EXPECT_EQ(c.dfs.block_size, 1048576);
  EXPECT_EQ(c.dfs.replication, 3);
  EXPECT_EQ(c.dfs.placement, "skewed");
  EXPECT_EQ(c.dfs.transfer_chunk_bytes, 131072);
  EXPECT_TRUE(c.dfs.fsync);
  EXPECT_EQ(c.dfs.placement_seed, 42u);
  EXPECT_DOUBLE_EQ(c.dfs.skewed.hot_node_fraction, 0.25);
  EXPECT_DOUBLE_EQ(c.dfs.skewed.hot_block_fraction, 1.0);
  EXPECT_EQ(c.scheduler.name, "pandas");
  EXPECT_EQ(c.scheduler.params.at("alpha"), ParamValue(0.5));
  EXPECT_EQ(c.scheduler.seed, 7);
  EXPECT_EQ(c.log.level, "debug");
  ASSERT_EQ(c.workers.size(), 2u);
  const WorkerOptions& w1 = c.workers[0];
  EXPECT_EQ(w1.id, "w1");
  EXPECT_EQ(w1.address, (HostPort{"10.0.0.2", 7101}));
  EXPECT_EQ(w1.datacenter, "dc1");
  EXPECT_EQ(w1.rack, "r1");
  EXPECT_EQ(w1.map_slots, 4);
  EXPECT_EQ(w1.reduce_slots, 0);
  EXPECT_EQ(w1.data_dir, "/var/mr/w1");
  EXPECT_EQ(w1.capacity_bytes, 1000000);
  EXPECT_EQ(c.workers[1].address, (HostPort{"::1", 7102}));
  EXPECT_EQ(c.workers[1].address.ToString(), "[::1]:7102");
  EXPECT_EQ(c.FindWorker("w2"), &c.workers[1]);
  EXPECT_EQ(c.FindWorker("w3"), nullptr);
}

// Absent keys keep the defaults documented in config.h.
TEST(ConfigTest, DefaultsWhenKeysAbsent) {
  ClusterConfig c = ParseOk(WithMaster(Worker("w1", "127.0.0.1:7101")));
  ClusterOptions cluster;
  DfsOptions dfs;
  EXPECT_EQ(c.cluster.name, "mr");
  EXPECT_EQ(c.cluster.heartbeat_interval_ms, cluster.heartbeat_interval_ms);
  EXPECT_EQ(c.cluster.dead_after_missed_heartbeats, cluster.dead_after_missed_heartbeats);
  EXPECT_EQ(c.cluster.rpc_timeout_ms, cluster.rpc_timeout_ms);
  EXPECT_EQ(c.cluster.max_frame_bytes, 4 << 20);
  EXPECT_EQ(c.master.data_dir, "./mr-data/master");
  EXPECT_EQ(c.dfs.block_size, 64 << 20);
  EXPECT_EQ(c.dfs.replication, dfs.replication);
  EXPECT_EQ(c.dfs.placement, "hdfs");
  EXPECT_EQ(c.dfs.transfer_chunk_bytes, 128 << 10);
  EXPECT_FALSE(c.dfs.fsync);
  EXPECT_EQ(c.dfs.placement_seed, 0u);
  EXPECT_EQ(c.dfs.max_replication, 512);
  EXPECT_EQ(c.jobs.output_replication, 0);  // 0: dfs.replication, resolved by the master
  EXPECT_DOUBLE_EQ(c.dfs.skewed.hot_node_fraction, 0.2);
  EXPECT_DOUBLE_EQ(c.dfs.skewed.hot_block_fraction, 0.8);
  EXPECT_EQ(c.scheduler.name, "fifo");
  EXPECT_TRUE(c.scheduler.params.empty());
  EXPECT_EQ(c.scheduler.seed, 1);  // the seed every policy had before [scheduler] seed
  EXPECT_EQ(c.log.level, "info");
  ASSERT_EQ(c.workers.size(), 1u);
  EXPECT_EQ(c.workers[0].rack, "");
  EXPECT_EQ(c.workers[0].map_slots, 2);
  EXPECT_EQ(c.workers[0].reduce_slots, 1);
  EXPECT_EQ(c.workers[0].data_dir, "./mr-data/w1");
  EXPECT_EQ(c.workers[0].capacity_bytes, 0);
}

// A master may be configured before any worker is listed.
// The status server's addresses (docs/status-page.md): off unless set.
TEST(ConfigTest, HttpAddresses) {
  ClusterConfig off = ParseOk(WithMaster(Worker("w1", "127.0.0.1:7101")));
  EXPECT_EQ(off.master.http_address.port, 0);
  EXPECT_FALSE(off.master.http_require_secret);
  EXPECT_EQ(off.workers[0].http_address.port, 0);
  ClusterConfig on = ParseOk(WithMaster("http_address = \"127.0.0.1:7080\"\nhttp_require_secret = true\n" +
                                        Worker("w1", "127.0.0.1:7101", "http_address = \"127.0.0.1:7181\"\n")));
  EXPECT_EQ(on.master.http_address.ToString(), "127.0.0.1:7080");
  EXPECT_TRUE(on.master.http_require_secret);
  EXPECT_EQ(on.workers[0].http_address.port, 7181);
  EXPECT_NE(ParseError(WithMaster("http_address = \"nope\"\n")).find("http_address"), std::string::npos);
  EXPECT_NE(ParseError(WithMaster("http_require_secret = \"yes\"\n")).find("http_require_secret"),
            std::string::npos);
}

TEST(ConfigTest, ZeroWorkersParse) { EXPECT_TRUE(ParseOk(kMinimal).workers.empty()); }

// A misspelt key must not be silently ignored.
TEST(ConfigTest, UnknownKeyInTable) {
  EXPECT_EQ(ParseError(WithMaster("[dfs]\nblocksize = 65536\n")),
            "cluster.toml: unknown key 'dfs.blocksize'");
  EXPECT_EQ(ParseError(WithMaster("[dfs.skewed]\nhot = 0.5\n")),
            "cluster.toml: unknown key 'dfs.skewed.hot'");
}

// A misspelt table name is as wrong as a misspelt key.
TEST(ConfigTest, UnknownTopLevelTable) {
  EXPECT_EQ(ParseError(WithMaster("[workers]\nid = \"w1\"\n")),
            "cluster.toml: unknown key 'workers'");
  EXPECT_EQ(ParseError("debug = true\n" + std::string(kMinimal)),
            "cluster.toml: unknown key 'debug'");
}

// Worker entries are checked key by key too, and named by index.
TEST(ConfigTest, UnknownKeyInWorker) {
  std::string text =
      WithMaster(Worker("w1", "127.0.0.1:7101") + Worker("w2", "127.0.0.1:7102", "slots = 3\n"));
  EXPECT_EQ(ParseError(text), "cluster.toml: unknown key 'worker[1].slots'");
}

// Wrong value types name the key and the expected type.
TEST(ConfigTest, WrongTypes) {
  std::string workers = Worker("w0", "127.0.0.1:7100") + Worker("w1", "127.0.0.1:7101") +
                        Worker("w2", "127.0.0.1:7102", "map_slots = \"4\"\n");
  EXPECT_EQ(ParseError(WithMaster(workers)),
            "cluster.toml: 'worker[2].map_slots' must be an integer");
  EXPECT_EQ(ParseError(WithMaster("[cluster]\nname = 3\n")),
            "cluster.toml: 'cluster.name' must be a string");
  EXPECT_EQ(ParseError(WithMaster("[dfs]\nfsync = 1\n")),
            "cluster.toml: 'dfs.fsync' must be a boolean");
  EXPECT_EQ(ParseError(WithMaster("[dfs]\nblock_size = 65536.0\n")),
            "cluster.toml: 'dfs.block_size' must be an integer");
  EXPECT_EQ(ParseError(WithMaster("[dfs.skewed]\nhot_node_fraction = \"half\"\n")),
            "cluster.toml: 'dfs.skewed.hot_node_fraction' must be a number");
  EXPECT_EQ(ParseError("dfs = 5\n" + std::string(kMinimal)), "cluster.toml: 'dfs' must be a table");
  EXPECT_EQ(ParseError(WithMaster("[worker]\nid = \"w1\"\n")),
            "cluster.toml: 'worker' must be an array of tables ([[worker]])");
  EXPECT_EQ(ParseError("[master]\naddress = 7000\n"),
            "cluster.toml: 'master.address' must be a string");
}

// An integer is fine where a fraction is expected.
TEST(ConfigTest, IntegerAcceptedAsDouble) {
  ClusterConfig c = ParseOk(WithMaster("[dfs.skewed]\nhot_node_fraction = 1\n"));
  EXPECT_DOUBLE_EQ(c.dfs.skewed.hot_node_fraction, 1.0);
}

// Keys without a sensible default must be present.
TEST(ConfigTest, RequiredKeys) {
  EXPECT_EQ(ParseError(""), "cluster.toml: missing required key 'master.address'");
  EXPECT_EQ(ParseError("[master]\ndata_dir = \"/x\"\n"),
            "cluster.toml: missing required key 'master.address'");
  EXPECT_EQ(ParseError(WithMaster("[[worker]]\nid = \"w1\"\naddress = \"127.0.0.1:7101\"\n")),
            "cluster.toml: missing required key 'worker[0].datacenter'");
  EXPECT_EQ(ParseError(WithMaster("[[worker]]\naddress = \"127.0.0.1:7101\"\n")),
            "cluster.toml: missing required key 'worker[0].id'");
  EXPECT_EQ(ParseError(WithMaster(Worker("", "127.0.0.1:7101"))),
            "cluster.toml: 'worker[0].id' must not be empty");
}

// Ids name data directories, so path separators are refused.
TEST(ConfigTest, WorkerIdMustBePathSafe) {
  EXPECT_EQ(ParseError(WithMaster(Worker("../w1", "127.0.0.1:7101"))),
            "cluster.toml: 'worker[0].id' may contain only letters, digits, '-', '_' and '.' "
            "(got '../w1')");
}

// Each numeric bound from config.h is enforced with the key and value named.
// cluster.inter_dc_zstd_level: 0 (off) to 19, default 3.
TEST(ConfigTest, InterDcZstdLevel) {
  EXPECT_EQ(ParseOk(kMinimal).cluster.inter_dc_zstd_level, 3);
  EXPECT_EQ(ParseOk(WithMaster("[cluster]\ninter_dc_zstd_level = 0\n")).cluster.inter_dc_zstd_level, 0);
  EXPECT_EQ(ParseOk(WithMaster("[cluster]\ninter_dc_zstd_level = 19\n")).cluster.inter_dc_zstd_level, 19);
  EXPECT_EQ(ParseError(WithMaster("[cluster]\ninter_dc_zstd_level = 20\n")),
            "cluster.toml: 'cluster.inter_dc_zstd_level' must be at most 19 (got 20)");
  EXPECT_EQ(ParseError(WithMaster("[cluster]\ninter_dc_zstd_level = -1\n")),
            "cluster.toml: 'cluster.inter_dc_zstd_level' must be at least 0 (got -1)");
  EXPECT_EQ(ParseError(WithMaster("[cluster]\ninter_dc_zstd_level = \"fast\"\n")),
            "cluster.toml: 'cluster.inter_dc_zstd_level' must be an integer");
  EXPECT_EQ(ParseOk(kMinimal).cluster.inter_dc_zstd_window_log, 0);
  EXPECT_EQ(ParseOk(WithMaster("[cluster]\ninter_dc_zstd_window_log = 24\n")).cluster.inter_dc_zstd_window_log, 24);
  EXPECT_EQ(ParseError(WithMaster("[cluster]\ninter_dc_zstd_window_log = 9\n")),
            "cluster.toml: 'cluster.inter_dc_zstd_window_log' must be 0 (off) or 10..27 (got 9)");
  EXPECT_EQ(ParseError(WithMaster("[cluster]\ninter_dc_zstd_window_log = 28\n")),
            "cluster.toml: 'cluster.inter_dc_zstd_window_log' must be at most 27 (got 28)");
}

// cluster.transfer_stall_ms (docs/config.md): 5 s, below rpc_timeout_ms;
// absent, it yields to a short rpc_timeout_ms.
TEST(ConfigTest, TransferStallIsBelowTheRpcTimeout) {
  EXPECT_EQ(ParseOk(kMinimal).cluster.transfer_stall_ms, 5000);
  EXPECT_EQ(ParseOk(WithMaster("[cluster]\ntransfer_stall_ms = 2500\n")).cluster.transfer_stall_ms, 2500);
  EXPECT_EQ(ParseOk(WithMaster("[cluster]\nrpc_timeout_ms = 4000\n")).cluster.transfer_stall_ms, 2000);
  EXPECT_EQ(ParseError(WithMaster("[cluster]\ntransfer_stall_ms = 30000\n")),
            "cluster.toml: 'cluster.transfer_stall_ms' must be below 'cluster.rpc_timeout_ms' "
            "(got 30000 and 30000)");
  EXPECT_EQ(ParseError(WithMaster("[cluster]\nrpc_timeout_ms = 4000\ntransfer_stall_ms = 5000\n")),
            "cluster.toml: 'cluster.transfer_stall_ms' must be below 'cluster.rpc_timeout_ms' "
            "(got 5000 and 4000)");
  EXPECT_EQ(ParseError(WithMaster("[cluster]\ntransfer_stall_ms = 99\n")),
            "cluster.toml: 'cluster.transfer_stall_ms' must be at least 100 (got 99)");
}

TEST(ConfigTest, SpeculationTable) {
  EXPECT_EQ(ParseOk(kMinimal).speculation.name, "late");
  ClusterConfig c = ParseOk(WithMaster("[speculation]\nname = \"hadoop\"\n[speculation.params]\nlag_ms = 5000\n"));
  EXPECT_EQ(c.speculation.name, "hadoop");
  EXPECT_EQ(std::get<int64_t>(c.speculation.params.at("lag_ms")), 5000);
  const std::string bad = ParseError(WithMaster("[speculation]\nkind = \"late\"\n"));
  EXPECT_NE(bad.find("unknown key"), std::string::npos) << bad;
  EXPECT_NE(bad.find("kind"), std::string::npos) << bad;
  // The name itself is checked by the master against the registry
  // (MakeSpeculator: "unknown speculator 'x' (valid: hadoop, late, none)").
}

TEST(ConfigTest, RangeChecks) {
  EXPECT_EQ(ParseError(WithMaster("[cluster]\nheartbeat_interval_ms = 9\n")),
            "cluster.toml: 'cluster.heartbeat_interval_ms' must be at least 10 (got 9)");
  EXPECT_EQ(ParseError(WithMaster("[cluster]\ndead_after_missed_heartbeats = 1\n")),
            "cluster.toml: 'cluster.dead_after_missed_heartbeats' must be at least 2 (got 1)");
  EXPECT_EQ(ParseError(WithMaster("[cluster]\nrpc_timeout_ms = 99\n")),
            "cluster.toml: 'cluster.rpc_timeout_ms' must be at least 100 (got 99)");
  EXPECT_EQ(ParseError(WithMaster("[cluster]\nrpc_timeout_ms = 3000000000\n")),
            "cluster.toml: 'cluster.rpc_timeout_ms' must be at most 2147483647 (got 3000000000)");
  EXPECT_EQ(ParseError(WithMaster("[dfs]\nblock_size = 100000\n")),
            "cluster.toml: 'dfs.block_size' must be a positive multiple of 65536 (got 100000)");
  EXPECT_EQ(ParseError(WithMaster("[dfs]\nblock_size = 0\n")),
            "cluster.toml: 'dfs.block_size' must be a positive multiple of 65536 (got 0)");
  EXPECT_EQ(
      ParseError(WithMaster("[dfs]\ntransfer_chunk_bytes = -65536\n")),
      "cluster.toml: 'dfs.transfer_chunk_bytes' must be a positive multiple of 65536 (got -65536)");
  EXPECT_EQ(ParseError(WithMaster("[dfs]\nreplication = 0\n")),
            "cluster.toml: 'dfs.replication' must be at least 1 (got 0)");
  EXPECT_EQ(ParseError(WithMaster("[dfs]\nplacement_seed = -1\n")),
            "cluster.toml: 'dfs.placement_seed' must be at least 0 (got -1)");
  EXPECT_EQ(ParseError(WithMaster("[dfs]\nmax_replication = 0\n")),
            "cluster.toml: 'dfs.max_replication' must be at least 1 (got 0)");
  EXPECT_EQ(ParseError(WithMaster("[dfs]\nreplication = 4\nmax_replication = 3\n")),
            "cluster.toml: 'dfs.replication' must be at most 'dfs.max_replication' (got 4 > 3)");
  EXPECT_EQ(ParseError(WithMaster("[dfs]\nmax_replication = 3\n[jobs]\noutput_replication = 4\n")),
            "cluster.toml: 'jobs.output_replication' must be at most 'dfs.max_replication' (got 4 > 3)");
  EXPECT_EQ(ParseError(WithMaster("[jobs]\noutput_replication = -1\n")),
            "cluster.toml: 'jobs.output_replication' must be at least 0 (got -1)");
  EXPECT_EQ(ParseError(WithMaster(Worker("w1", "127.0.0.1:7101", "map_slots = 0\n"))),
            "cluster.toml: 'worker[0].map_slots' must be at least 1 (got 0)");
  EXPECT_EQ(ParseError(WithMaster(Worker("w1", "127.0.0.1:7101", "reduce_slots = -1\n"))),
            "cluster.toml: 'worker[0].reduce_slots' must be at least 0 (got -1)");
  EXPECT_EQ(ParseError(WithMaster(Worker("w1", "127.0.0.1:7101", "capacity_bytes = -5\n"))),
            "cluster.toml: 'worker[0].capacity_bytes' must be at least 0 (got -5)");
}

// A frame must hold two chunks plus header room.
TEST(ConfigTest, MaxFrameBytesAgainstChunk) {
  std::string text =
      WithMaster("[cluster]\nmax_frame_bytes = 2162687\n[dfs]\ntransfer_chunk_bytes = 1048576\n");
  EXPECT_EQ(ParseError(text),
            "cluster.toml: 'cluster.max_frame_bytes' must be at least "
            "2 * 'dfs.transfer_chunk_bytes' + 65536 (got 2162687, chunk 1048576)");
  // Exactly 2 × 1 MiB + 64 KiB is enough.
  EXPECT_EQ(ParseError(WithMaster("[cluster]\nmax_frame_bytes = 2162688\n")), "OK");
}

// Placement names and fractions outside (0, 1] are rejected.
TEST(ConfigTest, PlacementAndFractions) {
  EXPECT_EQ(ParseError(WithMaster("[dfs]\nplacement = \"nearest\"\n")),
            "cluster.toml: 'dfs.placement' must be one of random, hdfs, spread, skewed "
            "(got 'nearest')");
  EXPECT_EQ(ParseError(WithMaster("[dfs.skewed]\nhot_node_fraction = 0.0\n")),
            "cluster.toml: 'dfs.skewed.hot_node_fraction' must be in (0, 1] (got 0)");
  EXPECT_EQ(ParseError(WithMaster("[dfs.skewed]\nhot_block_fraction = 1.5\n")),
            "cluster.toml: 'dfs.skewed.hot_block_fraction' must be in (0, 1] (got 1.5)");
  EXPECT_EQ(ParseError(WithMaster("[dfs.skewed]\nhot_block_fraction = nan\n")),
            "cluster.toml: 'dfs.skewed.hot_block_fraction' must be in (0, 1] (got nan)");
  for (const char* p : {"random", "hdfs", "spread", "skewed"}) {
    EXPECT_EQ(ParseOk(WithMaster("[dfs]\nplacement = \"" + std::string(p) + "\"\n")).dfs.placement,
              p);
  }
}

// Only the five spdlog-style level names are valid.
TEST(ConfigTest, LogLevel) {
  EXPECT_EQ(ParseError(WithMaster("[log]\nlevel = \"verbose\"\n")),
            "cluster.toml: 'log.level' must be one of trace, debug, info, warn, error "
            "(got 'verbose')");
  EXPECT_EQ(ParseOk(WithMaster("[log]\nlevel = \"warn\"\n")).log.level, "warn");
}

// Two workers with one id would be indistinguishable to the master.
TEST(ConfigTest, DuplicateWorkerId) {
  std::string text = WithMaster(Worker("w1", "127.0.0.1:7101") + Worker("w1", "127.0.0.1:7102"));
  EXPECT_EQ(ParseError(text), "cluster.toml: duplicate worker id 'w1'");
}

// Two processes cannot listen on one address; both owners are named.
TEST(ConfigTest, DuplicateAddress) {
  std::string text = WithMaster(Worker("w0", "127.0.0.1:7100") + Worker("w1", "127.0.0.1:7101") +
                                Worker("w2", "127.0.0.1:7102") + Worker("w3", "127.0.0.1:7101"));
  EXPECT_EQ(ParseError(text),
            "cluster.toml: duplicate address '127.0.0.1:7101' "
            "(worker[1].address and worker[3].address)");
  EXPECT_EQ(ParseError(WithMaster(Worker("w0", "127.0.0.1:7000"))),
            "cluster.toml: duplicate address '127.0.0.1:7000' "
            "(master.address and worker[0].address)");
}

// Bad addresses are reported with the key and the text.
TEST(ConfigTest, BadAddress) {
  EXPECT_EQ(ParseError("[master]\naddress = \"127.0.0.1\"\n"),
            "cluster.toml: 'master.address': invalid address '127.0.0.1': expected host:port");
  EXPECT_EQ(ParseError(WithMaster(Worker("w1", "127.0.0.1:70000"))),
            "cluster.toml: 'worker[0].address': invalid address '127.0.0.1:70000': "
            "port must be an integer in 1..65535");
}

// Policies read their own parameters; the file carries any scalar.
TEST(ConfigTest, SchedulerParamsAcceptScalars) {
  ClusterConfig c = ParseOk(WithMaster(R"(
[scheduler]
name = "matchmaking"
[scheduler.params]
flag = true
count = 7
ratio = 0.25
mode = "strict"
)"));
  EXPECT_EQ(c.scheduler.name, "matchmaking");
  ASSERT_EQ(c.scheduler.params.size(), 4u);
  EXPECT_EQ(c.scheduler.params.at("flag"), ParamValue(true));
  EXPECT_EQ(c.scheduler.params.at("count"), ParamValue(int64_t{7}));
  EXPECT_EQ(c.scheduler.params.at("ratio"), ParamValue(0.25));
  EXPECT_EQ(c.scheduler.params.at("mode"), ParamValue(std::string("strict")));
}

// Arrays and tables have no ParamValue, so they are refused.
TEST(ConfigTest, SchedulerParamsRejectNonScalars) {
  EXPECT_EQ(ParseError(WithMaster("[scheduler.params]\nweights = [1, 2]\n")),
            "cluster.toml: 'scheduler.params.weights' must be a boolean, integer, float or string");
  EXPECT_EQ(ParseError(WithMaster("[scheduler.params.nested]\nx = 1\n")),
            "cluster.toml: 'scheduler.params.nested' must be a boolean, integer, float or string");
  EXPECT_EQ(ParseError(WithMaster("[scheduler]\nparams = 3\n")),
            "cluster.toml: 'scheduler.params' must be a table");
  EXPECT_EQ(ParseError(WithMaster("[scheduler]\nalpha = 3\n")),
            "cluster.toml: unknown key 'scheduler.alpha'");
}

}  // namespace
}  // namespace mr

namespace mr {
namespace {

using namespace testing_config;

// A worker on a reachable address serves blocks, so it needs the secret too.
TEST(ConfigRulesTest, PublicWorkerAddressNeedsSecret) {
  auto c = ParseClusterConfig(
      "[master]\naddress = \"127.0.0.1:7000\"\n"
      "[[worker]]\nid = \"w1\"\naddress = \"0.0.0.0:7101\"\ndatacenter = \"dc1\"\n",
      "cluster.toml");
  ASSERT_FALSE(c.ok());
  EXPECT_EQ(c.status().message(),
            "cluster.toml: 'cluster.secret' is required when worker[0].address is not a loopback "
            "address");
}

// Heartbeats slower than the idle timeout would break every worker's link.
TEST(ConfigRulesTest, HeartbeatMustBeWellInsideTheRpcTimeout) {
  auto c = ParseClusterConfig(
      "[cluster]\nheartbeat_interval_ms = 20000\nrpc_timeout_ms = 30000\n"
      "[master]\naddress = \"127.0.0.1:7000\"\n",
      "cluster.toml");
  ASSERT_FALSE(c.ok());
  EXPECT_NE(c.status().message().find("heartbeat_interval_ms"), std::string::npos);
}

// Issue 10: a worker's reserved free space and the map's wait for a block.
TEST(ConfigTest, MinFreeBytesAndBlockWait) {
  ClusterConfig d = ParseOk(WithMaster(Worker("w1", "127.0.0.1:7101", "")));
  ASSERT_EQ(d.workers.size(), 1u);
  EXPECT_EQ(d.workers[0].min_free_bytes, 64 << 20);
  EXPECT_EQ(d.jobs.block_wait_ms, 180000);
  ClusterConfig c = ParseOk(WithMaster("[jobs]\nblock_wait_ms = 0\n" +
                                       Worker("w1", "127.0.0.1:7101", "min_free_bytes = 0\n")));
  ASSERT_EQ(c.workers.size(), 1u);
  EXPECT_EQ(c.workers[0].min_free_bytes, 0);
  EXPECT_EQ(c.jobs.block_wait_ms, 0);
  EXPECT_EQ(ParseError(WithMaster(Worker("w1", "127.0.0.1:7101", "min_free_bytes = -1\n"))),
            "cluster.toml: 'worker[0].min_free_bytes' must be at least 0 (got -1)");
  EXPECT_EQ(ParseError(WithMaster("[jobs]\nblock_wait_ms = -1\n")),
            "cluster.toml: 'jobs.block_wait_ms' must be at least 0 (got -1)");
}

// How often a reduce asks for map outputs (docs/config.md): 100 ms unless
// set, and a positive number of ms.
TEST(ConfigTest, MapOutputsPollKey) {
  EXPECT_EQ(ParseOk(WithMaster("")).jobs.map_outputs_poll_ms, 100);
  EXPECT_EQ(ParseOk(WithMaster("[jobs]\nmap_outputs_poll_ms = 20\n")).jobs.map_outputs_poll_ms, 20);
  EXPECT_EQ(ParseError(WithMaster("[jobs]\nmap_outputs_poll_ms = 0\n")),
            "cluster.toml: 'jobs.map_outputs_poll_ms' must be at least 1 (got 0)");
}

// The block scrubber's keys (docs/config.md): 3 weeks at 1 MiB/s unless
// set; 0 turns it off; a rate must be positive.
TEST(ConfigTest, ScrubKeys) {
  const ClusterConfig defaults = ParseOk(kMinimal);
  EXPECT_EQ(defaults.dfs.scrub_interval_s, 21 * 24 * 3600);
  EXPECT_EQ(defaults.dfs.scrub_bytes_per_second, 1 << 20);
  const ClusterConfig c =
      ParseOk(WithMaster("[dfs]\nscrub_interval_s = 0\nscrub_bytes_per_second = 4096\n"));
  EXPECT_EQ(c.dfs.scrub_interval_s, 0);
  EXPECT_EQ(c.dfs.scrub_bytes_per_second, 4096);
  EXPECT_EQ(ParseError(WithMaster("[dfs]\nscrub_interval_s = -1\n")),
            "cluster.toml: 'dfs.scrub_interval_s' must be at least 0 (got -1)");
  EXPECT_EQ(ParseError(WithMaster("[dfs]\nscrub_bytes_per_second = 0\n")),
            "cluster.toml: 'dfs.scrub_bytes_per_second' must be at least 1 (got 0)");
}

// TLS (docs/tls.md): off on loopback, inter-dc as soon as an address can
// leave the host; an explicit value wins; anything else is refused.
TEST(ConfigTest, TlsModeDefaultsAndValues) {
  EXPECT_EQ(ParseOk("[master]\naddress = \"127.0.0.1:7000\"\n").cluster.tls, "off");
  EXPECT_EQ(ParseOk("[cluster]\nsecret = \"x\"\n[master]\naddress = \"127.0.0.1:7000\"\n" +
                    Worker("w1", "10.0.0.2:7001"))
                .cluster.tls,
            "inter-dc");
  ClusterConfig c = ParseOk(
      "[cluster]\nsecret = \"x\"\ntls = \"all\"\ntls_ca = \"/t/ca.crt\"\ntls_cert = "
      "\"/t/{name}.crt\"\ntls_key = \"/t/{name}.key\"\n[master]\naddress = \"10.0.0.1:7000\"\n"
      "datacenter = \"dc1\"\n");
  EXPECT_EQ(c.cluster.tls, "all");
  EXPECT_EQ(c.cluster.tls_cert, "/t/{name}.crt");
  EXPECT_EQ(c.master.datacenter, "dc1");
  EXPECT_EQ(ParseOk("[cluster]\nsecret = \"x\"\ntls = \"off\"\n[master]\naddress = \"10.0.0.1:7000\"\n")
                .cluster.tls,
            "off");
  EXPECT_EQ(ParseError(WithMaster("[cluster]\ntls = \"yes\"\n")),
            "cluster.toml: 'cluster.tls' must be one of off, inter-dc, all (got 'yes')");
}

}  // namespace
}  // namespace mr

namespace mr {
namespace {

using namespace testing_config;

// Issue 11: a [[worker]] entry may be an allow-list entry without an
// address (the worker advertises it with --advertise); the master may
// listen on another address than the one others connect to.
TEST(ConfigTest, AllowListEntryWithoutAddress) {
  ClusterConfig c = ParseOk(WithMaster("[[worker]]\nid = \"w1\"\ndatacenter = \"dc1\"\n"
                                       "[[worker]]\nid = \"w2\"\ndatacenter = \"dc2\"\n"));
  ASSERT_EQ(c.workers.size(), 2u);
  EXPECT_EQ(c.workers[0].address.port, 0);
  EXPECT_EQ(c.workers[1].address.port, 0);  // two entries without an address are not duplicates
}

TEST(ConfigTest, MasterBindAddress) {
  ClusterConfig plain = ParseOk(kMinimal);
  EXPECT_EQ(plain.master.listen_address().ToString(), "127.0.0.1:7000");
  ClusterConfig nat = ParseOk(
      "[cluster]\nsecret = \"s\"\n[master]\naddress = \"203.0.113.7:7000\"\nbind = \"0.0.0.0:7000\"\n");
  EXPECT_EQ(nat.master.listen_address().ToString(), "0.0.0.0:7000");
  EXPECT_EQ(nat.master.address.ToString(), "203.0.113.7:7000");
  EXPECT_EQ(ParseError(WithMaster("bind = \"0.0.0.0:7000\"\n")),
            "cluster.toml: 'cluster.secret' is required when master.bind is not a loopback address");
  EXPECT_EQ(ParseError(WithMaster("bind = \"0.0.0.0\"\n")),
            "cluster.toml: 'master.bind': invalid address '0.0.0.0': expected host:port");
}

TEST(ConfigTest, WorkerIdRule) {
  EXPECT_TRUE(IsValidWorkerId("w-1_a.b"));
  EXPECT_FALSE(IsValidWorkerId(""));
  EXPECT_FALSE(IsValidWorkerId(".."));
  EXPECT_FALSE(IsValidWorkerId("w/1"));
}

}  // namespace
}  // namespace mr

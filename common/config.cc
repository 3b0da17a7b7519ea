// The cluster file parser: TOML text -> ClusterConfig, with one-line errors.
//
// Reading happens in two passes. The first walks the tables one helper per
// table (ReadCluster, ReadMaster, ...), rejecting unknown keys, wrong types and
// out-of-range values as it goes. The second (Validate) checks rules that span
// tables: the frame size against the chunk size, unique worker ids and
// addresses, the secret any non-loopback listener needs, and the heartbeat
// and the transfer stall against the RPC timeout. Every message
// names the key by its full path ("dfs.skewed.hot_node_fraction",
// "worker[2].map_slots"; worker indices count from 0), and the caller prefixes
// the origin.

#include "common/config.h"

#include "common/private_file.h"

#include <arpa/inet.h>
#include <algorithm>
#include <netinet/in.h>
#include <toml++/toml.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <initializer_list>
#include <limits>
#include <sstream>
#include <string_view>

namespace mr {

namespace {

constexpr int64_t kIntMax = std::numeric_limits<int>::max();
constexpr int64_t kInt64Max = std::numeric_limits<int64_t>::max();
constexpr int64_t kInt64Min = std::numeric_limits<int64_t>::min();
constexpr int64_t kAlignment = 64 << 10;  // block and chunk sizes are multiples

Status Invalid(const std::string& message) { return Status::InvalidArgument(message); }

std::string FormatDouble(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// "a, b, c" for error messages.
std::string JoinNames(std::initializer_list<std::string_view> names) {
  std::string out;
  for (std::string_view n : names) {
    if (!out.empty()) out += ", ";
    out += n;
  }
  return out;
}

// Reads the keys of one TOML table, naming each by its full path in errors.
// A missing table (nullptr) reads as empty, so every field keeps its default.
// Absent keys are never errors here; Require() makes them so.
class TableReader {
 public:
  TableReader(const toml::table* table, std::string path) : table_(table), path_(std::move(path)) {}

  const toml::table* table() const { return table_; }

  // "dfs.block_size": the full path of `key`.
  std::string Path(std::string_view key) const {
    return (path_.empty() ? "" : path_ + ".") + std::string(key);
  }
  // "'dfs.block_size'": the quoted full path, as errors show it.
  std::string Name(std::string_view key) const { return "'" + Path(key) + "'"; }

  // Rejects the first key (in sorted order) that is not in `known`.
  Status CheckKeys(std::initializer_list<std::string_view> known) const {
    if (table_ == nullptr) return Status::OK();
    for (const auto& [key, node] : *table_) {
      bool found = false;
      for (std::string_view k : known) found = found || key.str() == k;
      if (!found) return Invalid("unknown key " + Name(key.str()));
    }
    return Status::OK();
  }

  Status Require(std::string_view key) const {
    if (Get(key) != nullptr) return Status::OK();
    return Invalid("missing required key " + Name(key));
  }

  // The sub-table `key` as a reader; a reader of nothing when absent.
  Status Sub(std::string_view key, TableReader* out) const {
    const toml::node* node = Get(key);
    if (node != nullptr && !node->is_table()) return Invalid(Name(key) + " must be a table");
    *out = TableReader(node == nullptr ? nullptr : node->as_table(), Path(key));
    return Status::OK();
  }

  // With `non_empty`, a present "" is an error too.
  Status String(std::string_view key, std::string* out, bool non_empty = false) const {
    const toml::node* node = Get(key);
    if (node == nullptr) return Status::OK();
    if (!node->is_string()) return Invalid(Name(key) + " must be a string");
    *out = node->as_string()->get();
    if (non_empty && out->empty()) return Invalid(Name(key) + " must not be empty");
    return Status::OK();
  }

  // A string that must be one of `allowed`.
  Status OneOf(std::string_view key, std::initializer_list<std::string_view> allowed,
               std::string* out) const {
    MR_RETURN_IF_ERROR(String(key, out));
    for (std::string_view a : allowed) {
      if (*out == a) return Status::OK();
    }
    return Invalid(Name(key) + " must be one of " + JoinNames(allowed) + " (got '" + *out + "')");
  }

  Status Bool(std::string_view key, bool* out) const {
    const toml::node* node = Get(key);
    if (node == nullptr) return Status::OK();
    if (!node->is_boolean()) return Invalid(Name(key) + " must be a boolean");
    *out = node->as_boolean()->get();
    return Status::OK();
  }

  // An integer in [min, max], stored into any integer type that holds it.
  template <typename T>
  Status Int(std::string_view key, int64_t min, int64_t max, T* out) const {
    const toml::node* node = Get(key);
    if (node == nullptr) return Status::OK();
    if (!node->is_integer()) return Invalid(Name(key) + " must be an integer");
    int64_t v = node->as_integer()->get();
    std::string got = " (got " + std::to_string(v) + ")";
    if (v < min) return Invalid(Name(key) + " must be at least " + std::to_string(min) + got);
    if (v > max) return Invalid(Name(key) + " must be at most " + std::to_string(max) + got);
    *out = static_cast<T>(v);
    return Status::OK();
  }

  // A positive multiple of 64 KiB (block and chunk sizes).
  Status AlignedSize(std::string_view key, int64_t* out) const {
    int64_t v = *out;
    MR_RETURN_IF_ERROR(Int(key, kInt64Min, kInt64Max, &v));
    if (v <= 0 || v % kAlignment != 0) {
      return Invalid(Name(key) + " must be a positive multiple of " + std::to_string(kAlignment) +
                     " (got " + std::to_string(v) + ")");
    }
    *out = v;
    return Status::OK();
  }

  // A number in (0, 1]; an integer is accepted where a float is expected.
  Status Fraction(std::string_view key, double* out) const {
    const toml::node* node = Get(key);
    if (node == nullptr) return Status::OK();
    double v;
    if (node->is_floating_point()) {
      v = node->as_floating_point()->get();
    } else if (node->is_integer()) {
      v = static_cast<double>(node->as_integer()->get());
    } else {
      return Invalid(Name(key) + " must be a number");
    }
    if (!(v > 0.0 && v <= 1.0)) {
      return Invalid(Name(key) + " must be in (0, 1] (got " + FormatDouble(v) + ")");
    }
    *out = v;
    return Status::OK();
  }

  Status Address(std::string_view key, HostPort* out) const {
    if (Get(key) == nullptr) return Status::OK();
    std::string text;
    MR_RETURN_IF_ERROR(String(key, &text));
    Result<HostPort> hp = ParseHostPort(text);
    if (!hp.ok()) return hp.status().WithContext(Name(key));
    *out = *hp;
    return Status::OK();
  }

 private:
  const toml::node* Get(std::string_view key) const {
    return table_ == nullptr ? nullptr : table_->get(key);
  }

  const toml::table* table_;
  std::string path_;
};

Status ReadCluster(const TableReader& t, ClusterOptions* o) {
  MR_RETURN_IF_ERROR(
      t.CheckKeys({"name", "secret", "secret_env", "heartbeat_interval_ms",
                   "dead_after_missed_heartbeats", "rpc_timeout_ms", "max_frame_bytes", "max_reply_bytes",
                   "handshake_timeout_ms", "max_unauthenticated_connections",
                   "max_unauthenticated_per_address", "secret_file", "tls", "tls_ca",
                   "tls_cert", "tls_key", "inter_dc_zstd_level",
                   "inter_dc_zstd_window_log", "transfer_stall_ms"}));
  MR_RETURN_IF_ERROR(t.String("name", &o->name));
  MR_RETURN_IF_ERROR(t.String("secret", &o->secret));
  MR_RETURN_IF_ERROR(t.String("secret_env", &o->secret_env));
  MR_RETURN_IF_ERROR(t.Int("heartbeat_interval_ms", 10, kIntMax, &o->heartbeat_interval_ms));
  MR_RETURN_IF_ERROR(
      t.Int("dead_after_missed_heartbeats", 2, kIntMax, &o->dead_after_missed_heartbeats));
  MR_RETURN_IF_ERROR(t.Int("rpc_timeout_ms", 100, kIntMax, &o->rpc_timeout_ms));
  // The lower bound depends on dfs.transfer_chunk_bytes; Validate() checks it.
  MR_RETURN_IF_ERROR(t.Int("max_frame_bytes", 1, kInt64Max, &o->max_frame_bytes));
  // At least max_frame_bytes: Validate(). Frame lengths are 32-bit.
  MR_RETURN_IF_ERROR(t.Int("max_reply_bytes", 1, int64_t{UINT32_MAX}, &o->max_reply_bytes));
  // max_unauthenticated_per_address ≤ max_unauthenticated_connections: Validate().
  MR_RETURN_IF_ERROR(t.Int("handshake_timeout_ms", 100, kIntMax, &o->handshake_timeout_ms));
  MR_RETURN_IF_ERROR(t.Int("max_unauthenticated_connections", 1, kIntMax,
                           &o->max_unauthenticated_connections));
  MR_RETURN_IF_ERROR(t.Int("max_unauthenticated_per_address", 1, kIntMax,
                           &o->max_unauthenticated_per_address));
  MR_RETURN_IF_ERROR(t.String("secret_file", &o->secret_file, /*non_empty=*/true));
  if (!o->secret_file.empty()) {
    if (!o->secret.empty() || !o->secret_env.empty()) {
      return Invalid("set only one of 'cluster.secret', 'cluster.secret_env' and "
                     "'cluster.secret_file'");
    }
    auto secret = ReadPrivateFile(o->secret_file, "'cluster.secret_file'");
    if (!secret.ok()) return secret.status();
    o->secret = *secret;
  }
  // An absent tls is resolved from the addresses in Decode().
  if (t.table() != nullptr && t.table()->get("tls") != nullptr) {
    MR_RETURN_IF_ERROR(t.OneOf("tls", {"off", "inter-dc", "all"}, &o->tls));
  }
  MR_RETURN_IF_ERROR(t.String("tls_ca", &o->tls_ca));
  MR_RETURN_IF_ERROR(t.String("tls_cert", &o->tls_cert));
  MR_RETURN_IF_ERROR(t.String("tls_key", &o->tls_key));
  // Below rpc_timeout_ms: Validate(). Absent, the default yields to a short
  // rpc_timeout_ms (half of it), so a file that only shortens that loads.
  if (t.table() != nullptr && t.table()->get("transfer_stall_ms") != nullptr) {
    MR_RETURN_IF_ERROR(t.Int("transfer_stall_ms", 100, kIntMax, &o->transfer_stall_ms));
  } else {
    o->transfer_stall_ms = std::min(o->transfer_stall_ms, o->rpc_timeout_ms / 2);
  }
  MR_RETURN_IF_ERROR(t.Int("inter_dc_zstd_level", 0, 19, &o->inter_dc_zstd_level));
  MR_RETURN_IF_ERROR(t.Int("inter_dc_zstd_window_log", 0, 27, &o->inter_dc_zstd_window_log));
  if (o->inter_dc_zstd_window_log > 0 && o->inter_dc_zstd_window_log < 10) {
    return Invalid(t.Name("inter_dc_zstd_window_log") + " must be 0 (off) or 10..27 (got " +
                   std::to_string(o->inter_dc_zstd_window_log) + ")");
  }
  return Status::OK();
}

Status ReadMaster(const TableReader& t, MasterOptions* o) {
  MR_RETURN_IF_ERROR(t.CheckKeys({"address", "data_dir", "bind", "datacenter", "http_address",
                                  "http_require_secret"}));
  MR_RETURN_IF_ERROR(t.Require("address"));
  MR_RETURN_IF_ERROR(t.Address("address", &o->address));
  MR_RETURN_IF_ERROR(t.String("data_dir", &o->data_dir, /*non_empty=*/true));
  MR_RETURN_IF_ERROR(t.Address("bind", &o->bind));
  MR_RETURN_IF_ERROR(t.String("datacenter", &o->datacenter));
  MR_RETURN_IF_ERROR(t.Address("http_address", &o->http_address));
  MR_RETURN_IF_ERROR(t.Bool("http_require_secret", &o->http_require_secret));
  return Status::OK();
}

Status ReadDfs(const TableReader& t, DfsOptions* o) {
  MR_RETURN_IF_ERROR(t.CheckKeys({"block_size", "replication", "placement", "skewed",
                                  "transfer_chunk_bytes", "fsync", "placement_seed",
                                  "max_replication", "scrub_interval_s",
                                  "scrub_bytes_per_second"}));
  MR_RETURN_IF_ERROR(t.AlignedSize("block_size", &o->block_size));
  MR_RETURN_IF_ERROR(t.Int("replication", 1, kIntMax, &o->replication));
  MR_RETURN_IF_ERROR(t.OneOf("placement", {"random", "hdfs", "spread", "skewed"}, &o->placement));
  TableReader skewed(nullptr, "");
  MR_RETURN_IF_ERROR(t.Sub("skewed", &skewed));
  MR_RETURN_IF_ERROR(skewed.CheckKeys({"hot_node_fraction", "hot_block_fraction"}));
  MR_RETURN_IF_ERROR(skewed.Fraction("hot_node_fraction", &o->skewed.hot_node_fraction));
  MR_RETURN_IF_ERROR(skewed.Fraction("hot_block_fraction", &o->skewed.hot_block_fraction));
  MR_RETURN_IF_ERROR(t.AlignedSize("transfer_chunk_bytes", &o->transfer_chunk_bytes));
  MR_RETURN_IF_ERROR(t.Bool("fsync", &o->fsync));
  MR_RETURN_IF_ERROR(t.Int("placement_seed", 0, kInt64Max, &o->placement_seed));
  MR_RETURN_IF_ERROR(t.Int("max_replication", 1, kIntMax, &o->max_replication));
  if (o->replication > o->max_replication) {
    return Invalid(t.Name("replication") + " must be at most " + t.Name("max_replication") +
                   " (got " + std::to_string(o->replication) + " > " +
                   std::to_string(o->max_replication) + ")");
  }
  MR_RETURN_IF_ERROR(t.Int("scrub_interval_s", 0, int64_t{100} * 365 * 24 * 3600, &o->scrub_interval_s));
  MR_RETURN_IF_ERROR(t.Int("scrub_bytes_per_second", 1, kInt64Max, &o->scrub_bytes_per_second));
  return Status::OK();
}

Status ReadJobs(const TableReader& t, JobOptions* o) {
  MR_RETURN_IF_ERROR(t.CheckKeys({"sort_buffer_bytes", "slowstart", "max_attempts",
                                  "parallel_fetches", "merge_factor", "max_reduces", "map_outputs_poll_ms",
                                  "output_replication",
                                  "fetch_failures_to_rerun", "block_wait_ms",
                                  "recovery_wait_ms", "task_timeout_ms"}));
  MR_RETURN_IF_ERROR(t.Int("sort_buffer_bytes", 1 << 20, int64_t{1} << 40, &o->sort_buffer_bytes));
  MR_RETURN_IF_ERROR(t.Fraction("slowstart", &o->slowstart));
  MR_RETURN_IF_ERROR(t.Int("max_attempts", 1, 100, &o->max_attempts));
  MR_RETURN_IF_ERROR(t.Int("parallel_fetches", 1, 100, &o->parallel_fetches));
  MR_RETURN_IF_ERROR(t.Int("merge_factor", 2, 10000, &o->merge_factor));
  MR_RETURN_IF_ERROR(t.Int("max_reduces", 1, 1000000, &o->max_reduces));
  MR_RETURN_IF_ERROR(t.Int("map_outputs_poll_ms", 1, 60000, &o->map_outputs_poll_ms));
  MR_RETURN_IF_ERROR(t.Int("output_replication", 0, kIntMax, &o->output_replication));
  MR_RETURN_IF_ERROR(t.Int("fetch_failures_to_rerun", 1, 100, &o->fetch_failures_to_rerun));
  MR_RETURN_IF_ERROR(t.Int("block_wait_ms", 0, kInt64Max, &o->block_wait_ms));
  MR_RETURN_IF_ERROR(t.Int("recovery_wait_ms", 0, 600000, &o->recovery_wait_ms));
  MR_RETURN_IF_ERROR(t.Int("task_timeout_ms", 0, kInt64Max, &o->task_timeout_ms));
  return Status::OK();
}

Status ReadTaskLogs(const TableReader& t, TaskLogOptions* o) {
  MR_RETURN_IF_ERROR(t.CheckKeys({"limit_kb", "keep_hours", "keep_jobs"}));
  MR_RETURN_IF_ERROR(t.Int("limit_kb", 4, int64_t{1} << 30, &o->limit_kb));
  MR_RETURN_IF_ERROR(t.Int("keep_hours", 0, int64_t{100} * 365 * 24, &o->keep_hours));
  MR_RETURN_IF_ERROR(t.Int("keep_jobs", 1, 1000000, &o->keep_jobs));
  return Status::OK();
}

// A free-form table of scalars ([scheduler.params], [speculation.params]).
Status ReadParams(const TableReader& t, std::map<std::string, ParamValue>* out) {
  TableReader params(nullptr, "");
  MR_RETURN_IF_ERROR(t.Sub("params", &params));
  if (params.table() == nullptr) return Status::OK();
  for (const auto& [key, node] : *params.table()) {
    std::string name(key.str());
    if (node.is_boolean()) {
      (*out)[name] = node.as_boolean()->get();
    } else if (node.is_integer()) {
      (*out)[name] = node.as_integer()->get();
    } else if (node.is_floating_point()) {
      (*out)[name] = node.as_floating_point()->get();
    } else if (node.is_string()) {
      (*out)[name] = node.as_string()->get();
    } else {
      return Invalid(params.Name(name) + " must be a boolean, integer, float or string");
    }
  }
  return Status::OK();
}

// [scheduler]; [scheduler.params] is free-form but holds scalars only.
Status ReadScheduler(const TableReader& t, SchedulerOptions* o) {
  MR_RETURN_IF_ERROR(t.CheckKeys({"name", "params", "seed"}));
  MR_RETURN_IF_ERROR(t.String("name", &o->name, /*non_empty=*/true));
  MR_RETURN_IF_ERROR(t.Int("seed", 0, kInt64Max, &o->seed));
  return ReadParams(t, &o->params);
}

// [speculation]; the speculator checks its name and parameters.
Status ReadSpeculation(const TableReader& t, SpeculationOptions* o) {
  MR_RETURN_IF_ERROR(t.CheckKeys({"name", "params"}));
  MR_RETURN_IF_ERROR(t.String("name", &o->name, /*non_empty=*/true));
  return ReadParams(t, &o->params);
}

Status ReadLog(const TableReader& t, LogOptions* o) {
  MR_RETURN_IF_ERROR(t.CheckKeys({"level", "max_file_bytes", "max_files"}));
  MR_RETURN_IF_ERROR(t.OneOf("level", {"trace", "debug", "info", "warn", "error"}, &o->level));
  MR_RETURN_IF_ERROR(t.Int("max_file_bytes", 0, kInt64Max, &o->max_file_bytes));
  if (o->max_file_bytes != 0 && o->max_file_bytes < kAlignment) {
    return Invalid(t.Name("max_file_bytes") + " must be 0 or at least " +
                   std::to_string(kAlignment) + " (got " + std::to_string(o->max_file_bytes) + ")");
  }
  return t.Int("max_files", 1, 100, &o->max_files);
}

}  // namespace

// Ids name directories ("./mr-data/<id>"), so they stay path-safe.
bool IsValidWorkerId(const std::string& id) {
  if (id.empty()) return false;
  for (char c : id) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') {
      return false;
    }
  }
  return id != "." && id != "..";
}

namespace {

Status ReadWorker(const TableReader& t, WorkerOptions* o) {
  MR_RETURN_IF_ERROR(t.CheckKeys({"id", "address", "datacenter", "rack", "map_slots",
                                  "reduce_slots", "data_dir", "capacity_bytes", "min_free_bytes",
                                  "http_address"}));
  for (std::string_view key : {"id", "datacenter"}) {
    MR_RETURN_IF_ERROR(t.Require(key));
  }
  MR_RETURN_IF_ERROR(t.String("id", &o->id, /*non_empty=*/true));
  if (!IsValidWorkerId(o->id)) {
    return Invalid(t.Name("id") + " may contain only letters, digits, '-', '_' and '.' (got '" +
                   o->id + "')");
  }
  MR_RETURN_IF_ERROR(t.Address("address", &o->address));
  MR_RETURN_IF_ERROR(t.String("datacenter", &o->datacenter, /*non_empty=*/true));
  MR_RETURN_IF_ERROR(t.String("rack", &o->rack));
  MR_RETURN_IF_ERROR(t.Int("map_slots", 1, kIntMax, &o->map_slots));
  MR_RETURN_IF_ERROR(t.Int("reduce_slots", 0, kIntMax, &o->reduce_slots));
  o->data_dir = "./mr-data/" + o->id;
  MR_RETURN_IF_ERROR(t.String("data_dir", &o->data_dir, /*non_empty=*/true));
  MR_RETURN_IF_ERROR(t.Int("capacity_bytes", 0, kInt64Max, &o->capacity_bytes));
  MR_RETURN_IF_ERROR(t.Int("min_free_bytes", 0, kInt64Max, &o->min_free_bytes));
  MR_RETURN_IF_ERROR(t.Address("http_address", &o->http_address));
  return Status::OK();
}

Status ReadWorkers(const toml::table& root, std::vector<WorkerOptions>* workers) {
  const toml::node* node = root.get("worker");
  if (node == nullptr) return Status::OK();
  const toml::array* array = node->as_array();
  if (array == nullptr) return Invalid("'worker' must be an array of tables ([[worker]])");
  for (size_t i = 0; i < array->size(); ++i) {
    std::string path = "worker[" + std::to_string(i) + "]";
    const toml::table* table = array->get(i)->as_table();
    if (table == nullptr) return Invalid("'" + path + "' must be a table");
    WorkerOptions w;
    MR_RETURN_IF_ERROR(ReadWorker(TableReader(table, path), &w));
    workers->push_back(std::move(w));
  }
  return Status::OK();
}

// Rules that span tables; runs after every table has been read.
Status Validate(const ClusterConfig& c) {
  if (!c.cluster.secret.empty() && !c.cluster.secret_env.empty()) {
    return Invalid("set only one of 'cluster.secret' and 'cluster.secret_env'");
  }
  // 2 × chunk + 64 KiB, compared without overflowing int64.
  int64_t chunk = c.dfs.transfer_chunk_bytes;
  if (c.cluster.max_frame_bytes < kAlignment ||
      (c.cluster.max_frame_bytes - kAlignment) / 2 < chunk) {
    return Invalid("'cluster.max_frame_bytes' must be at least 2 * 'dfs.transfer_chunk_bytes' + " +
                   std::to_string(kAlignment) + " (got " +
                   std::to_string(c.cluster.max_frame_bytes) + ", chunk " + std::to_string(chunk) +
                   ")");
  }
  if (c.cluster.max_reply_bytes < c.cluster.max_frame_bytes) {
    return Invalid("'cluster.max_reply_bytes' must be at least 'cluster.max_frame_bytes' (got " +
                   std::to_string(c.cluster.max_reply_bytes) + " < " +
                   std::to_string(c.cluster.max_frame_bytes) + ")");
  }
  if (c.jobs.output_replication > c.dfs.max_replication) {
    return Invalid("'jobs.output_replication' must be at most 'dfs.max_replication' (got " +
                   std::to_string(c.jobs.output_replication) + " > " +
                   std::to_string(c.dfs.max_replication) + ")");
  }
  std::map<std::string, std::string> address_owner{{c.master.address.ToString(), "master.address"}};
  std::map<std::string, size_t> ids;
  for (size_t i = 0; i < c.workers.size(); ++i) {
    const WorkerOptions& w = c.workers[i];
    if (!ids.emplace(w.id, i).second) return Invalid("duplicate worker id '" + w.id + "'");
    if (w.address.port == 0) continue;  // an allow-list entry without an address
    std::string path = "worker[" + std::to_string(i) + "].address";
    auto [it, inserted] = address_owner.emplace(w.address.ToString(), path);
    if (!inserted) {
      return Invalid("duplicate address '" + it->first + "' (" + it->second + " and " + path + ")");
    }
  }
  if (c.ResolvedSecret().empty()) {
    // Every listener on a reachable address needs the secret, workers too.
    if (!IsLoopbackHost(c.master.address.host)) {
      return Invalid("'cluster.secret' is required when master.address is not a loopback address");
    }
    if (c.master.bind.port != 0 && !IsLoopbackHost(c.master.bind.host)) {
      return Invalid("'cluster.secret' is required when master.bind is not a loopback address");
    }
    for (size_t i = 0; i < c.workers.size(); ++i) {
      if (c.workers[i].address.port != 0 && !IsLoopbackHost(c.workers[i].address.host)) {
        return Invalid("'cluster.secret' is required when worker[" + std::to_string(i) +
                       "].address is not a loopback address");
      }
    }
  }
  // Idle connections are closed after rpc_timeout_ms; a worker's heartbeat
  // must come well before that or its master link would keep breaking.
  if (2 * int64_t{c.cluster.heartbeat_interval_ms} > c.cluster.rpc_timeout_ms) {
    return Invalid("'cluster.heartbeat_interval_ms' must be at most half of 'cluster.rpc_timeout_ms' (got " +
                   std::to_string(c.cluster.heartbeat_interval_ms) + " and " +
                   std::to_string(c.cluster.rpc_timeout_ms) + ")");
  }
  // A transfer that stalls must be let go before the wait's own deadline.
  if (c.cluster.transfer_stall_ms >= c.cluster.rpc_timeout_ms) {
    return Invalid("'cluster.transfer_stall_ms' must be below 'cluster.rpc_timeout_ms' (got " +
                   std::to_string(c.cluster.transfer_stall_ms) + " and " +
                   std::to_string(c.cluster.rpc_timeout_ms) + ")");
  }
  if (c.cluster.max_unauthenticated_per_address > c.cluster.max_unauthenticated_connections) {
    return Invalid("'cluster.max_unauthenticated_per_address' must be at most "
                   "'cluster.max_unauthenticated_connections' (got " +
                   std::to_string(c.cluster.max_unauthenticated_per_address) + " and " +
                   std::to_string(c.cluster.max_unauthenticated_connections) + ")");
  }
  return Status::OK();
}

Status Decode(const toml::table& root, ClusterConfig* c) {
  TableReader top(&root, "");
  MR_RETURN_IF_ERROR(top.CheckKeys({"cluster", "master", "dfs", "scheduler", "speculation", "jobs", "task_logs", "log", "worker"}));
  TableReader t(nullptr, "");
  MR_RETURN_IF_ERROR(top.Sub("cluster", &t));
  MR_RETURN_IF_ERROR(ReadCluster(t, &c->cluster));
  MR_RETURN_IF_ERROR(top.Sub("master", &t));
  MR_RETURN_IF_ERROR(ReadMaster(t, &c->master));
  MR_RETURN_IF_ERROR(top.Sub("dfs", &t));
  MR_RETURN_IF_ERROR(ReadDfs(t, &c->dfs));
  MR_RETURN_IF_ERROR(top.Sub("scheduler", &t));
  MR_RETURN_IF_ERROR(ReadScheduler(t, &c->scheduler));
  MR_RETURN_IF_ERROR(top.Sub("speculation", &t));
  MR_RETURN_IF_ERROR(ReadSpeculation(t, &c->speculation));
  MR_RETURN_IF_ERROR(top.Sub("jobs", &t));
  MR_RETURN_IF_ERROR(ReadJobs(t, &c->jobs));
  MR_RETURN_IF_ERROR(top.Sub("task_logs", &t));
  MR_RETURN_IF_ERROR(ReadTaskLogs(t, &c->task_logs));
  MR_RETURN_IF_ERROR(top.Sub("log", &t));
  MR_RETURN_IF_ERROR(ReadLog(t, &c->log));
  MR_RETURN_IF_ERROR(ReadWorkers(root, &c->workers));
  if (c->cluster.tls.empty()) {
    // Default: encrypt between datacenters as soon as a link can leave the host.
    bool loopback = IsLoopbackHost(c->master.address.host);
    for (const WorkerOptions& w : c->workers) loopback = loopback && IsLoopbackHost(w.address.host);
    c->cluster.tls = loopback ? "off" : "inter-dc";
  }
  return Validate(*c);
}

}  // namespace

std::string ClusterConfig::ResolvedSecret() const {
  if (!cluster.secret.empty()) return cluster.secret;
  if (cluster.secret_env.empty()) return "";
  const char* value = std::getenv(cluster.secret_env.c_str());
  return value == nullptr ? "" : value;
}

const WorkerOptions* ClusterConfig::FindWorker(const std::string& id) const {
  for (const WorkerOptions& w : workers) {
    if (w.id == id) return &w;
  }
  return nullptr;
}

Result<ClusterConfig> ParseClusterConfig(const std::string& toml_text, const std::string& origin) {
  toml::table root;
  try {
    root = toml::parse(toml_text, origin);
  } catch (const toml::parse_error& e) {
    std::string description(e.description());
    for (char& c : description) {
      if (c == '\n') c = ' ';
    }
    return Status::InvalidArgument(origin + ":" + std::to_string(e.source().begin.line) + ":" +
                                   std::to_string(e.source().begin.column) + ": " + description);
  }
  ClusterConfig config;
  Status s = Decode(root, &config);
  if (!s.ok()) return s.WithContext(origin);
  return config;
}

Result<ClusterConfig> LoadClusterConfig(const std::string& path) {
  auto fail = [&path](int err) {
    std::string m = "cannot read cluster file '" + path + "': " + std::strerror(err);
    return err == ENOENT ? Status::NotFound(m) : Status::IOError(m);
  };
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return fail(errno);
  std::string text;
  char buf[8192];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f)) > 0) text.append(buf, n);
  int err = std::ferror(f) ? errno : 0;
  std::fclose(f);
  if (err != 0) return fail(err);
  return ParseClusterConfig(text, std::filesystem::path(path).filename().string());
}

}  // namespace mr

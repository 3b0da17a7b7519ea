#include "master/master.h"

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <set>

#include <spdlog/spdlog.h>

#include "common/metrics.h"
#include "common/tls.h"
#include "master/master_internal.h"

namespace mr::master {
namespace {


// Where handlers are registered: the server, and the namespace whose
// mutations every reply waits for.
struct Handlers {
  RpcServer& server;
  dfs::Namespace& ns;
};

// A reply, once its handler ran: sent only when every namespace mutation
// made so far is durable (group commit, dfs/group_commit.h), so no client
// hears of a change, its own or one it read, that a crash could undo.
// Failed calls wait too: "already exists" may speak of an unsynced file.
awaitable<Status> AfterSync(dfs::Namespace& ns, Status handled) {
  Status durable = co_await ns.Durable();
  co_return durable.ok() ? handled : durable;
}

// Registers a synchronous handler: the master's state is touched only from
// its one thread, so handlers need not suspend (but for their reply's sync).
template <typename Request, typename Reply>
void Unary(Handlers h, const std::string& method, std::function<Status(const Request&, Reply*)> fn) {
  h.server.HandleUnary<Request, Reply>(
      method, [fn = std::move(fn), &ns = h.ns](const Request& req, Reply* reply, ServerCall&) -> awaitable<Status> {
        co_return co_await AfterSync(ns, fn(req, reply));
      });
}

// A worker's own method (register, heartbeat): on a connection whose peer
// proved a certificate, the worker id the request speaks for must be the
// certificate's name (the TLS handshake checked that the certificate names
// ClaimedCertName(peer_name)). With the shared secret alone every member
// holds the cluster's one key and anyone may speak for any worker: nothing
// to check (docs/tls.md, "What a certificate proves").
template <typename Request, typename Reply>
void WorkerUnary(Handlers h, const std::string& method,
                 std::function<const std::string&(const Request&)> worker_id,
                 std::function<Status(const Request&, Reply*)> fn) {
  h.server.HandleUnary<Request, Reply>(
      method, [worker_id = std::move(worker_id), fn = std::move(fn), method, &ns = h.ns](
                  const Request& req, Reply* reply, ServerCall& call) -> awaitable<Status> {
        const std::string& id = worker_id(req);
        if (call.conn.encrypted()) {
          const std::string holder = ClaimedCertName(call.conn.peer_name());
          if (holder != id) {
            const Status refused = Status::PermissionDenied(
                "a peer with the certificate of '" + holder + "' cannot speak for worker '" + id +
                "' (" + method + " from " + call.conn.remote_endpoint() + ")");
            spdlog::warn("{}", refused.message());
            co_return refused;
          }
        }
        co_return co_await AfterSync(ns, fn(req, reply));
      });
}

}  // namespace

Master::Master(const ClusterConfig& config, asio::io_context& io, const Clock* clock)
    : config_(config), io_(io), clock_(clock) {}
Master::~Master() = default;

Result<std::unique_ptr<Master>> Master::Create(const ClusterConfig& config, asio::io_context& io,
                                               const Clock* clock) {
  if ((!IsLoopbackHost(config.master.address.host) ||
       !IsLoopbackHost(config.master.listen_address().host)) &&
      config.ResolvedSecret().empty()) {
    return Status::InvalidArgument("refusing to listen on non-loopback address " +
                                   config.master.address.ToString() + " without a cluster secret");
  }
  std::unique_ptr<Master> m(new Master(config, io, clock));
  // Configuration first (the scheduler and its parameters), so a bad cluster
  // file is reported before any data directory is touched.
  sched::SchedulerParams sched_params;
  for (const auto& [key, value] : config.scheduler.params) {
    sched_params[key] = std::visit([](const auto& v) { return sched::ParamValue(v); }, value);
  }
  sched::SchedulerEnv env;
  env.heartbeat_ms = config.cluster.heartbeat_interval_ms;
  env.seed = static_cast<uint64_t>(config.scheduler.seed);
  auto scheduler = sched::MakeScheduler(config.scheduler.name, sched_params, env);
  if (!scheduler.ok()) return scheduler.status().WithContext("[scheduler]");
  sched::SchedulerParams spec_params;
  for (const auto& [key, value] : config.speculation.params) {
    spec_params[key] = std::visit([](const auto& v) { return sched::ParamValue(v); }, value);
  }
  auto speculator = sched::MakeSpeculator(config.speculation.name, spec_params);
  if (!speculator.ok()) return speculator.status().WithContext("[speculation]");
  std::error_code ec;
  std::filesystem::create_directories(config.master.data_dir, ec);
  if (ec) return Status::IOError("cannot create '" + config.master.data_dir + "': " + ec.message());
  MR_ASSIGN_OR_RETURN(m->namespace_, dfs::Namespace::Open(config.master.data_dir + "/namespace"));
  MR_ASSIGN_OR_RETURN(m->epoch_, m->namespace_->NextEpoch());
  m->namespace_->StartGroupCommit(io.get_executor());
  if (m->epoch_ >= (uint64_t{1} << (64 - kLeaseCounterBits))) {
    return Status::FailedPrecondition("master epoch " + std::to_string(m->epoch_) +
                                      " does not fit in a lease id");
  }
  dfs::PlacementParams params{config.dfs.skewed.hot_node_fraction,
                              config.dfs.skewed.hot_block_fraction};
  MR_ASSIGN_OR_RETURN(m->placement_, dfs::MakePlacementPolicy(config.dfs.placement, params));
  m->rng_.seed(config.dfs.placement_seed != 0
                   ? config.dfs.placement_seed
                   : static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count()));
  // Every block of every file is known from the namespace; replicas arrive
  // with the block reports.
  m->namespace_->ForEachFile([&](const std::string&, const pb::INode& file) {
    for (const auto& b : file.blocks()) {
      BlockState& st = m->blocks_[b.id()];
      st.bytes = b.bytes();
      st.replication = file.replication();
      m->complete_blocks_ += !st.complete;
      st.complete = true;
    }
  });
  Master* self = m.get();
  DfsAccess dfs;
  dfs.ns = m->namespace_.get();
  dfs.replicas = [self](uint64_t block) {
    auto it = self->blocks_.find(block);
    return it == self->blocks_.end() ? std::vector<std::string>() : it->second.replicas.Names();
  };
  dfs.remove = [self](const std::string& path, bool recursive) {
    std::vector<uint64_t> freed;
    MR_RETURN_IF_ERROR(self->namespace_->Delete(path, recursive, &freed));
    self->ForgetBlocks(freed);
    return Status::OK();
  };
  dfs.copy = [self](uint64_t block, const std::string& from, const std::string& to) {
    pb::TransferCommand cmd;
    cmd.set_block_id(block);
    *cmd.add_targets() = self->Location(to);
    self->workers_.at(from)->pending_transfers.push_back(std::move(cmd));
  };
  dfs.check_replication = [self](int replication) { return self->CheckReplication(replication); };
  MR_ASSIGN_OR_RETURN(m->jobs_, JobTracker::Create(config, std::move(scheduler).value(),
                                                   std::move(speculator).value(), std::move(dfs), clock));
  // The workers this master admitted before (labels, decommissioning
  // state), then the complete [[worker]] entries it has not seen yet: known,
  // not live, until they register.
  MR_ASSIGN_OR_RETURN(auto known, m->namespace_->Workers());
  for (const pb::KnownWorker& k : known) m->KnowWorker(k);
  for (const auto& w : config.workers) {
    if (w.address.port == 0 || m->workers_.count(w.id)) continue;
    pb::KnownWorker k;
    pb::WorkerInfo* info = k.mutable_info();
    info->set_id(w.id);
    info->set_address(w.address.ToString());
    info->set_datacenter(w.datacenter);
    info->set_rack(w.rack);
    info->set_map_slots(w.map_slots);
    info->set_reduce_slots(w.reduce_slots);
    info->set_capacity_bytes(w.capacity_bytes);
    m->KnowWorker(k);
  }
  return m;
}

Status Master::Start() {
  server_ = std::make_unique<RpcServer>(io_.get_executor(), RpcOptions::FromConfig(config_, "master"),
                                        "master");
  RegisterHandlers();
  MR_RETURN_IF_ERROR(server_->Listen(config_.master.listen_address()));
  MR_RETURN_IF_ERROR(StartHttp());
  server_->Start();
  loop_lag_ = WatchLoopLag(io_.get_executor(), metrics_.registry(), "the master");
  started_ = Now();
  asio::co_spawn(io_, Tick(), asio::detached);
  if (jobs_->scheduler().tick_ms() > 0) asio::co_spawn(io_, PolicyTick(), asio::detached);
  spdlog::info(
      "master '{}' listening on {}:{} ({} files, {} blocks, placement '{}', scheduler '{}', "
      "speculator '{}', epoch {})",
      config_.cluster.name, config_.master.listen_address().host, server_->port(), namespace_->file_count(),
      blocks_.size(), placement_->name(), jobs_->scheduler().name(), jobs_->speculator().name(),
      epoch_);
  return Status::OK();
}

void Master::Stop() {
  stopped_ = true;
  if (server_) server_->Stop();
  if (http_) http_->Stop();
  if (loop_lag_) loop_lag_->Stop();
}

uint16_t Master::port() const { return server_ ? server_->port() : 0; }

void Master::RegisterHandlers() {
  const Handlers s{*server_, *namespace_};
  WorkerUnary<pb::RegisterRequest, pb::RegisterReply>(
      s, "cluster.Register", [](auto& q) -> const std::string& { return q.worker().id(); },
      [this](auto& q, auto* r) { return Register(q, r); });
  WorkerUnary<pb::BlockReportRequest, pb::BlockReportReply>(
      s, "cluster.BlockReport", [](auto& q) -> const std::string& { return q.worker_id(); },
      [this](auto& q, auto* r) { return BlockReport(q, r); });
  WorkerUnary<pb::HeartbeatRequest, pb::HeartbeatReply>(
      s, "cluster.Heartbeat", [](auto& q) -> const std::string& { return q.worker_id(); },
      [this](auto& q, auto* r) { return Heartbeat(q, r); });
  Unary<pb::Empty, pb::ClusterStatusReply>(s, "cluster.Status", [this](auto&, auto* r) { return ClusterStatus(r); });
  Unary<pb::DecommissionRequest, pb::Empty>(s, "cluster.Decommission", [this](auto& q, auto*) { return Decommission(q.worker_id(), true); });
  Unary<pb::DecommissionRequest, pb::Empty>(s, "cluster.Recommission", [this](auto& q, auto*) { return Decommission(q.worker_id(), false); });
  Unary<pb::PathRequest, pb::Empty>(s, "dfs.Mkdir", [this](auto& q, auto*) { return Mkdir(q); });
  Unary<pb::PathRequest, pb::ListReply>(s, "dfs.List", [this](auto& q, auto* r) { return List(q, r); });
  Unary<pb::LocateRequest, pb::StatReply>(s, "dfs.Stat", [this](auto& q, auto* r) { return Stat(q, r); });
  Unary<pb::PathRequest, pb::Empty>(s, "dfs.Delete", [this](auto& q, auto*) { return Delete(q); });
  Unary<pb::RenameRequest, pb::Empty>(s, "dfs.Rename", [this](auto& q, auto*) { return Rename(q); });
  Unary<pb::SetReplicationRequest, pb::SetReplicationReply>(
      s, "dfs.SetReplication", [this](auto& q, auto* r) { return SetReplication(q, r); });
  Unary<pb::CreateFileRequest, pb::CreateFileReply>(s, "dfs.Create", [this](auto& q, auto* r) { return Create(q, r); });
  Unary<pb::AddBlockRequest, pb::AddBlockReply>(s, "dfs.AddBlock", [this](auto& q, auto* r) { return AddBlock(q, r); });
  Unary<pb::CompleteBlockRequest, pb::Empty>(s, "dfs.CompleteBlock", [this](auto& q, auto*) { return CompleteBlock(q); });
  Unary<pb::CompleteFileRequest, pb::Empty>(s, "dfs.CompleteFile", [this](auto& q, auto*) { return CompleteFile(q); });
  Unary<pb::AbandonFileRequest, pb::Empty>(s, "dfs.AbandonFile", [this](auto& q, auto*) { return AbandonFile(q); });
  Unary<pb::BadReplicaRequest, pb::Empty>(s, "dfs.BadReplica", [this](auto& q, auto*) { return BadReplica(q); });
  RegisterJobHandlers();
}

void Master::RegisterJobHandlers() {
  const Handlers s{*server_, *namespace_};
  JobTracker& j = *jobs_;
  Unary<pb::JobSpec, pb::SubmitJobReply>(s, "job.Submit", [&j](auto& q, auto* r) { return j.Submit(q, r); });
  Unary<pb::JobIdRequest, pb::JobRecord>(s, "job.Show", [&j](auto& q, auto* r) { return j.Show(q.job_id(), q.summary(), r); });
  Unary<pb::Empty, pb::JobListReply>(s, "job.List", [&j](auto&, auto* r) { return j.List(r); });
  Unary<pb::JobIdRequest, pb::Empty>(s, "job.Kill", [&j](auto& q, auto*) { return j.Kill(q.job_id()); });
  Unary<pb::Empty, pb::HistoryReply>(s, "job.History", [&j](auto&, auto* r) { return j.History(r); });
  Unary<pb::MapOutputsRequest, pb::MapOutputsReply>(s, "job.MapOutputs", [&j](auto& q, auto* r) { return j.MapOutputs(q, r); });
  Unary<pb::FetchFailedRequest, pb::Empty>(s, "job.FetchFailed", [&j](auto& q, auto*) { return j.FetchFailed(q); });
  Unary<pb::SchedulerChoice, pb::SchedulerChoice>(s, "sched.Set", [this, &j](auto& q, auto* r) {
    Status st = j.SetScheduler(q, r);
    // A policy with a clock of its own (Joint) needs the tick running.
    if (st.ok() && j.scheduler().tick_ms() > 0 && !policy_tick_running_) {
      asio::co_spawn(io_, PolicyTick(), asio::detached);
    }
    return st;
  });
  Unary<pb::Empty, pb::SchedulerChoice>(s, "sched.Show", [&j](auto&, auto* r) {
    j.ShowScheduler(r);
    return Status::OK();
  });
}

// ---------------------------------------------------------------- membership

// Register is in membership.cc.

Status Master::Heartbeat(const pb::HeartbeatRequest& req, pb::HeartbeatReply* reply) {
  auto it = workers_.find(req.worker_id());
  if (it == workers_.end() || !it->second->live) {
    reply->set_reregister(true);
    return Status::OK();
  }
  WorkerState& w = *it->second;
  Heard(w);
  w.used_bytes = req.used_bytes();
  if (req.membership_version() != membership_version_) {
    reply->set_members_delta(FillMembers(req.membership_version(), req.member_deltas(),
                                         reply->mutable_members(), reply->mutable_dead_members()));
    reply->set_membership_version(membership_version_);
  }
  w.free_bytes = req.free_bytes();
  if (req.disk_problem() != w.disk_problem) {
    if (req.disk_problem().empty()) {
      spdlog::info("worker {} can write again: it takes blocks and tasks again", w.info.id());
    } else if (w.disk_problem.empty()) {
      spdlog::warn("worker {} cannot write ({}): no new blocks, copies or tasks go there",
                   w.info.id(), req.disk_problem());
    }
    w.disk_problem = req.disk_problem();
  }
  for (const auto& b : req.received()) {
    if (auto it = blocks_.find(b.id()); it != blocks_.end()) {
      AddReplica(b.id(), it->second, w);
    } else {
      reply->add_delete_blocks(b.id());
    }
  }
  for (uint64_t id : req.quarantined()) {
    if (blocks_.count(id)) {
      NoteCorrupt(id, w.info.id(), "a bad chunk found by the worker");
    } else {
      reply->add_delete_blocks(id);
    }
  }
  for (uint64_t id : req.removed()) RemoveReplica(id, w.info.id());
  for (uint64_t id : w.pending_deletes) reply->add_delete_blocks(id);
  for (auto& t : w.pending_transfers) *reply->add_transfers() = std::move(t);
  for (auto& r : w.pending_repairs) *reply->add_repairs() = std::move(r);
  w.pending_deletes.clear();
  w.pending_transfers.clear();
  w.pending_repairs.clear();
  jobs_->Heartbeat(req, reply);
  return Status::OK();
}

awaitable<void> Master::Tick() {
  asio::steady_timer timer(io_);
  while (!stopped_) {
    timer.expires_after(std::chrono::milliseconds(config_.cluster.heartbeat_interval_ms));
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (stopped_) break;
    const auto start = std::chrono::steady_clock::now();
    auto step_start = start;
    auto timed = [&](std::string_view step, void (Master::*run)()) {
      (this->*run)();
      const auto end = std::chrono::steady_clock::now();
      metrics_.HousekeepingStep(step, std::chrono::duration<double>(end - step_start).count());
      step_start = end;
    };
    timed("liveness", &Master::CheckLiveness);
    timed("decommissions", &Master::CheckDecommissions);
    timed("leases", &Master::ExpireLeases);
    timed("repairs", &Master::ScheduleRepairs);
    timed("replication", &Master::ScheduleReplication);
    metrics_.Housekeeping(std::chrono::duration<double>(step_start - start).count());
  }
}

// The policy's own clock (scheduler.h: tick_ms), for the Joint Scheduler's
// block routing.
// Ends when the hosted policy has no clock (after `mrctl scheduler set`).
awaitable<void> Master::PolicyTick() {
  policy_tick_running_ = true;
  asio::steady_timer timer(io_);
  while (!stopped_ && jobs_->scheduler().tick_ms() > 0) {
    timer.expires_after(std::chrono::milliseconds(jobs_->scheduler().tick_ms()));
    co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    if (stopped_) break;
    jobs_->Tick();
  }
  policy_tick_running_ = false;
}

void Master::CheckLiveness() {
  const auto limit = std::chrono::milliseconds(int64_t{config_.cluster.heartbeat_interval_ms} *
                                               config_.cluster.dead_after_missed_heartbeats);
  const int64_t cutoff = clock_->NowMs() - limit.count();  // live and silent since before it: dead
  std::vector<WorkerState*> dead;
  for (size_t n = 0; n < heard_ms_.size(); ++n) {
    if (heard_ms_[n] == kNotLive || heard_ms_[n] >= cutoff) continue;
    const std::string& id = NodeName(static_cast<NodeNum>(n));
    spdlog::warn("worker {} declared dead: no heartbeat for {} ms; the other workers let go of "
                 "their transfers to it at their next heartbeat", id, limit.count());
    dead.push_back(workers_.at(id).get());
  }
  if (dead.empty()) return;
  MarkDead(dead);
  for (WorkerState* w : dead) {
    w->declared_dead = true;
    MemberChanged(*w);  // every worker's next heartbeat carries it
  }
}

Status Master::ClusterStatus(pb::ClusterStatusReply* reply) {
  reply->set_cluster_name(config_.cluster.name);
  reply->set_placement(placement_->name());
  reply->set_scheduler(jobs_->scheduler().name());
  const auto now = Now();
  for (const auto& id : worker_order_) {
    const WorkerState& st = *workers_.at(id);
    pb::WorkerStatus* ws = reply->add_workers();
    ws->set_admin_state(st.admin_state);
    *ws->mutable_worker() = st.info;
    ws->set_live(st.live);
    ws->set_blocks(st.block_count);
    ws->set_used_bytes(st.used_bytes);
    ws->set_free_bytes(st.free_bytes);
    ws->set_disk_problem(st.disk_problem);
    int maps = 0, reduces = 0;
    jobs_->SlotsInUse(id, &maps, &reduces);
    ws->set_running_maps(maps);
    ws->set_running_reduces(reduces);
    ws->set_last_heartbeat_ms_ago(
        st.last_heartbeat.time_since_epoch().count() == 0
            ? -1
            : std::chrono::duration_cast<std::chrono::milliseconds>(now - st.last_heartbeat).count());
  }
  const BlockCounts blocks = CountBlocks();  // copies on decommissioning workers do not count
  reply->set_files(namespace_->file_count());
  reply->set_blocks(blocks.complete);
  reply->set_under_replicated_blocks(blocks.under_replicated);
  return Status::OK();
}

// ---------------------------------------------------------------- replicas

// AddReplica, RemoveReplica, ForgetBlocks and MarkDead are in block_map.cc.

// A reader found a bad chunk in a replica: kept as corrupt, repaired later.
Status Master::BadReplica(const pb::BadReplicaRequest& req) {
  NoteCorrupt(req.block_id(), req.node_id(), "reported by a reader: " + req.reason());
  return Status::OK();
}

std::vector<dfs::PlacementNode> Master::LiveNodes() const {
  std::vector<dfs::PlacementNode> nodes;
  for (const auto& id : placement_order_) {
    const WorkerState& st = *workers_.at(id);
    if (!st.live || !st.disk_problem.empty()) continue;  // a worker that cannot write takes nothing
    if (!st.admin_state.empty()) continue;               // nor does a decommissioning one
    // Room: what its capacity_bytes leaves, and what its file system has
    // free (its last heartbeat); placement skips a node without a block's room.
    const int64_t cap = st.info.capacity_bytes();
    int64_t room = cap > 0 ? std::max<int64_t>(0, cap - st.used_bytes) : -1;
    if (st.free_bytes >= 0) room = room < 0 ? st.free_bytes : std::min(room, st.free_bytes);
    nodes.push_back({id, st.info.datacenter(), st.info.rack(), room});
  }
  return nodes;
}

pb::ReplicaLocation Master::Location(const std::string& node) const {
  const pb::WorkerInfo& info = workers_.at(node)->info;
  pb::ReplicaLocation loc;
  loc.set_node_id(info.id());
  loc.set_address(info.address());
  loc.set_datacenter(info.datacenter());
  loc.set_rack(info.rack());
  return loc;
}

// Nearest first from `reader` (same node, same rack, same datacenter, other
// datacenters); without a reader, rotated by `salt` so readers spread load.
std::vector<std::string> Master::SortByDistance(std::vector<std::string> nodes,
                                                const std::string& reader, uint64_t salt) const {
  return SortByDistance(std::move(nodes), reader, "", "", salt);
}

// A reader that is no worker but names its datacenter (and rack): rotated
// by `salt` (so readers spread load over equally near replicas), then
// stably nearest first (same rack, same datacenter, other datacenters).
// Other datacenters keep that order here; the reader ranks them by the
// read rates it measured (dfs/link_rates.h).
std::vector<std::string> Master::SortByDistance(std::vector<std::string> nodes,
                                                const std::string& reader,
                                                const std::string& reader_dc,
                                                const std::string& reader_rack,
                                                uint64_t salt) const {
  std::sort(nodes.begin(), nodes.end());
  auto r = workers_.find(reader);
  if (r == workers_.end()) {
    if (!nodes.empty()) std::rotate(nodes.begin(), nodes.begin() + salt % nodes.size(), nodes.end());
    if (reader_dc.empty()) return nodes;
    auto distance = [&](const std::string& n) {
      const pb::WorkerInfo& i = workers_.at(n)->info;
      if (i.datacenter() != reader_dc) return 3;
      return (!reader_rack.empty() && i.rack() == reader_rack) ? 1 : 2;
    };
    std::stable_sort(nodes.begin(), nodes.end(),
                     [&](const auto& a, const auto& b) { return distance(a) < distance(b); });
    return nodes;
  }
  const pb::WorkerInfo& ri = r->second->info;
  auto distance = [&](const std::string& n) {
    const pb::WorkerInfo& i = workers_.at(n)->info;
    if (n == reader) return 0;
    if (i.datacenter() != ri.datacenter()) return 3;
    return (!ri.rack().empty() && i.rack() == ri.rack()) ? 1 : 2;
  };
  std::stable_sort(nodes.begin(), nodes.end(),
                   [&](const auto& a, const auto& b) { return distance(a) < distance(b); });
  return nodes;
}

}  // namespace mr::master

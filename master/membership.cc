// Membership on the Master: which workers it admits, what it remembers of
// them, and decommissioning (docs/dfs.md, "Adding and retiring workers").
//
// A worker registers with its id, advertised address, datacenter and rack
// labels, slots, and its copy of the settings every process must share
// (SharedSettings). The master admits it when
//   - the settings agree with its own (else one line naming the key);
//   - the id and the address are well formed, and the address is one others
//     can connect to (not a wildcard);
//   - the cluster file has no [[worker]] entries, or has one with this id
//     whose labels (and address, if it gives one) are the worker's: then
//     the entries are an allow-list;
//   - no other process holds the id: a live worker with this id at another
//     address makes the newcomer's registration fail (the same worker
//     restarting from the same address replaces itself);
//   - a worker known from before keeps its datacenter and rack (placement
//     and the scheduler's topology were built on them).
// An admitted worker is persisted (KnownWorker under "w:<id>" in the
// namespace RocksDB) before it is live, so a restarted master knows its
// labels and its decommissioning state before it reports in.
//
// Decommissioning, as HDFS does it: `decommissioning` workers take no new
// block, copy or task; their replicas stop counting toward a block's
// replication, so re-replication copies every block they hold to other
// workers (restoring datacenter spread first); running tasks finish. A
// worker becomes `decommissioned` once every block it holds has its
// replication on in-service workers and it runs no task; it may then be
// stopped without a block becoming under-replicated. Recommissioning puts
// it back in service (surplus copies are trimmed as usual).
#include <algorithm>
#include <cctype>
#include <sstream>

#include <spdlog/spdlog.h>

#include "common/tls.h"
#include "master/master.h"
#include "master/master_internal.h"

namespace mr::master {
namespace {

// "w2" < "w10": runs of digits compare as numbers.
bool NaturalLess(const std::string& a, const std::string& b) {
  size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    if (std::isdigit(static_cast<unsigned char>(a[i])) && std::isdigit(static_cast<unsigned char>(b[j]))) {
      size_t ei = i, ej = j;
      while (ei < a.size() && std::isdigit(static_cast<unsigned char>(a[ei]))) ++ei;
      while (ej < b.size() && std::isdigit(static_cast<unsigned char>(b[ej]))) ++ej;
      const std::string na = a.substr(i, ei - i), nb = b.substr(j, ej - j);
      if (na.size() != nb.size()) return na.size() < nb.size();
      if (na != nb) return na < nb;
      i = ei, j = ej;
    } else {
      if (a[i] != b[j]) return a[i] < b[j];
      ++i, ++j;
    }
  }
  return a.size() - i < b.size() - j || (a.size() - i == b.size() - j && a < b);
}

std::string Labels(const std::string& dc, const std::string& rack) {
  return "datacenter '" + dc + "' rack '" + rack + "'";
}

template <typename T>
Status Agree(const std::string& worker, const char* key, const T& theirs, const T& ours) {
  if (theirs == ours) return Status::OK();
  std::ostringstream m;
  m << "worker '" << worker << "' disagrees with the master on '" << key << "': it has " << theirs
    << ", the master " << ours << " (every process needs the same cluster file)";
  return Status::FailedPrecondition(m.str());
}

}  // namespace

bool Master::Draining(const std::string& node) const {
  auto it = workers_.find(node);
  return it != workers_.end() && !it->second->admin_state.empty();
}

void Master::SetAdminState(WorkerState& w, std::string state) {
  w.admin_state = std::move(state);
  NoteAdminState(w);
}

// Makes a worker known (not live): at start for the stored ones and the
// complete [[worker]] entries, and at the first registration of a new one.
Master::WorkerState& Master::KnowWorker(const pb::KnownWorker& known) {
  const std::string& id = known.info().id();
  auto& slot = workers_[id];
  if (!slot) {
    slot = std::make_unique<WorkerState>();
    worker_order_.insert(std::upper_bound(worker_order_.begin(), worker_order_.end(), id, NaturalLess), id);
    placement_order_.insert(std::upper_bound(placement_order_.begin(), placement_order_.end(), id), id);
  }
  slot->info = known.info();
  slot->number = NodeNumber(id);
  SetAdminState(*slot, known.admin_state());
  MembershipChanged(*slot);
  jobs_->AddWorker(known.info());
  jobs_->SetDraining(id, !known.admin_state().empty());
  return *slot;
}

void Master::MembershipChanged(WorkerState& w) {
  if (auto tls = ProcessTls()) tls->LearnNode(w.info.address(), w.info.datacenter());
  MemberChanged(w);
}

void Master::MemberChanged(WorkerState& w) {
  membership_version_ = std::max(membership_version_ + 1, epoch_ << 32);
  if (w.member_version != 0) member_changes_.erase(w.member_version);
  w.member_version = membership_version_;
  member_changes_.emplace(membership_version_, w.info.id());
}

bool Master::FillMembers(uint64_t theirs, bool deltas,
                         google::protobuf::RepeatedPtrField<pb::WorkerInfo>* members,
                         google::protobuf::RepeatedPtrField<std::string>* dead) const {
  auto add = [&](const WorkerState& w) {
    *members->Add() = w.info;
    if (w.declared_dead) *dead->Add() = w.info.id();
  };
  // Versions of this run are at least epoch_ << 32; one from an earlier run
  // (or none) says nothing of what the worker knows.
  const bool delta =
      deltas && theirs != 0 && theirs >= (epoch_ << 32) && theirs <= membership_version_;
  if (!delta) {
    for (const std::string& id : worker_order_) add(*workers_.at(id));
    return false;
  }
  for (auto it = member_changes_.upper_bound(theirs); it != member_changes_.end(); ++it) {
    add(*workers_.at(it->second));
  }
  return true;
}

Status Master::PersistWorker(const WorkerState& w) {
  pb::KnownWorker k;
  *k.mutable_info() = w.info;
  k.set_admin_state(w.admin_state);
  return namespace_->PutWorker(k);
}

// Every rule a registration must pass (see the file comment); the first
// broken one, as one line.
Status Master::Admit(const pb::RegisterRequest& req) const {
  const pb::WorkerInfo& wi = req.worker();
  const std::string& id = wi.id();
  if (!IsValidWorkerId(id)) {
    return Status::InvalidArgument("worker id '" + id +
                                   "' may contain only letters, digits, '-', '_' and '.'");
  }
  const pb::SharedSettings& s = req.settings();
  MR_RETURN_IF_ERROR(Agree(id, "cluster.name", s.cluster_name(), config_.cluster.name));
  MR_RETURN_IF_ERROR(Agree(id, "dfs.block_size", s.block_size(), config_.dfs.block_size));
  MR_RETURN_IF_ERROR(Agree(id, "dfs.transfer_chunk_bytes", s.transfer_chunk_bytes(),
                           config_.dfs.transfer_chunk_bytes));
  MR_RETURN_IF_ERROR(Agree(id, "cluster.max_frame_bytes", s.max_frame_bytes(),
                           config_.cluster.max_frame_bytes));
  MR_RETURN_IF_ERROR(Agree(id, "cluster.heartbeat_interval_ms", s.heartbeat_interval_ms(),
                           config_.cluster.heartbeat_interval_ms));
  MR_RETURN_IF_ERROR(Agree(id, "cluster.rpc_timeout_ms", s.rpc_timeout_ms(),
                           config_.cluster.rpc_timeout_ms));
  if (wi.datacenter().empty()) {
    return Status::InvalidArgument("worker '" + id + "' has no datacenter label");
  }
  auto address = ParseHostPort(wi.address());
  if (!address.ok()) {
    return Status::InvalidArgument("worker '" + id + "' advertises '" + wi.address() +
                                   "': " + address.status().message());
  }
  if (address->host == "0.0.0.0" || address->host == "::") {
    return Status::InvalidArgument("worker '" + id + "' advertises " + wi.address() +
                                   ", which no one can connect to: advertise an address the "
                                   "master, clients and other workers reach (--advertise)");
  }
  if (wi.map_slots() < 1 || wi.reduce_slots() < 0 || wi.capacity_bytes() < 0) {
    return Status::InvalidArgument("worker '" + id + "' has bad slots or capacity");
  }
  if (!config_.workers.empty()) {
    const WorkerOptions* entry = config_.FindWorker(id);
    if (entry == nullptr) {
      return Status::PermissionDenied("worker '" + id +
                                      "' is not in the allow-list: the master's cluster file has "
                                      "[[worker]] entries and none has this id");
    }
    if (entry->datacenter != wi.datacenter() || entry->rack != wi.rack()) {
      return Status::PermissionDenied("worker '" + id + "' claims " +
                                      Labels(wi.datacenter(), wi.rack()) +
                                      ", but its [[worker]] entry says " +
                                      Labels(entry->datacenter, entry->rack));
    }
    if (entry->address.port != 0 && entry->address.ToString() != wi.address()) {
      return Status::PermissionDenied("worker '" + id + "' registers from " + wi.address() +
                                      ", but its [[worker]] entry says " +
                                      entry->address.ToString());
    }
  }
  auto it = workers_.find(id);
  if (it == workers_.end()) {
    if (!FindNodeNumber(id) && NodeCount() >= kMaxNodes) {
      return Status::FailedPrecondition("worker '" + id + "' would be the master's " +
                                        std::to_string(kMaxNodes + 1) +
                                        "th worker id, past its limit (replica_list.h)");
    }
    return Status::OK();
  }
  const WorkerState& known = *it->second;
  if (known.live && known.info.address() != wi.address()) {
    const int64_t dead_ms =
        int64_t{config_.cluster.heartbeat_interval_ms} * config_.cluster.dead_after_missed_heartbeats;
    return Status::AlreadyExists("worker id '" + id + "' is live at " + known.info.address() +
                                 "; refusing a second process at " + wi.address() +
                                 " (ids are unique; a worker that is gone is declared dead after " +
                                 std::to_string(dead_ms) + " ms without a heartbeat)");
  }
  if (known.info.datacenter() != wi.datacenter() || known.info.rack() != wi.rack()) {
    return Status::FailedPrecondition(
        "worker '" + id + "' is known in " + Labels(known.info.datacenter(), known.info.rack()) +
        " (the master keeps a worker's labels); it now claims " +
        Labels(wi.datacenter(), wi.rack()) + ": start it with its labels, or under a new id");
  }
  return Status::OK();
}

Status Master::Register(const pb::RegisterRequest& req, pb::RegisterReply* reply) {
  if (Status admitted = Admit(req); !admitted.ok()) {
    spdlog::warn("refused a worker's registration from {}: {}", req.worker().address(),
                 admitted.message());
    return admitted;
  }
  const std::string& id = req.worker().id();
  auto it = workers_.find(id);
  const bool fresh = it == workers_.end();
  WorkerState* state = fresh ? nullptr : it->second.get();
  if (state && state->live) MarkDead({state});  // a restarted worker: forget what it held before
  if (state && state->declared_dead) {  // back (a frozen worker thawed): the others use it again
    state->declared_dead = false;
    MemberChanged(*state);
  }
  const bool changed = fresh || state->info.SerializeAsString() != req.worker().SerializeAsString();
  if (fresh) {
    pb::KnownWorker k;
    *k.mutable_info() = req.worker();
    state = &KnowWorker(k);
  } else {
    state->info = req.worker();
    jobs_->AddWorker(state->info);
    if (changed) MembershipChanged(*state);
  }
  WorkerState& w = *state;
  // Durable before it is live: a restarted master knows what it admitted.
  if (changed) MR_RETURN_IF_ERROR(PersistWorker(w));
  w.live = true;
  Heard(w);
  w.used_bytes = req.used_bytes();
  SetReporting(w, req.report_continues());
  const int64_t known =
      TakeBlockReport(w, req.blocks(), req.quarantined_blocks(), reply->mutable_delete_blocks());
  reply->set_heartbeat_interval_ms(config_.cluster.heartbeat_interval_ms);
  FillMembers(0, false, reply->mutable_members(), reply->mutable_dead_members());
  reply->set_membership_version(membership_version_);
  jobs_->WorkerUp(w.info.id());
  jobs_->WorkerRegistered(req, reply);
  spdlog::info("worker {} {} from {} in {}{}{}: {} blocks ({} orphans to delete){}{}", w.info.id(),
               fresh ? "joined" : "registered", w.info.address(), w.info.datacenter(),
               w.info.rack().empty() ? "" : "/", w.info.rack(), known, reply->delete_blocks_size(),
               w.reporting ? "; the rest of its report follows" : "",
               w.admin_state.empty() ? "" : "; it is " + w.admin_state);
  return Status::OK();
}

int64_t Master::TakeBlockReport(WorkerState& w, const google::protobuf::RepeatedPtrField<pb::BlockRef>& good,
                                const google::protobuf::RepeatedPtrField<pb::BlockRef>& quarantined,
                                google::protobuf::RepeatedField<uint64_t>* orphans) {
  int64_t known = 0;
  for (const auto& b : good) {
    auto it = blocks_.find(b.id());
    if (it == blocks_.end()) {
      orphans->Add(b.id());  // not in the namespace
      continue;
    }
    ++known;
    AddReplica(b.id(), it->second, w);
  }
  for (const auto& b : quarantined) {
    if (!blocks_.count(b.id())) {
      orphans->Add(b.id());
      continue;
    }
    ++known;
    NoteCorrupt(b.id(), w.info.id(), "quarantined on the worker");
  }
  return known;
}

// "cluster.BlockReport": a further part of a registration's report.
Status Master::BlockReport(const pb::BlockReportRequest& req, pb::BlockReportReply* reply) {
  auto it = workers_.find(req.worker_id());
  if (it == workers_.end() || !it->second->live || !it->second->reporting) {
    return Status::FailedPrecondition("worker '" + req.worker_id() +
                                      "' sent part of a block report, but it has no registration "
                                      "whose report continues: register again");
  }
  WorkerState& w = *it->second;
  Heard(w);  // a long report is a sign of life
  TakeBlockReport(w, req.blocks(), req.quarantined_blocks(), reply->mutable_delete_blocks());
  if (req.last()) {
    SetReporting(w, false);
    spdlog::info("worker {}'s block report is in: {} blocks", w.info.id(), w.block_count);
  }
  return Status::OK();
}

void Master::SetReporting(WorkerState& w, bool reporting) {
  reports_underway_ += static_cast<int>(reporting) - static_cast<int>(w.reporting);
  w.reporting = reporting;
}

void Master::Heard(WorkerState& w) {
  w.last_heartbeat = Now();
  if (heard_ms_.size() <= w.number) heard_ms_.resize(w.number + 1u, kNotLive);
  heard_ms_[w.number] = clock_->NowMs();
}

// "cluster.Decommission" (drain = true) and "cluster.Recommission".
// Asking again for the state a worker is in is not an error.
Status Master::Decommission(const std::string& id, bool drain) {
  auto it = workers_.find(id);
  if (it == workers_.end()) return Status::NotFound("no worker '" + id + "' is known to the master");
  WorkerState& w = *it->second;
  if (drain == !w.admin_state.empty()) return Status::OK();
  const std::string before = w.admin_state;
  SetAdminState(w, drain ? "decommissioning" : "");
  if (Status s = PersistWorker(w); !s.ok()) {
    SetAdminState(w, before);
    return s;
  }
  jobs_->SetDraining(id, drain);
  if (drain) {
    spdlog::info("worker {} is decommissioning: no new blocks or tasks go there; its {} blocks are "
                 "copied to other workers",
                 id, w.block_count);
  } else {
    spdlog::info("worker {} is recommissioned ({} before): it takes blocks and tasks again", id,
                 before);
  }
  return Status::OK();
}

// Every heartbeat interval (Tick): decommissioning workers whose blocks all
// have their replication elsewhere, and that run no task, are done.
void Master::CheckDecommissions() {
  const auto grace = std::chrono::milliseconds(int64_t{config_.cluster.heartbeat_interval_ms} *
                                               config_.cluster.dead_after_missed_heartbeats);
  if (Now() - started_ < grace || ReportsUnderway()) return;  // block reports are not all in yet
  if (std::find(draining_.begin(), draining_.end(), true) == draining_.end()) return;  // the usual pass
  std::vector<WorkerState*> draining;
  for (const auto& id : worker_order_) {
    WorkerState& w = *workers_.at(id);
    if (w.admin_state == "decommissioning") draining.push_back(&w);
  }
  if (draining.empty()) return;
  const std::vector<int64_t> waiting = BlocksWaiting(draining);
  for (size_t i = 0; i < draining.size(); ++i) {
    WorkerState& w = *draining[i];
    const std::string& id = w.info.id();
    const int tasks = jobs_->RunningTasks(id);
    if (waiting[i] > 0 || tasks > 0) continue;
    SetAdminState(w, "decommissioned");
    if (Status s = PersistWorker(w); !s.ok()) {
      SetAdminState(w, "decommissioning");
      spdlog::error("worker {}: cannot record that it is decommissioned: {}", id, s.ToString());
      continue;
    }
    spdlog::info("worker {} is decommissioned: each of its {} blocks has its replication on other "
                 "workers{}; it may be stopped",
                 id, w.block_count, w.live ? "" : " (it is not live)");
  }
}

// Per worker of `draining`, the blocks it holds (a good or a corrupt copy)
// that are not complete or lack their replication elsewhere: one pass over
// the block map for all of them.
std::vector<int64_t> Master::BlocksWaiting(const std::vector<WorkerState*>& draining) const {
  std::vector<int64_t> waiting(draining.size(), 0);
  for (const auto& [block, b] : blocks_) {
    const ReplicaList& corrupt = Corrupt(block, b);
    int counted = -1;  // computed once per block, when a draining worker holds it
    for (size_t i = 0; i < draining.size(); ++i) {
      const NodeNum n = draining[i]->number;
      if (!b.replicas.ContainsNumber(n) && !corrupt.ContainsNumber(n)) continue;
      if (counted < 0) counted = CountedReplicas(block, b);
      waiting[i] += !b.complete || counted < b.replication;
    }
  }
  return waiting;
}

}  // namespace mr::master

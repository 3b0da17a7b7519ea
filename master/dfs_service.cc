// The dfs.* handlers of the Master: the namespace (mkdir, ls, stat, rm,
// rename) and writes (create, add block, complete block/file, abandon,
// leases). Membership, replicas and replication are in master.cc.
#include <algorithm>
#include <chrono>

#include <spdlog/spdlog.h>

#include "dfs/block_store.h"
#include "dfs/input_type.h"
#include "master/master.h"
#include "master/master_internal.h"

namespace mr::master {
namespace {

// A lease id as messages show it: "EPOCH.N" (N counts from 1 in each run).
std::string LeaseName(uint64_t id) {
  return std::to_string(id >> kLeaseCounterBits) + "." +
         std::to_string(id & ((uint64_t{1} << kLeaseCounterBits) - 1));
}

}  // namespace

// ---------------------------------------------------------------- namespace

Status Master::Mkdir(const pb::PathRequest& req) {
  MR_ASSIGN_OR_RETURN(std::string path, dfs::NormalizePath(req.path()));
  return namespace_->Mkdir(path, req.recursive(), clock_->WallMs());
}

Status Master::List(const pb::PathRequest& req, pb::ListReply* reply) {
  MR_ASSIGN_OR_RETURN(std::string path, dfs::NormalizePath(req.path()));
  MR_ASSIGN_OR_RETURN(auto entries, namespace_->List(path));
  for (auto& [name, inode] : entries) {
    auto* e = reply->add_entries();
    e->set_name(name);
    inode.clear_blocks();
    *e->mutable_inode() = std::move(inode);
  }
  return Status::OK();
}

Status Master::Stat(const pb::LocateRequest& req, pb::StatReply* reply) {
  MR_ASSIGN_OR_RETURN(std::string path, dfs::NormalizePath(req.path()));
  MR_ASSIGN_OR_RETURN(pb::INode inode, namespace_->Lookup(path));
  reply->set_path(path);
  int64_t offset = 0;
  for (const auto& b : inode.blocks()) {
    pb::LocatedBlock* lb = reply->add_blocks();
    lb->set_id(b.id());
    lb->set_bytes(b.bytes());
    lb->set_offset(offset);
    if (b.has_byte_before()) lb->set_byte_before(b.byte_before());
    offset += b.bytes();
    auto it = blocks_.find(b.id());
    if (it == blocks_.end()) continue;
    for (const auto& node : SortByDistance(it->second.replicas, req.reader_node(),
                                           req.reader_datacenter(), req.reader_rack(), b.id())) {
      *lb->add_replicas() = Location(node);
    }
    for (const auto& node : SortByDistance(Corrupt(it->first, it->second), req.reader_node(),
                                           req.reader_datacenter(), req.reader_rack(), b.id())) {
      *lb->add_corrupt_replicas() = Location(node);
    }
  }
  *reply->mutable_inode() = std::move(inode);
  return Status::OK();
}

Status Master::Delete(const pb::PathRequest& req) {
  MR_ASSIGN_OR_RETURN(std::string path, dfs::NormalizePath(req.path()));
  std::vector<uint64_t> freed;
  MR_RETURN_IF_ERROR(namespace_->Delete(path, req.recursive(), &freed));
  ForgetBlocks(freed);
  return Status::OK();
}

// `mrctl dfs mv`. A move that would pull an input file from under a
// running job, or move its output or temporary directory (or the path its
// output will be renamed to), is refused (docs/dfs.md, "mv and running
// jobs"): the job keeps its paths from submission to the end.
Status Master::Rename(const pb::RenameRequest& req) {
  MR_ASSIGN_OR_RETURN(std::string from, dfs::NormalizePath(req.from()));
  MR_ASSIGN_OR_RETURN(std::string to, dfs::NormalizePath(req.to()));
  for (const std::string* p : {&from, &to}) {
    if (const int64_t job = jobs_->JobUsing(*p); job != 0) {
      return Status::FailedPrecondition("job " + std::to_string(job) + " is running and reads or writes '" +
                                        *p + "': move it after the job ends (mrctl job wait " +
                                        std::to_string(job) + ")");
    }
  }
  return namespace_->Rename(from, to);
}

// `mrctl dfs setrep`: the new replication goes into the namespace (synced)
// and into every block's state, so the next ScheduleReplication copies
// under-replicated blocks and TrimReplicas deletes surplus ones (not while
// a running job reads the block: master.cc).
Status Master::SetReplication(const pb::SetReplicationRequest& req, pb::SetReplicationReply* reply) {
  MR_ASSIGN_OR_RETURN(std::string path, dfs::NormalizePath(req.path()));
  if (req.replication() < 1) {
    return Status::InvalidArgument("replication must be at least 1, not " +
                                   std::to_string(req.replication()));
  }
  MR_RETURN_IF_ERROR(CheckReplication(req.replication()));
  std::vector<std::pair<std::string, pb::INode>> changed;
  MR_RETURN_IF_ERROR(namespace_->SetReplication(path, req.replication(), &changed));
  for (const auto& [file, inode] : changed) {
    for (const auto& b : inode.blocks()) {
      auto it = blocks_.find(b.id());
      if (it == blocks_.end()) continue;
      it->second.replication = static_cast<int16_t>(req.replication());
      Attend(b.id());
    }
  }
  if (!changed.empty()) {
    spdlog::info("replication of {} file(s) at {} set to {}", changed.size(), path, req.replication());
  }
  reply->set_files(static_cast<int64_t>(changed.size()));
  return Status::OK();
}

// ---------------------------------------------------------------- writes

Status Master::Create(const pb::CreateFileRequest& req, pb::CreateFileReply* reply) {
  MR_ASSIGN_OR_RETURN(std::string path, dfs::NormalizePath(req.path()));
  if (req.client_id().empty()) {
    return Status::InvalidArgument("dfs.Create of '" + path +
                                   "' without a client id (a client older than the master?)");
  }
  if (auto existing = namespace_->Lookup(path); existing.ok()) {
    if (existing->kind() == pb::INode::DIR) return Status::AlreadyExists("'" + path + "' is a directory");
    if (!req.overwrite()) return Status::AlreadyExists("'" + path + "' already exists");
  }
  for (const auto& [id, lease] : leases_) {
    if (lease->path == path) return Status::AlreadyExists("'" + path + "' is being written by another client");
  }
  // Fail now, not after the data is sent, if an ancestor is a file.
  for (std::string p = dfs::ParentPath(path); p != "/"; p = dfs::ParentPath(p)) {
    auto ancestor = namespace_->Lookup(p);
    if (ancestor.ok() && ancestor->kind() == pb::INode::FILE) {
      return Status::FailedPrecondition("'" + p + "' is a file, not a directory");
    }
  }
  const int replication = req.replication() > 0 ? req.replication() : config_.dfs.replication;
  MR_RETURN_IF_ERROR(CheckReplication(req.replication()));
  if (!req.datacenter().empty()) {
    // A pin to a datacenter no in-service worker is in is a typo, not a wish.
    bool known = false;
    std::vector<std::string> dcs;
    for (const auto& [id, w] : workers_) {
      if (!w->admin_state.empty()) continue;
      known = known || w->info.datacenter() == req.datacenter();
      if (std::find(dcs.begin(), dcs.end(), w->info.datacenter()) == dcs.end()) {
        dcs.push_back(w->info.datacenter());
      }
    }
    if (!known) {
      std::sort(dcs.begin(), dcs.end());
      std::string list;
      for (const auto& d : dcs) list += (list.empty() ? "" : ", ") + d;
      return Status::InvalidArgument("no worker of the cluster is in datacenter '" +
                                     req.datacenter() + "' (datacenters: " + list + ")");
    }
  }
  const int64_t block_size = req.block_size() > 0 ? req.block_size() : config_.dfs.block_size;
  if (block_size % dfs::kChecksumChunkBytes != 0) {
    return Status::InvalidArgument("block size must be a multiple of 65536 bytes");
  }
  if ((next_lease_id_ >> kLeaseCounterBits) != 0) {
    return Status::Unavailable("this run of the master has handed out every lease id; restart it");
  }
  auto lease = std::make_unique<Lease>();
  lease->path = path;
  lease->client_id = req.client_id();
  lease->overwrite = req.overwrite();
  lease->writer = workers_.count(req.writer_node()) ? req.writer_node() : "";
  lease->writer_datacenter = req.writer_datacenter();
  lease->datacenter = req.datacenter();
  lease->last_activity = Now();
  lease->inode.set_kind(pb::INode::FILE);
  lease->inode.set_replication(replication);
  lease->inode.set_block_size(block_size);
  lease->inode.set_input_type(dfs::InputTypeName(dfs::ClassifyInput(req.first_bytes())));
  lease->inode.set_datacenter(req.datacenter());
  const uint64_t id = epoch_ << kLeaseCounterBits | next_lease_id_++;
  leases_[id] = std::move(lease);
  reply->set_lease_id(id);
  reply->set_replication(replication);
  reply->set_block_size(block_size);
  return Status::OK();
}

// The lease `lease_id`, if it was opened for `raw_path` by `client_id`.
// Called by every lease RPC. NotFound when the lease is gone (issued by an
// earlier run of the master, or expired or abandoned in this one);
// PermissionDenied when it is another file's or another client's, so a
// confused or stale client can never grow, complete or abandon someone
// else's file.
Result<Master::Lease*> Master::FindLease(uint64_t lease_id, const std::string& raw_path,
                                         const std::string& client_id) {
  if (raw_path.empty() || client_id.empty()) {
    return Status::InvalidArgument("lease " + LeaseName(lease_id) +
                                   ": request without the file's path and the client id (a client "
                                   "older than the master?)");
  }
  MR_ASSIGN_OR_RETURN(std::string path, dfs::NormalizePath(raw_path));
  auto it = leases_.find(lease_id);
  if (it == leases_.end()) {
    if ((lease_id >> kLeaseCounterBits) != epoch_) {
      return Status::NotFound("the master restarted: lease " + LeaseName(lease_id) +
                              " is gone; the put of " + path + " did not complete");
    }
    return Status::NotFound(
        "lease " + LeaseName(lease_id) +
        " is gone (expired while its client was silent, or abandoned); the put of " + path +
        " did not complete");
  }
  Lease& lease = *it->second;
  if (lease.path != path || lease.client_id != client_id) {
    spdlog::warn("refused a request for {} by client {} with lease {}, which is {}'s by client {}",
                 path, client_id, LeaseName(lease_id), lease.path, lease.client_id);
    return Status::PermissionDenied("lease " + LeaseName(lease_id) + " is not the put of " + path +
                                    " by client " + client_id + ": refused");
  }
  lease.last_activity = Now();
  return &lease;
}

// The replication a dfs.Create asks for (0 = the cluster default). Refused:
// a negative one, one above [dfs] max_replication, and one above the
// workers of the cluster file, which no block could ever reach. One above
// the live workers only is accepted (the master tops blocks up when
// workers come back), with a warning in the master's log.
Status Master::CheckReplication(int asked) const {
  if (asked < 0) {
    return Status::InvalidArgument(
        "replication must be at least 1 (0 = the cluster default), not " + std::to_string(asked));
  }
  if (asked > config_.dfs.max_replication) {
    return Status::InvalidArgument(
        "replication " + std::to_string(asked) + " is above the cluster's maximum of " +
        std::to_string(config_.dfs.max_replication) + " ([dfs] max_replication)");
  }
  // The workers the master knows (registered, now or before a restart),
  // not the cluster file's entries: workers join without one. Draining
  // ones will not hold new replicas.
  int workers = 0;
  for (const auto& [id, w] : workers_) workers += w->admin_state.empty();
  if (asked > workers) {
    return Status::InvalidArgument(
        "replication " + std::to_string(asked) + " is above the " + std::to_string(workers) +
        " workers of the cluster: its blocks could never have that many replicas");
  }
  const int live = static_cast<int>(LiveNodes().size());
  if (asked > live) {
    spdlog::warn(
        "a file asks for replication {} with {} of {} workers live: its blocks stay "
        "under-replicated until more workers are live",
        asked, live, workers);
  }
  return Status::OK();
}

Status Master::AddBlock(const pb::AddBlockRequest& req, pb::AddBlockReply* reply) {
  MR_ASSIGN_OR_RETURN(Lease * lease, FindLease(req.lease_id(), req.path(), req.client_id()));
  dfs::PlacementRequest preq;
  preq.replication = lease->inode.replication();
  preq.block_bytes = lease->inode.block_size();
  if (!lease->writer.empty()) preq.writer = lease->writer;
  if (!lease->writer_datacenter.empty()) preq.writer_datacenter = lease->writer_datacenter;
  if (!lease->datacenter.empty()) preq.datacenter = lease->datacenter;
  preq.exclude.assign(req.exclude_nodes().begin(), req.exclude_nodes().end());
  MR_ASSIGN_OR_RETURN(auto targets, placement_->Choose(preq, LiveNodes(), rng_));
  MR_ASSIGN_OR_RETURN(uint64_t id, namespace_->NextBlockId());
  BlockState& b = blocks_[id];
  b.replication = lease->inode.replication();
  lease->uncommitted.push_back(id);
  reply->set_block_id(id);
  for (const auto& t : targets) *reply->add_pipeline() = Location(t);
  return Status::OK();
}

Status Master::CompleteBlock(const pb::CompleteBlockRequest& req) {
  MR_ASSIGN_OR_RETURN(Lease * lease, FindLease(req.lease_id(), req.path(), req.client_id()));
  auto pos = std::find(lease->uncommitted.begin(), lease->uncommitted.end(), req.block_id());
  if (pos == lease->uncommitted.end()) {
    return Status::InvalidArgument("block " + std::to_string(req.block_id()) + " is not open in this lease");
  }
  if (req.replicas().empty()) return Status::InvalidArgument("a block needs at least one replica");
  lease->uncommitted.erase(pos);
  BlockState& b = blocks_.at(req.block_id());
  b.bytes = req.bytes();
  for (const auto& node : req.replicas()) {
    auto w = workers_.find(node);
    if (w != workers_.end() && w->second->live) AddReplica(req.block_id(), b, *w->second);
  }
  pb::BlockRef* ref = lease->inode.add_blocks();
  ref->set_id(req.block_id());
  ref->set_bytes(req.bytes());
  if (req.has_byte_before()) ref->set_byte_before(req.byte_before() & 0xff);
  lease->inode.set_length(lease->inode.length() + req.bytes());
  return Status::OK();
}

Status Master::CompleteFile(const pb::CompleteFileRequest& req) {
  MR_ASSIGN_OR_RETURN(Lease * lease, FindLease(req.lease_id(), req.path(), req.client_id()));
  lease->inode.set_mtime_ms(clock_->WallMs());
  std::vector<uint64_t> freed;
  Status s = namespace_->AddFile(lease->path, lease->inode, lease->overwrite, &freed);
  if (!s.ok()) {
    DropLease(req.lease_id());
    return s;
  }
  for (const auto& ref : lease->inode.blocks()) {
    BlockState& b = blocks_.at(ref.id());
    complete_blocks_ += !b.complete;
    b.complete = true;
    if (NeedsAttention(ref.id(), b)) Attend(ref.id());  // a replica died mid-write, say
  }
  ForgetBlocks(freed);
  spdlog::info("file {} complete: {} bytes in {} blocks, type {}", lease->path, lease->inode.length(),
               lease->inode.blocks_size(), lease->inode.input_type());
  DropLease(req.lease_id());
  return Status::OK();
}

Status Master::AbandonFile(const pb::AbandonFileRequest& req) {
  MR_RETURN_IF_ERROR(FindLease(req.lease_id(), req.path(), req.client_id()).status());
  DropLease(req.lease_id());
  return Status::OK();
}

// Removes a lease; blocks it allocated that are not part of a complete file
// are forgotten and deleted from their holders.
void Master::DropLease(uint64_t lease_id) {
  auto it = leases_.find(lease_id);
  if (it == leases_.end()) return;
  std::vector<uint64_t> orphans = it->second->uncommitted;
  for (const auto& b : it->second->inode.blocks()) {
    if (!blocks_.count(b.id()) || !blocks_.at(b.id()).complete) orphans.push_back(b.id());
  }
  ForgetBlocks(orphans);
  leases_.erase(it);
}

void Master::ExpireLeases() {
  const auto limit =
      std::chrono::milliseconds(std::max<int64_t>(60000, 2 * int64_t{config_.cluster.rpc_timeout_ms}));
  std::vector<uint64_t> expired;
  for (const auto& [id, lease] : leases_) {
    if (Now() - lease->last_activity > limit) expired.push_back(id);
  }
  for (uint64_t id : expired) {
    spdlog::warn("abandoning unfinished write of {} (lease {}, client {}): client silent for {} ms",
                 leases_.at(id)->path, LeaseName(id), leases_.at(id)->client_id, limit.count());
    DropLease(id);
  }
}

}  // namespace mr::master

#include "dfs/namespace.h"

#include <cerrno>
#include <cstdlib>

#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>

#include "dfs/group_commit.h"

namespace mr::dfs {
namespace {

constexpr char kNodePrefix = 'n';
constexpr const char* kBlockIdKey = "m:next_block_id";
constexpr uint64_t kBlockIdBatch = 1024;  // ids reserved per RocksDB write
constexpr const char* kEpochKey = "m:epoch";
constexpr const char* kWorkerPrefix = "w:";

// In-memory and RocksDB key of a path: parent + '\0' + name.
std::string NodeKey(const std::string& path) {
  return ParentPath(path) + std::string(1, '\0') + BaseName(path);
}
std::string ChildPrefix(const std::string& dir) { return dir + std::string(1, '\0'); }
std::string PathOfKey(const std::string& key) {
  const size_t nul = key.find('\0');
  const std::string parent = key.substr(0, nul);
  return (parent == "/" ? "" : parent) + "/" + key.substr(nul + 1);
}

}  // namespace

Result<std::string> NormalizePath(const std::string& path) {
  if (path.empty() || path[0] != '/') {
    return Status::InvalidArgument("DFS path '" + path + "' must be absolute (start with '/')");
  }
  if (path.find('\0') != std::string::npos) return Status::InvalidArgument("DFS path contains NUL");
  std::string out;
  size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    const std::string part = path.substr(i, j - i);
    if (part == "." || part == "..") {
      return Status::InvalidArgument("DFS path '" + path + "' may not contain '.' or '..'");
    }
    if (part.size() > kMaxPathComponentBytes) {
      return Status::InvalidArgument("DFS path component '" + part.substr(0, 40) + "...' is " +
                                     std::to_string(part.size()) + " bytes; at most " +
                                     std::to_string(kMaxPathComponentBytes) + " are allowed");
    }
    if (!part.empty()) out += "/" + part;
    i = j;
  }
  return out.empty() ? std::string("/") : out;
}

std::string ParentPath(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == 0 ? "/" : path.substr(0, slash);
}

std::string BaseName(const std::string& path) { return path.substr(path.rfind('/') + 1); }

Result<std::unique_ptr<Namespace>> Namespace::Open(const std::string& dir) {
  rocksdb::Options options;
  options.create_if_missing = true;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, dir, &raw);
  if (!s.ok()) return Status::IOError("cannot open namespace database in '" + dir + "': " + s.ToString());
  std::unique_ptr<Namespace> ns(new Namespace());
  ns->db_.reset(raw);
  ns->log_ = std::make_shared<GroupCommit>(raw);

  std::unique_ptr<rocksdb::Iterator> it(ns->db_->NewIterator(rocksdb::ReadOptions()));
  for (it->Seek(std::string(1, kNodePrefix)); it->Valid() && it->key()[0] == kNodePrefix; it->Next()) {
    pb::INode inode;
    if (!inode.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
      return Status::Corruption("namespace database: unparseable inode under key '" +
                                it->key().ToString(true) + "'");
    }
    const bool dir = inode.kind() == pb::INode::DIR;
    ns->files_ += !dir;
    ns->nodes_.emplace(it->key().ToString().substr(1), Stored{dir, it->value().ToString()});
  }
  std::string hwm;
  s = ns->db_->Get(rocksdb::ReadOptions(), kBlockIdKey, &hwm);
  if (s.ok()) {
    char* end = nullptr;
    errno = 0;
    const unsigned long long v = std::strtoull(hwm.c_str(), &end, 10);
    if (hwm.empty() || hwm[0] < '0' || hwm[0] > '9' || *end != '\0' || errno != 0) {
      return Status::Corruption("namespace database: bad block-id mark '" + hwm + "'");
    }
    ns->next_block_id_ = ns->block_id_limit_ = v;
  } else if (!s.IsNotFound()) {
    return Status::IOError("namespace database: " + s.ToString());
  }
  return ns;
}

Namespace::~Namespace() {
  if (log_) log_->Close();
}

void Namespace::StartGroupCommit(boost::asio::any_io_executor executor) {
  log_->Start(std::move(executor));
}

boost::asio::awaitable<Status> Namespace::Durable() { return log_->Durable(); }

int64_t Namespace::commits() const { return log_->commits(); }
int64_t Namespace::syncs() const { return log_->syncs(); }

Status Namespace::Write(const std::vector<std::pair<std::string, const pb::INode*>>& puts,
                        const std::vector<std::string>& deletes) {
  if (puts.empty() && deletes.empty()) return Status::OK();  // nothing changes: nothing to sync
  MR_RETURN_IF_ERROR(log_->status());
  std::vector<Stored> values;
  values.reserve(puts.size());
  for (const auto& [key, inode] : puts) {
    values.push_back(Stored{inode->kind() == pb::INode::DIR, inode->SerializeAsString()});
  }
  rocksdb::WriteBatch& batch = log_->batch();
  for (const auto& key : deletes) batch.Delete(kNodePrefix + key);
  for (size_t i = 0; i < puts.size(); ++i) batch.Put(kNodePrefix + puts[i].first, values[i].bytes);
  MR_RETURN_IF_ERROR(log_->Commit());
  for (const auto& key : deletes) {
    auto it = nodes_.find(key);
    if (it == nodes_.end()) continue;
    files_ -= !it->second.dir;
    nodes_.erase(it);
  }
  for (size_t i = 0; i < puts.size(); ++i) {
    auto [slot, added] = nodes_.try_emplace(puts[i].first);
    if (!added) files_ -= !slot->second.dir;  // replaced
    files_ += !values[i].dir;
    slot->second = std::move(values[i]);
  }
  return Status::OK();
}

pb::INode Namespace::Stored::Parse() const {
  pb::INode inode;
  inode.ParseFromString(bytes);  // made by SerializeAsString, or checked at Open
  return inode;
}

Result<pb::INode> Namespace::Lookup(const std::string& path) const {
  if (path == "/") {
    pb::INode root;
    root.set_kind(pb::INode::DIR);
    return root;
  }
  auto it = nodes_.find(NodeKey(path));
  if (it == nodes_.end()) return Status::NotFound("'" + path + "' does not exist");
  return it->second.Parse();
}

Status Namespace::MkdirsLocked(const std::string& path, int64_t now_ms, bool ok_if_exists) {
  std::vector<std::string> missing;
  for (std::string p = path; p != "/"; p = ParentPath(p)) {
    auto found = Lookup(p);
    if (found.ok()) {
      if (found->kind() != pb::INode::DIR) {
        return Status::FailedPrecondition("'" + p + "' is a file, not a directory");
      }
      if (p == path && !ok_if_exists) return Status::AlreadyExists("'" + path + "' already exists");
      break;
    }
    missing.push_back(p);
  }
  pb::INode dir;
  dir.set_kind(pb::INode::DIR);
  dir.set_mtime_ms(now_ms);
  std::vector<std::pair<std::string, const pb::INode*>> puts;
  for (const auto& p : missing) puts.emplace_back(NodeKey(p), &dir);
  return Write(puts, {});
}

Status Namespace::Mkdir(const std::string& path, bool parents, int64_t now_ms) {
  if (!parents && path != "/") {
    auto parent = Lookup(ParentPath(path));
    if (!parent.ok()) return Status::NotFound("parent of '" + path + "' does not exist (use -p)");
    if (parent->kind() != pb::INode::DIR) {
      return Status::FailedPrecondition("'" + ParentPath(path) + "' is a file, not a directory");
    }
  }
  if (path == "/") return parents ? Status::OK() : Status::AlreadyExists("'/' already exists");
  if (auto existing = Lookup(path); existing.ok() && existing->kind() == pb::INode::FILE) {
    return Status::AlreadyExists("'" + path + "' already exists (a file)");
  }
  return MkdirsLocked(path, now_ms, parents);
}

Result<std::vector<std::pair<std::string, pb::INode>>> Namespace::List(const std::string& path) const {
  MR_ASSIGN_OR_RETURN(pb::INode inode, Lookup(path));
  std::vector<std::pair<std::string, pb::INode>> out;
  if (inode.kind() == pb::INode::FILE) {
    out.emplace_back(BaseName(path), std::move(inode));
    return out;
  }
  const std::string prefix = ChildPrefix(path);
  for (auto it = nodes_.lower_bound(prefix); it != nodes_.end() && it->first.starts_with(prefix); ++it) {
    out.emplace_back(it->first.substr(prefix.size()), it->second.Parse());
  }
  return out;
}

void Namespace::CollectSubtree(const std::string& dir, std::vector<std::string>* paths) const {
  const std::string prefix = ChildPrefix(dir);
  for (auto it = nodes_.lower_bound(prefix); it != nodes_.end() && it->first.starts_with(prefix); ++it) {
    const std::string child = PathOfKey(it->first);
    paths->push_back(child);
    if (it->second.dir) CollectSubtree(child, paths);
  }
}

Status Namespace::Delete(const std::string& path, bool recursive,
                         std::vector<uint64_t>* freed_blocks) {
  if (path == "/") return Status::InvalidArgument("the root directory cannot be removed");
  MR_ASSIGN_OR_RETURN(pb::INode inode, Lookup(path));
  std::vector<std::string> paths{path};
  if (inode.kind() == pb::INode::DIR) {
    CollectSubtree(path, &paths);
    if (paths.size() > 1 && !recursive) {
      return Status::FailedPrecondition("directory '" + path + "' is not empty (use -r)");
    }
  }
  std::vector<std::string> keys;
  for (const auto& p : paths) {
    const std::string key = NodeKey(p);
    const Stored& node = nodes_.at(key);
    if (!node.dir) {
      const pb::INode file = node.Parse();
      for (const auto& b : file.blocks()) freed_blocks->push_back(b.id());
    }
    keys.push_back(key);
  }
  return Write({}, keys);
}

Status Namespace::AddFile(const std::string& path, const pb::INode& file, bool overwrite,
                          std::vector<uint64_t>* freed_blocks) {
  if (path == "/") return Status::AlreadyExists("'/' is a directory");
  auto existing = Lookup(path);
  if (existing.ok()) {
    if (existing->kind() == pb::INode::DIR) return Status::AlreadyExists("'" + path + "' is a directory");
    if (!overwrite) return Status::AlreadyExists("'" + path + "' already exists");
  }
  MR_RETURN_IF_ERROR(MkdirsLocked(ParentPath(path), file.mtime_ms(), /*ok_if_exists=*/true));
  if (existing.ok()) {
    for (const auto& b : existing->blocks()) freed_blocks->push_back(b.id());
  }
  return Write({{NodeKey(path), &file}}, {});
}

Status Namespace::Rename(const std::string& from, const std::string& to) {
  MR_ASSIGN_OR_RETURN(pb::INode inode, Lookup(from));
  if (from == "/" || to == "/") return Status::InvalidArgument("cannot rename the root");
  if (Lookup(to).ok()) return Status::AlreadyExists("'" + to + "' already exists");
  if (to.starts_with(from + "/")) return Status::InvalidArgument("cannot move '" + from + "' into itself");
  MR_RETURN_IF_ERROR(MkdirsLocked(ParentPath(to), inode.mtime_ms(), /*ok_if_exists=*/true));
  std::vector<std::string> olds{from};
  if (inode.kind() == pb::INode::DIR) CollectSubtree(from, &olds);
  std::vector<pb::INode> values;
  values.reserve(olds.size());
  std::vector<std::pair<std::string, const pb::INode*>> puts;
  std::vector<std::string> deletes;
  for (const auto& p : olds) {
    const std::string key = NodeKey(p);
    values.push_back(nodes_.at(key).Parse());
    puts.emplace_back(NodeKey(to + p.substr(from.size())), &values.back());
    deletes.push_back(key);
  }
  return Write(puts, deletes);
}

Status Namespace::SetReplication(const std::string& path, int32_t replication,
                                 std::vector<std::pair<std::string, pb::INode>>* changed) {
  MR_ASSIGN_OR_RETURN(pb::INode inode, Lookup(path));
  std::vector<std::string> paths{path};
  if (inode.kind() == pb::INode::DIR) CollectSubtree(path, &paths);
  std::vector<std::pair<std::string, pb::INode>> updated;
  for (const auto& p : paths) {
    if (p == "/") continue;
    const Stored& stored = nodes_.at(NodeKey(p));
    if (stored.dir) continue;
    const pb::INode node = stored.Parse();
    if (node.kind() != pb::INode::FILE || node.replication() == replication) continue;
    updated.emplace_back(p, node);
    updated.back().second.set_replication(replication);
  }
  std::vector<std::pair<std::string, const pb::INode*>> puts;
  for (const auto& [p, node] : updated) puts.emplace_back(NodeKey(p), &node);
  MR_RETURN_IF_ERROR(Write(puts, {}));
  for (auto& u : updated) changed->push_back(std::move(u));
  return Status::OK();
}

Result<uint64_t> Namespace::NextBlockId() {
  if (next_block_id_ >= block_id_limit_) {
    const uint64_t limit = next_block_id_ + kBlockIdBatch;
    MR_RETURN_IF_ERROR(log_->status());
    log_->batch().Put(kBlockIdKey, std::to_string(limit));
    MR_RETURN_IF_ERROR(log_->Commit());
    block_id_limit_ = limit;
  }
  return next_block_id_++;
}

Result<uint64_t> Namespace::NextEpoch() {
  std::string stored;
  rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), kEpochKey, &stored);
  uint64_t epoch = 0;
  if (s.ok()) {
    char* end = nullptr;
    errno = 0;
    epoch = std::strtoull(stored.c_str(), &end, 10);
    if (stored.empty() || stored[0] < '0' || stored[0] > '9' || *end != '\0' || errno != 0) {
      return Status::Corruption("namespace database: bad epoch '" + stored + "'");
    }
  } else if (!s.IsNotFound()) {
    return Status::IOError("namespace database: " + s.ToString());
  }
  ++epoch;
  MR_RETURN_IF_ERROR(log_->status());
  log_->batch().Put(kEpochKey, std::to_string(epoch));
  MR_RETURN_IF_ERROR(log_->Commit());
  return epoch;
}

void Namespace::ForEachFile(const std::function<void(const std::string&, const pb::INode&)>& fn) const {
  for (const auto& [key, stored] : nodes_) {
    if (!stored.dir) fn(PathOfKey(key), stored.Parse());
  }
}

Status Namespace::PutWorker(const pb::KnownWorker& worker) {
  MR_RETURN_IF_ERROR(log_->status());
  log_->batch().Put(kWorkerPrefix + worker.info().id(), worker.SerializeAsString());
  return log_->Commit();
}

Result<std::vector<pb::KnownWorker>> Namespace::Workers() const {
  std::vector<pb::KnownWorker> out;
  std::unique_ptr<rocksdb::Iterator> it(db_->NewIterator(rocksdb::ReadOptions()));
  for (it->Seek(kWorkerPrefix); it->Valid() && it->key().starts_with(kWorkerPrefix); it->Next()) {
    pb::KnownWorker w;
    if (!w.ParseFromArray(it->value().data(), static_cast<int>(it->value().size()))) {
      return Status::Corruption("namespace database: unparseable worker record under key '" +
                                it->key().ToString(true) + "'");
    }
    out.push_back(std::move(w));
  }
  if (!it->status().ok()) return Status::IOError("namespace database: " + it->status().ToString());
  return out;
}

int64_t Namespace::file_count() const { return files_; }

}  // namespace mr::dfs

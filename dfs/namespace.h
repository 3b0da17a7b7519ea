// Namespace: the master's directory tree of complete files, persisted in
// RocksDB.
//
// Paths are absolute, '/'-separated, without '.', '..' or empty components;
// NormalizePath() accepts a trailing '/' and repeated '/'. The root "/"
// always exists. A file appears in the namespace only when it is complete
// (AddFile), so a half-written file is never visible.
//
// RocksDB layout (see docs/storage-format.md):
//   "n" + parent + '\0' + name  → proto mr.pb.INode   (parent of "/x" is "/")
//   "m:next_block_id"           → decimal high-water mark of block ids
//   "m:epoch"                   → decimal count of master starts (NextEpoch)
//   "w:" + worker id            → proto mr.pb.KnownWorker (PutWorker)
// The whole tree is also held in memory (a std::map over the same keys, the
// inodes serialized), so reads never touch RocksDB. A mutation is one atomic batch, except that
// AddFile and Rename first create missing parent directories in a batch of
// their own (a crash in between leaves only empty directories behind).
//
// Durability: until StartGroupCommit(), every mutation is synced to
// RocksDB's log before it returns. After it (the master), a mutation changes
// the tree in memory at once and is synced with the others of its group on
// a thread of its own (dfs/group_commit.h): the caller must `co_await
// Durable()` before it tells anyone of the change, or of anything it read.
//
// Not thread-safe: the master calls it from its one RPC thread.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>

#include "common/status.h"
#include "proto/cluster.pb.h"
#include "proto/dfs.pb.h"

namespace rocksdb {
class DB;
}

namespace mr::dfs {

class GroupCommit;

// The longest name of one path component, in bytes (HDFS's
// dfs.namenode.fs-limits.max-component-length, and most local file systems).
inline constexpr size_t kMaxPathComponentBytes = 255;

// "/a//b/" → "/a/b". InvalidArgument for relative paths, '.', '..', NUL,
// and a component longer than kMaxPathComponentBytes.
Result<std::string> NormalizePath(const std::string& path);
// "/a/b" → "/a"; "/a" → "/".
std::string ParentPath(const std::string& path);
std::string BaseName(const std::string& path);

class Namespace {
 public:
  // Opens (creating) the RocksDB in `dir` and loads the tree.
  static Result<std::unique_ptr<Namespace>> Open(const std::string& dir);
  ~Namespace();

  // Creates a directory. With `parents`, missing ancestors are created and an
  // existing directory is not an error (mkdir -p). AlreadyExists otherwise;
  // FailedPrecondition if an ancestor is a file.
  Status Mkdir(const std::string& path, bool parents, int64_t now_ms);

  // The inode at `path`, or NotFound.
  Result<pb::INode> Lookup(const std::string& path) const;

  // Children of a directory, sorted by name. For a file: the file itself.
  Result<std::vector<std::pair<std::string, pb::INode>>> List(const std::string& path) const;

  // Removes a file, or a directory (non-empty only with `recursive`:
  // FailedPrecondition otherwise). The root cannot be removed. Appends the
  // ids of the blocks of removed files to `freed_blocks`.
  Status Delete(const std::string& path, bool recursive, std::vector<uint64_t>* freed_blocks);

  // Adds a complete file, creating missing parent directories. If a file is
  // there already: replaced when `overwrite` (its blocks appended to
  // `freed_blocks`), else AlreadyExists. A directory there: AlreadyExists.
  Status AddFile(const std::string& path, const pb::INode& file, bool overwrite,
                 std::vector<uint64_t>* freed_blocks);

  // Renames a file or directory (with its subtree). NotFound if `from` is
  // missing, AlreadyExists if `to` exists; parents of `to` are created.
  Status Rename(const std::string& from, const std::string& to);

  // Sets the replication of the file at `path`, or of every file under the
  // directory `path` (recursively), in one synced batch; appends each
  // changed file's path and new inode to `changed` (files that already had
  // `replication` are left out). NotFound if `path` is missing. The caller
  // checks that `replication` is allowed.
  Status SetReplication(const std::string& path, int32_t replication,
                        std::vector<std::pair<std::string, pb::INode>>* changed);

  // A fresh block id, never handed out before (survives restarts).
  Result<uint64_t> NextBlockId();

  // Counts one more start of the master and returns the new count (1 on a
  // fresh namespace), synced before it returns (REQUIRES: called before
  // StartGroupCommit()), so no two runs of the
  // master share a number. The master calls it once, at start, and puts it
  // in the ids it hands out for one run only (lease ids). Corruption if the
  // stored count is not a decimal number.
  Result<uint64_t> NextEpoch();

  // From now on mutations are synced in groups, off the calling thread;
  // `executor` is the caller's (every call comes from it).
  void StartGroupCommit(boost::asio::any_io_executor executor);
  // Completes once every mutation made so far is durable (at once when none
  // waits for a sync). IOError if a sync failed: the namespace then refuses
  // every mutation (IOError) until it is reopened.
  boost::asio::awaitable<Status> Durable();
  // Mutations made, and synced RocksDB writes that made them durable (fewer
  // under group commit: several mutations share one).
  int64_t commits() const;
  int64_t syncs() const;

  // Calls fn(path, inode) for every file.
  void ForEachFile(const std::function<void(const std::string&, const pb::INode&)>& fn) const;

  // Files in the namespace (kept as they change: O(1)).
  int64_t file_count() const;

  // Membership, beside the namespace in the same database: the workers the
  // master has admitted, with their labels and decommissioning state, so a
  // restarted master knows them before they report in. PutWorker replaces
  // the record of `worker.info().id()`, durable as any mutation.
  Status PutWorker(const pb::KnownWorker& worker);
  // Every stored record, by id. Corruption if one cannot be parsed.
  Result<std::vector<pb::KnownWorker>> Workers() const;

 private:
  Namespace() = default;
  Status Write(const std::vector<std::pair<std::string, const pb::INode*>>& puts,
               const std::vector<std::string>& deletes);
  void CollectSubtree(const std::string& dir, std::vector<std::string>* paths) const;
  Status MkdirsLocked(const std::string& path, int64_t now_ms, bool ok_if_exists);

  std::unique_ptr<rocksdb::DB> db_;
  std::shared_ptr<GroupCommit> log_;  // every write; closed before db_
  // An inode as held in memory: serialized, with its kind at hand. A file's
  // block list costs ~12 bytes a block so, against ~70 as parsed messages
  // (issue 29: 10,000,000 blocks in the master's memory).
  struct Stored {
    bool dir = false;
    std::string bytes;  // a pb::INode
    pb::INode Parse() const;
  };
  std::map<std::string, Stored> nodes_;  // key: parent + '\0' + name
  int64_t files_ = 0;                     // entries of nodes_ that are files
  uint64_t next_block_id_ = 1;
  uint64_t block_id_limit_ = 0;               // persisted high-water mark
};

}  // namespace mr::dfs

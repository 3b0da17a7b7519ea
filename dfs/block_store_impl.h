// The insides of BlockStore, shared by its two source files: block_store.cc
// (opening and reconciling the store, metadata, writers, removal and
// quarantine) and block_reader.cc (checksums and verified reads). Not part
// of the API: include block_store.h.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <random>
#include <set>
#include <string>
#include <system_error>
#include <vector>

#include <rocksdb/db.h>

#include "common/status.h"
#include "dfs/block_store.h"

namespace mr::dfs {
namespace store_internal {

inline constexpr int64_t kChunk = kChecksumChunkBytes;

// One block's entry in the in-memory index. Immutable once published: a
// change (quarantine, repair) swaps in a new entry, so a reader holding the
// old one is never disturbed.
struct BlockInfo {
  int64_t length = 0;
  std::vector<uint64_t> checksums;  // one per chunk
  bool quarantined = false;
  std::string quarantine_reason;
};

inline int64_t NumChunks(int64_t length) { return (length + kChunk - 1) / kChunk; }

// "<op> <path>: <reason>" as an IOError; the reason defaults to errno.
inline Status IoError(const char* op, const std::string& path,
                      std::error_code ec = std::error_code(errno, std::generic_category())) {
  return Status::IOError(std::string(op) + " " + path + ": " + ec.message());
}

inline std::string Hex16(uint64_t id) {
  char buf[17];
  std::snprintf(buf, sizeof(buf), "%016llx", static_cast<unsigned long long>(id));
  return buf;
}

inline std::string BlockName(uint64_t id) { return "block " + Hex16(id); }

// Closes a file descriptor on scope exit.
class ScopedFd {
 public:
  explicit ScopedFd(int fd) : fd_(fd) {}
  ~ScopedFd() {
    if (fd_ >= 0) ::close(fd_);
  }
  ScopedFd(const ScopedFd&) = delete;
  ScopedFd& operator=(const ScopedFd&) = delete;
  int get() const { return fd_; }

 private:
  int fd_;
};

}  // namespace store_internal

struct BlockStore::Impl {
  using BlockInfo = store_internal::BlockInfo;

  std::string dir;
  Options options;
  std::unique_ptr<rocksdb::DB> db;
  std::atomic<uint64_t> tmp_seq{std::random_device{}()};

  std::mutex mu;
  std::condition_variable busy_cv;
  std::map<uint64_t, std::shared_ptr<const BlockInfo>> index;  // guarded by mu
  std::set<uint64_t> busy;                                     // guarded by mu
  int64_t used_bytes = 0;                                      // guarded by mu
  std::vector<DroppedBlock> dropped;                           // written by Open() only

  std::string BlockPath(uint64_t id) const {
    char sub[3];
    std::snprintf(sub, sizeof(sub), "%02x", static_cast<unsigned>(id % 256));
    return dir + "/blocks/" + sub + "/blk_" + store_internal::Hex16(id);
  }

  std::shared_ptr<const BlockInfo> Find(uint64_t id) {
    std::lock_guard lock(mu);
    auto it = index.find(id);
    return it == index.end() ? nullptr : it->second;
  }

  // Waits until no Commit()/Remove() of `id` is in flight, then claims it.
  void Claim(uint64_t id) {
    std::unique_lock lock(mu);
    busy_cv.wait(lock, [&] { return !busy.contains(id); });
    busy.insert(id);
  }
  void Release(uint64_t id) {
    {
      std::lock_guard lock(mu);
      busy.erase(id);
    }
    busy_cv.notify_all();
  }

  Status OpenAndReconcile();
  Status LoadIndex();
  Status SweepBlockFiles();
  Status Publish(uint64_t id, const std::string& tmp_path, std::shared_ptr<const BlockInfo> info);
  Status PutMeta(uint64_t id, const BlockInfo& info);
};

}  // namespace mr::dfs

// DiskHealth: can this worker write to its data directory?
//
// A worker that cannot write must say so before the master places blocks,
// copies or tasks on it (HDFS's dfs.datanode.du.reserved, and its failed
// volume check). Three signals, checked on every heartbeat:
//   - free space of the data directory's file system (statvfs) under the
//     margin: [[worker]] min_free_bytes, and never less than one block
//     (dfs.block_size), since a block that does not fit fails mid-write;
//   - a local write failed with ENOSPC or EDQUOT (a task's spill, fetched
//     segment or output, a block arriving): the disk is full for what we
//     write even if a small probe still fits. It stays so until the margin
//     and one more block are free again;
//   - any other local write failure, confirmed by a small probe write into
//     the data directory failing too (EIO, EROFS, ...). It stays so until a
//     probe succeeds.
//
// Thread-safe: task threads and io threads report failures, the heartbeat
// reads the state.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

namespace mr::worker {

class DiskHealth {
 public:
  // `dir`: the worker's data directory (it exists). The margin is the
  // larger of `min_free_bytes` and `block_bytes`.
  DiskHealth(std::string dir, int64_t min_free_bytes, int64_t block_bytes);

  struct State {
    int64_t free_bytes = -1;  // -1 when statvfs fails
    std::string problem;      // empty when the worker can write
  };
  // The heartbeat calls this before every beat: free space now, and, while a
  // failed write is on record, a fresh probe. Logs each change once.
  State Check();
  // Called after a local write failed (or a task failed, which may be one)
  // with what it failed with: "No space left on device" (ENOSPC) or "Disk
  // quota exceeded" (EDQUOT) in `why` marks the disk full at once;
  // otherwise it probes the directory now and keeps the failure on record
  // if the probe fails too. Cheap when the disk is fine (one small write
  // and unlink).
  void WriteFailed(std::string_view why = "");
  int64_t margin_bytes() const { return margin_bytes_; }

 private:
  // "" when a probe file can be written, synced and removed; else why not.
  std::string Probe() const;

  const std::string dir_;
  const int64_t margin_bytes_;
  const int64_t block_bytes_;
  std::mutex mu_;
  std::string full_problem_;   // the last ENOSPC, until the space returns
  std::string write_problem_;  // the last failed probe, until one succeeds
  std::string reported_;       // the problem last logged ("" = fine)
};

}  // namespace mr::worker

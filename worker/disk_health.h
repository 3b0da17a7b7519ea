// DiskHealth: can this worker write to its data directory?
//
// A worker that cannot write must say so before the master places blocks,
// copies or tasks on it (HDFS's dfs.datanode.du.reserved, and its failed
// volume check). Two signals, checked on every heartbeat:
//   - free space of the data directory's file system (statvfs) under
//     [[worker]] min_free_bytes;
//   - a local write failed (a task's spill, fetched segment or output, a
//     block arriving) and a small probe write into the data directory fails
//     too (ENOSPC, EIO, EROFS, ...). It stays so until a probe succeeds.
//
// Thread-safe: task threads and io threads report failures, the heartbeat
// reads the state.
#pragma once

#include <cstdint>
#include <mutex>
#include <string>

namespace mr::worker {

class DiskHealth {
 public:
  // `dir`: the worker's data directory (it exists).
  DiskHealth(std::string dir, int64_t min_free_bytes);

  struct State {
    int64_t free_bytes = -1;  // -1 when statvfs fails
    std::string problem;      // empty when the worker can write
  };
  // The heartbeat calls this before every beat: free space now, and, while a
  // failed write is on record, a fresh probe. Logs each change once.
  State Check();
  // Called after a local write failed (or a task failed, which may be one):
  // probes the directory now and keeps the failure on record if the probe
  // fails too. Cheap when the disk is fine (one small write and unlink).
  void WriteFailed();

 private:
  // "" when a probe file can be written, synced and removed; else why not.
  std::string Probe() const;

  const std::string dir_;
  const int64_t min_free_bytes_;
  std::mutex mu_;
  std::string write_problem_;  // the last failed probe, until one succeeds
  std::string reported_;       // the problem last logged ("" = fine)
};

}  // namespace mr::worker

// BackgroundRemover: removes directory trees on a thread of its own, so
// that the thread that decides a tree is garbage does not wait for the file
// system. A worker's heartbeat coroutine shares its thread with block and
// shuffle serving: a job of 10,000 maps leaves 10,000 task directories (and
// as many task logs), and removing them there held the worker's heartbeats
// past 1 s at the job's end, so the master declared both workers of
// bench/many_maps.sh dead.
//
// Remove(path) renames the tree aside at once, in the same directory
// (".removing-NAME-N": one rename, whatever the tree's size), so the name is
// free and nothing finds the old tree by it, then queues its removal. The
// destructor removes what is still queued before it returns. A tree that
// cannot be renamed (it is gone already, or the rename fails) is removed
// in place on the thread.
//
// Thread-safe.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <mutex>
#include <thread>

namespace mr::worker {

class BackgroundRemover {
 public:
  BackgroundRemover();
  ~BackgroundRemover();
  BackgroundRemover(const BackgroundRemover&) = delete;
  BackgroundRemover& operator=(const BackgroundRemover&) = delete;

  // Takes `path` (a file or a directory tree) away now and removes it soon.
  void Remove(const std::filesystem::path& path);

  // Blocks until every tree queued so far has been removed (for tests and
  // orderly shutdowns).
  void Drain();

 private:
  void Loop();

  std::mutex mu_;
  std::condition_variable queued_, idle_;
  std::deque<std::filesystem::path> queue_;
  bool busy_ = false;
  bool stop_ = false;
  uint64_t renamed_ = 0;  // numbers the names set aside
  std::thread thread_;
};

}  // namespace mr::worker

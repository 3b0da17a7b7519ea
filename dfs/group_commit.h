// GroupCommit: the namespace's writes to RocksDB, made durable in groups.
//
// Each namespace mutation appends its puts and deletes to the open batch
// (batch()) and ends with Commit(). Before Start() a commit writes the batch
// synced at once, as a lone mutation. After Start(executor), a commit only
// counts the mutation: at the end of the executor's turn the open batch is
// handed to a sync thread of its own, which writes it with sync = true and
// posts the result back; mutations committed while that sync runs gather in
// the next batch, synced once when it ends. This is HDFS's group commit of
// its edit log (FSEditLog.logSync: "sync the edits of many threads in one
// flush"), with the master's one thread as the many clients.
//
// The contract with the master's handlers: the tree in memory changes at
// once; a reply is sent only after `co_await Durable()`, which completes when
// every mutation committed so far is synced. So no client ever hears of a
// change (its own, or another's it read) that a crash could take back, and a
// crash before a sync loses only mutations nobody was told about.
//
// A failed sync is fatal to writing: the tree in memory is ahead of the
// disk, so every later Commit() and Durable() returns that error (the
// namespace turns read-only) until the master is restarted, as HDFS's
// NameNode stops when its edit log cannot be synced.
//
// Not thread-safe: every call comes from the executor given to Start() (the
// master's one thread); only the sync itself runs on the sync thread.
#pragma once

#include <cstdint>
#include <deque>
#include <memory>

#include <boost/asio/any_io_executor.hpp>
#include <boost/asio/awaitable.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/asio/thread_pool.hpp>
#include <rocksdb/write_batch.h>

#include "common/status.h"

namespace rocksdb {
class DB;
}

namespace mr::dfs {

class GroupCommit : public std::enable_shared_from_this<GroupCommit> {
 public:
  // `db` is not owned and must outlive Close().
  explicit GroupCommit(rocksdb::DB* db) : db_(db) {}
  ~GroupCommit();

  // Syncs in groups from now on; completions run on `executor`.
  void Start(boost::asio::any_io_executor executor);

  // The batch the current mutation appends to. REQUIRES: status().ok().
  rocksdb::WriteBatch& batch() { return open_; }
  // Ends a mutation. Before Start(): its batch is written synced, and on an
  // error it is dropped (nothing of it is durable) and the error returned.
  // After Start(): always OK; the sync is scheduled.
  Status Commit();
  // Completes (on the executor) once every mutation committed before the
  // call is durable; OK at once when nothing is waiting for a sync. The
  // sync's error if it failed.
  boost::asio::awaitable<Status> Durable();
  // OK until a sync failed.
  const Status& status() const { return error_; }
  // Waits for the sync under way and syncs what is open, on the calling
  // thread; later commits sync at once again. Called before `db` closes.
  void Close();

  // Mutations committed, and synced writes made (each covers one or more).
  int64_t commits() const { return static_cast<int64_t>(committed_); }
  int64_t syncs() const { return syncs_; }

 private:
  // Hands the open batch to the sync thread.
  void StartSync();
  // On the executor: the sync that covers mutations up to `seq` ended.
  void Synced(const Status& s, uint64_t seq);
  Status WriteSynced(rocksdb::WriteBatch* batch);

  rocksdb::DB* db_;
  rocksdb::WriteBatch open_;
  uint64_t committed_ = 0;    // mutations committed
  uint64_t durable_ = 0;      // mutations synced
  int64_t syncs_ = 0;
  Status error_;
  bool grouping_ = false;     // between Start() and Close()
  bool sync_scheduled_ = false;
  bool syncing_ = false;
  boost::asio::any_io_executor executor_;
  std::unique_ptr<boost::asio::thread_pool> sync_thread_;
  Status thread_result_;      // the sync thread's last write; read after join()
  // Replies waiting for a sync, by the mutation count they wait for
  // (non-decreasing); woken by cancelling their timer.
  struct Waiter {
    uint64_t seq;
    std::shared_ptr<boost::asio::steady_timer> wake;
  };
  std::deque<Waiter> waiters_;
};

}  // namespace mr::dfs

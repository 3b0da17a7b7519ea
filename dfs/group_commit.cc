#include "dfs/group_commit.h"

#include <boost/asio/post.hpp>
#include <rocksdb/db.h>
#include <spdlog/spdlog.h>

#include "common/awaitable.h"

namespace mr::dfs {

namespace asio = boost::asio;

GroupCommit::~GroupCommit() { Close(); }

void GroupCommit::Start(asio::any_io_executor executor) {
  executor_ = std::move(executor);
  sync_thread_ = std::make_unique<asio::thread_pool>(1);
  grouping_ = true;
}

Status GroupCommit::WriteSynced(rocksdb::WriteBatch* batch) {
  rocksdb::WriteOptions options;
  options.sync = true;
  rocksdb::Status s = db_->Write(options, batch);
  if (!s.ok()) return Status::IOError("namespace write failed: " + s.ToString());
  return Status::OK();
}

Status GroupCommit::Commit() {
  MR_RETURN_IF_ERROR(error_);
  ++committed_;
  if (!grouping_) {
    Status s = WriteSynced(&open_);
    open_.Clear();
    if (!s.ok()) {
      --committed_;
      return s;
    }
    ++syncs_;
    durable_ = committed_;
    return Status::OK();
  }
  // At the end of this turn of the executor, unless a sync is under way:
  // then its end starts the next one.
  if (!sync_scheduled_ && !syncing_) {
    sync_scheduled_ = true;
    asio::post(executor_, [self = shared_from_this()] {
      self->sync_scheduled_ = false;
      self->StartSync();
    });
  }
  return Status::OK();
}

void GroupCommit::StartSync() {
  if (!grouping_ || syncing_ || !error_.ok() || committed_ == durable_) return;
  if (open_.Count() == 0) {
    // Mutations that changed nothing (mkdir -p of an existing directory):
    // every batch before them is synced, so they are durable too.
    durable_ = committed_;
    Synced(Status::OK(), committed_);
    return;
  }
  syncing_ = true;
  auto batch = std::make_shared<rocksdb::WriteBatch>(std::move(open_));
  open_.Clear();
  const uint64_t seq = committed_;
  asio::post(*sync_thread_, [self = shared_from_this(), batch, seq] {
    Status s = self->WriteSynced(batch.get());
    self->thread_result_ = s;  // for Close(), which reads it after join()
    asio::post(self->executor_, [self, s, seq] { self->Synced(s, seq); });
  });
}

void GroupCommit::Synced(const Status& s, uint64_t seq) {
  if (syncing_) {
    syncing_ = false;
    ++syncs_;
  }
  if (s.ok()) {
    durable_ = std::max(durable_, seq);
  } else if (error_.ok()) {
    error_ = Status::IOError(s.message() +
                             "; the namespace is read-only until the master is restarted");
    spdlog::critical("{}", error_.message());
  }
  while (!waiters_.empty() && (waiters_.front().seq <= durable_ || !error_.ok())) {
    waiters_.front().wake->cancel();
    waiters_.pop_front();
  }
  if (committed_ > durable_) StartSync();
}

asio::awaitable<Status> GroupCommit::Durable() {
  auto self = shared_from_this();  // a reply may wait past Close()
  const uint64_t seq = committed_;
  if (durable_ < seq && error_.ok()) {
    auto wake = std::make_shared<asio::steady_timer>(executor_, asio::steady_timer::time_point::max());
    waiters_.push_back({seq, wake});
    co_await wake->async_wait(kTuple);
  }
  co_return durable_ >= seq ? Status::OK() : error_;
}

void GroupCommit::Close() {
  if (!grouping_) return;
  grouping_ = false;
  sync_thread_->join();  // the sync under way ends; its completion may never run
  // The open batch follows the one under way, so it is written only if that
  // one was (a gap would leave, say, a file without its new directory).
  Status s = syncing_ ? thread_result_ : error_;
  if (s.ok() && open_.Count() > 0) s = WriteSynced(&open_);
  open_.Clear();
  syncing_ = false;
  Synced(s, committed_);
}

}  // namespace mr::dfs

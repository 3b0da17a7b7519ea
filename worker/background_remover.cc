#include "worker/background_remover.h"

#include <string>
#include <system_error>

namespace mr::worker {

namespace fs = std::filesystem;

BackgroundRemover::BackgroundRemover() : thread_([this] { Loop(); }) {}

BackgroundRemover::~BackgroundRemover() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  queued_.notify_one();
  thread_.join();
}

void BackgroundRemover::Remove(const fs::path& path) {
  fs::path target = path;
  {
    std::lock_guard lock(mu_);
    const fs::path aside = path.parent_path() / (".removing-" + path.filename().string() + "-" +
                                                 std::to_string(++renamed_));
    std::error_code ec;
    fs::rename(path, aside, ec);
    if (!ec) target = aside;
    queue_.push_back(std::move(target));
  }
  queued_.notify_one();
}

void BackgroundRemover::Drain() {
  std::unique_lock lock(mu_);
  idle_.wait(lock, [this] { return queue_.empty() && !busy_; });
}

// Removes queued trees one at a time; on stop, those still queued too.
void BackgroundRemover::Loop() {
  std::unique_lock lock(mu_);
  while (true) {
    queued_.wait(lock, [this] { return stop_ || !queue_.empty(); });
    if (queue_.empty()) return;  // stopped, nothing left
    const fs::path path = std::move(queue_.front());
    queue_.pop_front();
    busy_ = true;
    lock.unlock();
    std::error_code ec;
    fs::remove_all(path, ec);
    lock.lock();
    busy_ = false;
    if (queue_.empty()) idle_.notify_all();
  }
}

}  // namespace mr::worker

#include "worker/task_log.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <vector>

namespace mr::worker {
namespace fs = std::filesystem;
namespace {

void WriteAllTo(int fd, std::string_view bytes) {
  while (!bytes.empty()) {
    const ssize_t w = ::write(fd, bytes.data(), bytes.size());
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return;  // a full disk loses log bytes, never the task
    bytes.remove_prefix(static_cast<size_t>(w));
  }
}

// The slice of a log whose first `head` bytes and last `tail` bytes (of
// `total` written) are kept, from stream offset `from`.
LogSlice Slice(std::string_view head, std::string_view tail, int64_t total, int64_t limit,
               int64_t from, int64_t max_bytes, bool done) {
  const int64_t h = static_cast<int64_t>(head.size());
  const int64_t tail_start = total - static_cast<int64_t>(tail.size());
  LogSlice out;
  out.total_bytes = total;
  out.omitted_bytes = tail_start - h;
  out.done = done;
  int64_t pos = std::clamp<int64_t>(from, 0, total);
  int64_t budget = std::max<int64_t>(max_bytes, 1);
  if (pos < h) {
    const int64_t take = std::min(h - pos, budget);
    out.data.append(head.substr(static_cast<size_t>(pos), static_cast<size_t>(take)));
    pos += take, budget -= take;
  }
  if (pos >= h && pos < tail_start && (budget > 0 || out.data.empty())) {
    out.data += OmittedLine(out.omitted_bytes, limit);
    pos = tail_start;
  }
  if (pos >= tail_start && pos < total && budget > 0) {
    const int64_t take = std::min(total - pos, budget);
    out.data.append(tail.substr(static_cast<size_t>(pos - tail_start), static_cast<size_t>(take)));
    pos += take;
  }
  out.next_offset = pos;
  out.more = pos < total;
  return out;
}

// "16:30:01.234", UTC.
std::string ClockText() {
  const auto now = std::chrono::system_clock::now();
  const std::time_t secs = std::chrono::system_clock::to_time_t(now);
  const int ms = static_cast<int>(
      std::chrono::duration_cast<std::chrono::milliseconds>(now.time_since_epoch()).count() % 1000);
  std::tm tm{};
  ::gmtime_r(&secs, &tm);
  char buf[32];
  std::snprintf(buf, sizeof buf, "%02d:%02d:%02d.%03d", tm.tm_hour, tm.tm_min, tm.tm_sec, ms);
  return buf;
}

std::string ReadWhole(const std::string& path, bool* ok) {
  std::ifstream f(path, std::ios::binary);
  *ok = static_cast<bool>(f);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

}  // namespace

std::string OmittedLine(int64_t omitted, int64_t limit_bytes) {
  return "\n[mr: " + std::to_string(omitted) + " bytes left out here: a log keeps its first and last " +
         std::to_string(limit_bytes / 2 / 1024) + " KiB ([task_logs] limit_kb)]\n";
}

Result<std::shared_ptr<TaskLog>> TaskLog::Create(const std::string& path, int64_t limit_bytes) {
  const int fd = path.empty() ? -1 : ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
  if (fd < 0 && !path.empty()) {
    return Status::IOError("cannot create task log '" + path + "': " + std::strerror(errno));
  }
  return std::shared_ptr<TaskLog>(new TaskLog(path, fd, std::max<int64_t>(limit_bytes, 2)));
}

TaskLog::TaskLog(std::string path, int fd, int64_t limit_bytes)
    : path_(std::move(path)), head_limit_(limit_bytes / 2), tail_limit_(limit_bytes - limit_bytes / 2),
      fd_(fd) {}

TaskLog::~TaskLog() { Close("failed"); }

void TaskLog::AppendLocked(std::string_view bytes) {
  if (done_ || bytes.empty()) return;
  total_ += static_cast<int64_t>(bytes.size());
  const size_t room = static_cast<size_t>(head_limit_) - head_.size();
  if (room > 0 && tail_.empty()) {
    const std::string_view first = bytes.substr(0, room);
    head_.append(first);
    WriteAllTo(fd_, first);
    bytes.remove_prefix(first.size());
  }
  tail_.append(bytes);
  if (static_cast<int64_t>(tail_.size()) > 2 * tail_limit_) {
    tail_.erase(0, tail_.size() - static_cast<size_t>(tail_limit_));
  }
}

void TaskLog::Append(std::string_view bytes) {
  std::lock_guard lock(mu_);
  AppendLocked(bytes);
}

void TaskLog::Line(std::string_view text) {
  std::string line = "[mr " + ClockText() + "] ";
  line.append(text);
  line += '\n';
  std::lock_guard lock(mu_);
  AppendLocked(line);
}

void TaskLog::Close(const std::string& state) {
  std::lock_guard lock(mu_);
  if (done_) return;
  done_ = true;
  if (static_cast<int64_t>(tail_.size()) > tail_limit_) {
    tail_.erase(0, tail_.size() - static_cast<size_t>(tail_limit_));
  }
  const int64_t omitted = total_ - static_cast<int64_t>(head_.size() + tail_.size());
  if (omitted > 0) WriteAllTo(fd_, OmittedLine(omitted, head_limit_ + tail_limit_));
  WriteAllTo(fd_, tail_);
  if (fd_ < 0) return;  // kept in memory only
  ::close(fd_);
  fd_ = -1;
  std::ofstream meta(path_.substr(0, path_.size() - 4) + ".meta", std::ios::trunc);
  meta << head_.size() << ' ' << total_ << ' ' << state << '\n';
}

LogSlice TaskLog::Read(int64_t from, int64_t max_bytes) const {
  std::lock_guard lock(mu_);
  std::string_view tail = tail_;
  if (static_cast<int64_t>(tail.size()) > tail_limit_) {
    tail.remove_prefix(tail.size() - static_cast<size_t>(tail_limit_));
  }
  return Slice(head_, tail, total_, head_limit_ + tail_limit_, from, max_bytes, done_);
}

// ---------------------------------------------------------------- TaskLogDir

std::string TaskLogDir::AttemptName(bool is_map, int32_t index, int32_t attempt) {
  return std::string(is_map ? "m-" : "r-") + std::to_string(index) + "-" + std::to_string(attempt);
}

Result<std::shared_ptr<TaskLog>> TaskLogDir::Create(int64_t job, bool is_map, int32_t index,
                                                    int32_t attempt) const {
  std::error_code ec;
  fs::create_directories(JobDir(job), ec);
  if (ec) return Status::IOError("cannot create '" + JobDir(job) + "': " + ec.message());
  return TaskLog::Create(JobDir(job) + "/" + AttemptName(is_map, index, attempt) + ".log", limit_);
}

Result<LogSlice> TaskLogDir::Read(int64_t job, bool is_map, int32_t index, int32_t attempt,
                                  int64_t from, int64_t max_bytes) const {
  const std::string base = JobDir(job) + "/" + AttemptName(is_map, index, attempt);
  bool ok = false;
  const std::string text = ReadWhole(base + ".log", &ok);
  if (!ok) return Status::NotFound("no log of that attempt here");
  bool has_meta = false;
  std::istringstream meta(ReadWhole(base + ".meta", &has_meta));
  int64_t head = 0, total = 0;
  if (!has_meta || !(meta >> head >> total) || head < 0 || head > static_cast<int64_t>(text.size())) {
    // The worker stopped while the attempt ran: only its head was written.
    const int64_t n = static_cast<int64_t>(text.size());
    LogSlice s = Slice(text, "", n, limit_, from, max_bytes, true);
    if (!s.more) s.data += "\n[mr: the worker stopped before this attempt ended; the rest of its log is lost]\n";
    return s;
  }
  // The kept tail follows the head, after the "left out" line when bytes
  // were left out (then the file holds fewer than were written).
  std::string_view tail = std::string_view(text).substr(static_cast<size_t>(head));
  if (total - head != static_cast<int64_t>(tail.size())) {
    const size_t marker = tail.find("]\n");
    tail = marker == std::string_view::npos ? std::string_view() : tail.substr(marker + 2);
  }
  return Slice(std::string_view(text).substr(0, static_cast<size_t>(head)), tail, total, limit_,
               from, max_bytes, true);
}

int TaskLogDir::Sweep(int64_t keep_ms, int keep_jobs, const std::set<int64_t>& running,
                      BackgroundRemover* remover) const {
  std::error_code ec;
  std::vector<std::pair<fs::file_time_type, fs::path>> jobs;  // newest first below
  for (const auto& e : fs::directory_iterator(root_, ec)) {
    const std::string name = e.path().filename().string();
    if (!e.is_directory(ec) || !name.starts_with("job-")) continue;
    int64_t id = -1;
    try {
      id = std::stoll(name.substr(4));
    } catch (const std::exception&) {
      continue;
    }
    if (running.contains(id)) continue;
    jobs.emplace_back(fs::last_write_time(e.path(), ec), e.path());
  }
  std::sort(jobs.begin(), jobs.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  const auto cutoff = fs::file_time_type::clock::now() - std::chrono::milliseconds(keep_ms);
  int removed = 0;
  for (size_t i = 0; i < jobs.size(); ++i) {
    if (static_cast<int64_t>(i) < keep_jobs - static_cast<int64_t>(running.size()) &&
        jobs[i].first >= cutoff) {
      continue;
    }
    if (remover != nullptr) {
      remover->Remove(jobs[i].second);
      ++removed;
      continue;
    }
    fs::remove_all(jobs[i].second, ec);
    removed += !ec;
  }
  return removed;
}

}  // namespace mr::worker

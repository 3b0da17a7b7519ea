#include "jobs/child_process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <thread>

extern char** environ;

namespace mr::jobs {
namespace {

constexpr size_t kQueueBytes = 256 << 10;  // stdin bytes queued before Write pumps
constexpr size_t kTailBytes = 2048;         // stderr kept for the error message

thread_local int64_t reaped_child_cpu_us = 0;

int64_t Us(const timeval& t) { return static_cast<int64_t>(t.tv_sec) * 1000000 + t.tv_usec; }

void CloseFd(int* fd) {
  if (*fd >= 0) ::close(*fd);
  *fd = -1;
}

}  // namespace

pid_t WaitChild(pid_t pid, int* status, int options) {
  rusage ru{};
  const pid_t r = ::wait4(pid, status, options, &ru);
  if (r > 0) reaped_child_cpu_us += Us(ru.ru_utime) + Us(ru.ru_stime);
  return r;
}

int64_t ReapedChildCpuUs() { return reaped_child_cpu_us; }

int64_t ThreadCpuUs() {
  timespec t{};
  ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
  return static_cast<int64_t>(t.tv_sec) * 1000000 + t.tv_nsec / 1000;
}

std::string OneLineTail(std::string_view s, size_t n) {
  while (!s.empty() && (s.back() == '\n' || s.back() == '\r')) s.remove_suffix(1);
  if (s.size() > n) {
    s = s.substr(s.size() - n);
    const size_t nl = s.find('\n');
    if (nl != std::string_view::npos && nl < 256) s = s.substr(nl + 1);
  }
  std::string out;
  for (char c : s) {
    if (c == '\n') {
      out += " | ";
    } else if (c != '\r') {
      out += c;
    }
  }
  return out;
}

std::vector<std::string> EnvironmentWith(const std::vector<std::string>& extra) {
  std::vector<std::string> out;
  auto name_of = [](std::string_view kv) { return kv.substr(0, kv.find('=') + 1); };
  for (char** e = environ; *e != nullptr; ++e) {
    const std::string_view kv(*e);
    bool replaced = false;
    for (const std::string& x : extra) replaced = replaced || name_of(x) == name_of(kv);
    if (!replaced) out.emplace_back(kv);
  }
  out.insert(out.end(), extra.begin(), extra.end());
  return out;
}

std::vector<char*> EnvPointers(const std::vector<std::string>& env) {
  std::vector<char*> envp;
  for (const std::string& kv : env) envp.push_back(const_cast<char*>(kv.c_str()));
  envp.push_back(nullptr);
  return envp;
}

Result<std::unique_ptr<ChildProcess>> ChildProcess::Start(Options options) {
  // A write to a child that exited must fail with EPIPE, not kill us.
  ::signal(SIGPIPE, SIG_IGN);
  std::unique_ptr<ChildProcess> c(new ChildProcess(std::move(options)));
  if (c->o_.reporter != nullptr) c->reporter_lines_ = std::make_unique<ReporterLineSplitter>(c->o_.reporter);
  int in[2], out[2], err[2];
  if (::pipe2(in, O_CLOEXEC) != 0) return Status::IOError(std::string("pipe: ") + std::strerror(errno));
  if (::pipe2(out, O_CLOEXEC) != 0) {
    ::close(in[0]), ::close(in[1]);
    return Status::IOError(std::string("pipe: ") + std::strerror(errno));
  }
  if (::pipe2(err, O_CLOEXEC) != 0) {
    ::close(in[0]), ::close(in[1]), ::close(out[0]), ::close(out[1]);
    return Status::IOError(std::string("pipe: ") + std::strerror(errno));
  }
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, in[0], 0);
  posix_spawn_file_actions_adddup2(&fa, out[1], 1);
  posix_spawn_file_actions_adddup2(&fa, err[1], 2);
  posix_spawn_file_actions_addclosefrom_np(&fa, 3);
  if (!c->o_.cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, c->o_.cwd.c_str());
  posix_spawnattr_t attr;
  InitChildSpawnAttr(&attr);
  const char* argv[] = {"sh", "-c", c->o_.command.c_str(), nullptr};
  const std::vector<std::string> env = EnvironmentWith(c->o_.env);
  std::vector<char*> envp = EnvPointers(env);
  const int rc = posix_spawn(&c->pid_, "/bin/sh", &fa, &attr, const_cast<char**>(argv), envp.data());
  posix_spawn_file_actions_destroy(&fa);
  posix_spawnattr_destroy(&attr);
  ::close(in[0]), ::close(out[1]), ::close(err[1]);
  c->in_ = in[1], c->out_ = out[0], c->err_ = err[0];
  if (rc != 0) {
    c->pid_ = -1;
    return Status::IOError("cannot start " + c->o_.role + " `" + c->o_.command + "`" +
                           (c->o_.cwd.empty() ? "" : " in '" + c->o_.cwd + "'") + ": " +
                           std::strerror(rc));
  }
  for (int fd : {c->in_, c->out_, c->err_}) ::fcntl(fd, F_SETFL, ::fcntl(fd, F_GETFL) | O_NONBLOCK);
  c->start_ = std::chrono::steady_clock::now();
  return c;
}

ChildProcess::~ChildProcess() {
  CloseFd(&in_), CloseFd(&out_), CloseFd(&err_);
  if (pid_ > 0 && !reaped_) {
    Kill();
    WaitChild(pid_, &wait_status_, 0);
  }
}

void ChildProcess::Kill() {
  if (pid_ > 0) ::kill(-pid_, SIGKILL);  // its own group: the shell and what it started
}

Status ChildProcess::Failure(const std::string& what) {
  Kill();
  std::string msg = o_.role + " `" + o_.command + "` " + what;
  const std::string tail = OneLineTail(err_tail_, kTailBytes);
  if (!tail.empty()) msg += "; stderr: " + tail;
  return Status::Aborted(msg);
}

Status ChildProcess::Write(std::string_view data) {
  if (in_ < 0) return Status::OK();  // the child closed its stdin: input is dropped
  in_buf_.append(data);
  if (in_buf_.size() - in_pos_ < kQueueBytes) return Status::OK();
  return Pump(kQueueBytes / 2, false);
}

// Splits out_buf_ into lines for on_line; keeps a partial last line.
Status ChildProcess::TakeLines() {
  size_t pos = 0;
  for (size_t nl; (nl = out_buf_.find('\n', pos)) != std::string::npos; pos = nl + 1) {
    size_t end = nl;
    if (end > pos && out_buf_[end - 1] == '\r') --end;
    if (end - pos > o_.max_line_bytes) break;
    o_.on_line(std::string_view(out_buf_).substr(pos, end - pos));
  }
  out_buf_.erase(0, pos);
  if (out_buf_.size() > o_.max_line_bytes + 1) {
    return Failure("wrote a line longer than " + std::to_string(o_.max_line_bytes) +
                   " bytes (the limit of one output line)");
  }
  return Status::OK();
}

void InitChildSpawnAttr(posix_spawnattr_t* attr) {
  posix_spawnattr_init(attr);
  posix_spawnattr_setflags(attr, POSIX_SPAWN_SETPGROUP | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
  posix_spawnattr_setpgroup(attr, 0);
  sigset_t all, none;
  sigfillset(&all);
  sigemptyset(&none);
  posix_spawnattr_setsigdefault(attr, &all);
  posix_spawnattr_setsigmask(attr, &none);
}

int WaitSliceMs(std::chrono::steady_clock::time_point start, int64_t timeout_ms) {
  constexpr int kSliceMs = 100;
  if (timeout_ms <= 0) return kSliceMs;
  const int64_t ran =
      std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  if (ran >= timeout_ms) return -1;
  return static_cast<int>(std::min<int64_t>(kSliceMs, timeout_ms - ran));
}

std::string TimeLimitMessage(int64_t timeout_ms) {
  return "ran longer than the task time limit (" + std::to_string(timeout_ms) +
         " ms, [jobs] task_timeout_ms or --param timeout_ms): killed";
}

Status ChildProcess::Pump(size_t keep, bool until_eof) {
  char buf[64 << 10];
  while (until_eof ? (out_ >= 0 || err_ >= 0) : in_buf_.size() - in_pos_ > keep && in_ >= 0) {
    if (o_.cancel != nullptr && o_.cancel->load()) return Failure("stopped: the task was killed");
    const int wait_ms = WaitSliceMs(start_, o_.timeout_ms);
    if (wait_ms < 0) return Failure(TimeLimitMessage(o_.timeout_ms));
    pollfd fds[3] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}, {-1, POLLOUT, 0}};
    if (!until_eof && in_pos_ < in_buf_.size()) fds[2].fd = in_;
    if (::poll(fds, 3, wait_ms) < 0 && errno != EINTR) {
      return Failure(std::string("poll: ") + std::strerror(errno));
    }
    if (fds[2].revents != 0) {
      const ssize_t n = ::write(in_, in_buf_.data() + in_pos_, in_buf_.size() - in_pos_);
      if (n > 0) {
        in_pos_ += static_cast<size_t>(n);
        if (in_pos_ == in_buf_.size() || in_pos_ > (1 << 20)) in_buf_.erase(0, in_pos_), in_pos_ = 0;
      } else if (n < 0 && errno != EAGAIN && errno != EINTR) {
        CloseFd(&in_);  // EPIPE: it stopped reading; the rest is dropped
        in_buf_.clear(), in_pos_ = 0;
      }
    }
    if (fds[0].revents != 0) {
      const ssize_t n = ::read(out_, buf, sizeof(buf));
      if (n > 0) {
        out_buf_.append(buf, static_cast<size_t>(n));
        MR_RETURN_IF_ERROR(TakeLines());
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        CloseFd(&out_);
      }
    }
    if (fds[1].revents != 0) {
      const ssize_t n = ::read(err_, buf, sizeof(buf));
      if (n > 0) {
        if (o_.on_stderr) o_.on_stderr(std::string_view(buf, static_cast<size_t>(n)));
        if (reporter_lines_) reporter_lines_->Feed(std::string_view(buf, static_cast<size_t>(n)));
        err_tail_.append(buf, static_cast<size_t>(n));
        if (err_tail_.size() > 4 * kTailBytes) err_tail_.erase(0, err_tail_.size() - 2 * kTailBytes);
      } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
        CloseFd(&err_);
      }
    }
  }
  return Status::OK();
}

Status ChildProcess::Finish() {
  MR_RETURN_IF_ERROR(Pump(0, false));
  CloseFd(&in_);
  MR_RETURN_IF_ERROR(Pump(0, true));
  if (reporter_lines_) reporter_lines_->Finish();
  if (!out_buf_.empty()) {  // a last line without '\n' counts
    out_buf_.push_back('\n');
    MR_RETURN_IF_ERROR(TakeLines());
  }
  // Both pipes are closed: the child has exited or is about to (or closed
  // them and runs on: the time limit still holds).
  for (;;) {
    const pid_t r = WaitChild(pid_, &wait_status_, WNOHANG);
    if (r == pid_) break;
    if (r < 0) return Failure(std::string("cannot be waited for: ") + std::strerror(errno));
    if (o_.cancel != nullptr && o_.cancel->load()) return Failure("stopped: the task was killed");
    if (o_.timeout_ms > 0 && std::chrono::steady_clock::now() - start_ >= std::chrono::milliseconds(o_.timeout_ms)) {
      return Failure("ran longer than the task time limit (" + std::to_string(o_.timeout_ms) +
                     " ms): killed");
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  reaped_ = true;
  Kill();  // anything it left running in its group
  if (WIFEXITED(wait_status_) && WEXITSTATUS(wait_status_) == 0) return Status::OK();
  if (WIFSIGNALED(wait_status_)) {
    const int sig = WTERMSIG(wait_status_);
    return Failure("was killed by signal " + std::to_string(sig) + " (" + strsignal(sig) + ")");
  }
  const int code = WEXITSTATUS(wait_status_);
  std::string what = "exited with status " + std::to_string(code);
  if (code == 127) what += " (command not found)";
  if (code == 126) what += " (not executable)";
  return Failure(what);
}

}  // namespace mr::jobs

#include "worker/task_child.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "jobs/child_process.h"
#include "proto/task_child.pb.h"
#include "worker/child_pipe.h"

extern char** environ;

namespace mr::worker {
namespace {

// A descriptor moved above the ones the child's file actions use (0-4).
int High(int fd) {
  const int high = ::fcntl(fd, F_DUPFD_CLOEXEC, 10);
  ::close(fd);
  return high;
}

// One mr-task child: spawned, fed and waited for. Its stdout and stderr go
// through one pipe, drained by a thread of ours into the attempt's log
// (o_.log), keeping the last bytes for error messages.
class Child {
 public:
  explicit Child(const ChildOptions& o) : o_(o) {}
  ~Child() {
    if (to_ >= 0) ::close(to_);
    if (from_ >= 0) ::close(from_);
    if (pid_ > 0) {
      ::kill(-pid_, SIGKILL);
      jobs::WaitChild(pid_, nullptr, 0);
    }
    if (drainer_.joinable()) drainer_.join();
  }

  Status Start() {
    ::signal(SIGPIPE, SIG_IGN);
    int in[2], out[2], log[2];
    if (::pipe2(in, O_CLOEXEC) != 0 || ::pipe2(out, O_CLOEXEC) != 0 || ::pipe2(log, O_CLOEXEC) != 0) {
      return Status::IOError(std::string("pipe: ") + std::strerror(errno));
    }
    for (int* fd : {&in[0], &in[1], &out[0], &out[1], &log[0], &log[1]}) *fd = High(*fd);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
    posix_spawn_file_actions_adddup2(&fa, log[1], 1);
    posix_spawn_file_actions_adddup2(&fa, log[1], 2);
    posix_spawn_file_actions_adddup2(&fa, in[0], kChildInFd);
    posix_spawn_file_actions_adddup2(&fa, out[1], kChildOutFd);
    posix_spawn_file_actions_addclosefrom_np(&fa, kChildOutFd + 1);
    if (!o_.cwd.empty()) posix_spawn_file_actions_addchdir_np(&fa, o_.cwd.c_str());
    posix_spawnattr_t attr;
    jobs::InitChildSpawnAttr(&attr);
    const char* argv[] = {"mr-task", nullptr};
    const std::vector<std::string> env = jobs::EnvironmentWith(o_.env);
    std::vector<char*> envp = jobs::EnvPointers(env);
    const int rc = posix_spawn(&pid_, o_.exe.c_str(), &fa, &attr, const_cast<char**>(argv), envp.data());
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
    ::close(in[0]), ::close(out[1]), ::close(log[1]);
    to_ = in[1], from_ = out[0];
    start_ = std::chrono::steady_clock::now();
    if (rc != 0) {
      ::close(log[0]);
      pid_ = -1;
      return Status::IOError("cannot start the task process " + o_.exe + ": " + std::strerror(rc));
    }
    drainer_ = std::thread([this, fd = log[0]] { Drain(fd); });
    return Status::OK();
  }

  Status Send(const google::protobuf::MessageLite& m) {
    Status s = WriteMessage(to_, m);
    return s.ok() ? s : Died();
  }

  // The next message; waits in slices, watching the time limit and cancel.
  Status Receive(pb::ChildMessage* m) {
    for (;;) {
      if (o_.cancel != nullptr && o_.cancel->load()) return Kill("stopped: the task was killed");
      const int wait_ms = jobs::WaitSliceMs(start_, o_.timeout_ms);
      if (wait_ms < 0) return Kill(jobs::TimeLimitMessage(o_.timeout_ms));
      pollfd p{from_, POLLIN, 0};
      if (::poll(&p, 1, wait_ms) > 0) break;
    }
    Status s = ReadMessage(from_, m);
    return s.ok() ? s : Died();
  }

 private:
  // Copies the child's output into the log until every writer closed it.
  void Drain(int fd) {
    char buf[16 << 10];
    for (;;) {
      const ssize_t n = ::read(fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) break;
      const std::string_view bytes(buf, static_cast<size_t>(n));
      if (o_.log) o_.log(bytes);
      tail_.append(bytes);
      if (tail_.size() > 8192) tail_.erase(0, tail_.size() - 4096);
    }
    ::close(fd);
  }

  // "; stderr: ..." with the end of the child's output, once it is gone.
  std::string Tail() {
    if (drainer_.joinable()) drainer_.join();
    const std::string tail = jobs::OneLineTail(tail_);
    return tail.empty() ? "" : "; stderr: " + tail;
  }

  Status Kill(const std::string& what) {
    ::kill(-pid_, SIGKILL);
    jobs::WaitChild(pid_, nullptr, 0);
    pid_ = -1;
    return Status::Aborted("task process (mr-task) " + what + Tail());
  }

  // The pipe broke: how the child ended.
  Status Died() {
    int status = 0;
    ::close(from_), from_ = -1;
    ::kill(-pid_, SIGKILL);  // if it only closed the pipe
    jobs::WaitChild(pid_, &status, 0);
    pid_ = -1;
    if (WIFSIGNALED(status)) {
      const int sig = WTERMSIG(status);
      return Status::Aborted("task process (mr-task) was killed by signal " + std::to_string(sig) +
                             " (" + strsignal(sig) + ")" + Tail());
    }
    return Status::Aborted("task process (mr-task) exited with status " +
                           std::to_string(WEXITSTATUS(status)) + " before its result" + Tail());
  }

  ChildOptions o_;
  pid_t pid_ = -1;
  std::thread drainer_;
  std::string tail_;  // written by drainer_ until it is joined
  int to_ = -1, from_ = -1;
  std::chrono::steady_clock::time_point start_;
};

// The job's counters and status that mr-task sent, into the attempt's.
void TakeCounters(const pb::ChildResult& r, jobs::Counters* counters) {
  if (counters == nullptr) return;
  for (const pb::Counter& c : r.counters()) counters->Increment(c.group(), c.name(), c.value());
  if (!r.status().empty()) counters->SetStatus(r.status());
}

Status ResultStatus(const pb::ChildResult& r) {
  if (r.error().empty()) return Status::OK();
  return r.invalid_argument() ? Status::InvalidArgument(r.error()) : Status::Aborted(r.error());
}

// Runs the child to its result, answering its reads with `read`.
Result<pb::ChildResult> Drive(const pb::ChildTask& task, const ChildOptions& o, const jobs::LineReader::ReadFn* read,
                              const std::function<void(const std::vector<int64_t>&)>* progress) {
  Child child(o);
  MR_RETURN_IF_ERROR(child.Start());
  MR_RETURN_IF_ERROR(child.Send(task));
  pb::ChildMessage m;
  std::string chunk;
  for (;;) {
    MR_RETURN_IF_ERROR(child.Receive(&m));
    if (m.has_result()) return m.result();
    if (m.has_progress() && progress != nullptr && *progress) {
      (*progress)({m.progress().partition_bytes().begin(), m.progress().partition_bytes().end()});
    }
    if (!m.has_read()) continue;
    pb::ChildData data;
    Status s = read != nullptr ? (*read)(m.read().offset(), m.read().length(), &chunk)
                               : Status::ProtocolError("a reduce task asked for input");
    if (s.ok()) {
      data.set_data(std::move(chunk));
    } else {
      data.set_error(s.ToString());
    }
    MR_RETURN_IF_ERROR(child.Send(data));
    if (!s.ok()) return s;  // the child reports it too; ours has the cause
  }
}

}  // namespace

std::string TaskChildPath() {
  std::error_code ec;
  const auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return (ec ? std::filesystem::path(".") : self.parent_path()).string() + "/mr-task";
}

Result<MapTaskResult> RunMapInChild(const MapTaskSpec& spec, const jobs::LineReader::ReadFn& read,
                                    const ChildOptions& options) {
  pb::ChildTask t;
  t.set_is_map(true);
  t.set_job(spec.job);
  for (const auto& [k, v] : spec.params) (*t.mutable_params())[k] = v;
  t.set_files_dir(spec.env.files_dir);
  t.set_reducers(spec.reducers);
  t.set_file(spec.file);
  t.set_file_length(spec.file_length);
  t.set_split_offset(spec.split_offset);
  t.set_split_length(spec.split_length);
  t.set_byte_before(spec.byte_before);
  t.set_sort_buffer_bytes(spec.sort_buffer_bytes);
  t.set_work_dir(spec.work_dir);
  MR_ASSIGN_OR_RETURN(pb::ChildResult r, Drive(t, options, &read, &spec.progress));
  TakeCounters(r, spec.env.counters);
  MR_RETURN_IF_ERROR(ResultStatus(r));
  MapTaskResult m;
  m.output_path = r.output_path();
  for (const pb::ChildSegment& c : r.segments()) {
    m.index.segments.push_back({c.offset(), c.compressed_bytes(), c.raw_bytes(), c.records()});
  }
  m.index.raw_bytes_in = r.raw_bytes_in();
  m.index.records_in = r.index_records_in();
  m.index.spills = r.spills();
  m.input_bytes = r.input_bytes();
  m.records_in = r.records_in();
  m.raw_output_bytes = r.raw_output_bytes();
  m.records_out = r.records_out();
  m.combine_records_in = r.combine_records_in();
  m.combine_records_out = r.combine_records_out();
  m.spilled_records = r.spilled_records();
  return m;
}

Result<ReduceTaskResult> RunReduceInChild(const ReduceTaskSpec& spec,
                                          const std::vector<std::string>& segments,
                                          const std::string& output, const std::string& work_dir,
                                          const ChildOptions& options) {
  pb::ChildTask t;
  t.set_is_map(false);
  t.set_job(spec.job);
  for (const auto& [k, v] : spec.params) (*t.mutable_params())[k] = v;
  t.set_files_dir(spec.env.files_dir);
  t.set_reducers(spec.reducers);
  t.set_index(spec.index);
  for (const std::string& s : segments) t.add_segments(s);
  t.set_output(output);
  MR_ASSIGN_OR_RETURN(pb::ChildResult r, Drive(t, options, nullptr, nullptr));
  TakeCounters(r, spec.env.counters);
  MR_RETURN_IF_ERROR(ResultStatus(r));
  ReduceTaskResult result;
  result.input_records = r.input_records();
  result.input_raw_bytes = r.input_raw_bytes();
  result.output_records = r.output_records();
  result.output_bytes = r.output_bytes();
  result.input_groups = r.input_groups();
  return result;
}

}  // namespace mr::worker

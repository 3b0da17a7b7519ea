#include "bench/master_scale/master_process.h"

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

extern char** environ;

namespace mr::bench {
namespace {

pid_t Spawn(std::vector<std::string> args) {
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = -1;
  if (posix_spawnp(&pid, argv[0], nullptr, nullptr, argv.data(), environ) != 0) return -1;
  return pid;
}

// Waits up to `seconds` for `pid` to exit; true when it did.
bool WaitExit(pid_t pid, int seconds) {
  for (int i = 0; i < seconds * 20; ++i) {
    if (waitpid(pid, nullptr, WNOHANG) == pid) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return false;
}

}  // namespace

Status MasterProcess::Start() {
  pid_ = Spawn({binary_, "--config", config_, "--log-file", log_, "--log-level", "warn"});
  if (pid_ < 0) return Status::IOError("cannot start " + binary_);
  return Status::OK();
}

void MasterProcess::Stop() {
  if (pid_ < 0) return;
  kill(pid_, SIGTERM);
  if (!WaitExit(pid_, 30)) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  pid_ = -1;
}

double MasterProcess::CpuSeconds() const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/stat");
  std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  // Fields after the command name (which may hold spaces): state is field 3,
  // utime 14, stime 15.
  const size_t close = text.rfind(')');
  if (close == std::string::npos) return 0;
  std::istringstream fields(text.substr(close + 2));
  std::string f;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> f; ++i) {
    if (i >= 14) ticks += std::stod(f);
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

int64_t MasterProcess::StatusField(const char* name) const {
  std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.starts_with(name)) return std::stoll(line.substr(std::string(name).size())) * 1024;
  }
  return 0;
}

pid_t StartPerf(pid_t pid, const std::string& out) {
  return Spawn({"perf", "record", "-g", "-q", "-p", std::to_string(pid), "-o", out});
}

void StopPerf(pid_t perf) {
  if (perf <= 0) return;
  kill(perf, SIGINT);
  if (!WaitExit(perf, 60)) {
    kill(perf, SIGKILL);
    waitpid(perf, nullptr, 0);
  }
}

}  // namespace mr::bench

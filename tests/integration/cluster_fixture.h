// A real local cluster for integration tests: deploy/local-cluster.sh in a
// private directory, and mrctl run as a separate process against it.
//
// Each test gets its own directory (and so its own ports and processes);
// the destructor stops every process the script started.
#pragma once

#include <sys/wait.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace mr::testing {

struct CommandResult {
  int exit_code = -1;
  std::string out;  // stdout; stderr goes to `err`
  std::string err;
};

inline std::string Env(const char* name, const std::string& fallback) {
  const char* v = std::getenv(name);
  return v && *v ? v : fallback;
}
inline std::string SourceDir() { return Env("MR_SOURCE_DIR", MR_TEST_SOURCE_DIR); }
inline std::string BuildDir() { return Env("MR_BUILD_DIR", MR_TEST_BUILD_DIR); }
// ../shared/data beside the checkout, or "" when absent.
inline std::string SharedDataDir() {
  std::filesystem::path p = std::filesystem::path(SourceDir()).parent_path() / "shared" / "data";
  return std::filesystem::exists(p) ? p.string() : "";
}

inline std::string Quote(const std::string& s) {
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

// Runs `command` with /bin/sh, capturing stdout and stderr.
inline CommandResult Shell(const std::string& command) {
  const std::string err_file = std::filesystem::temp_directory_path() /
                               ("mr-it-err-" + std::to_string(::getpid()) + "-" +
                                std::to_string(std::rand()));
  CommandResult r;
  FILE* p = ::popen((command + " 2>" + Quote(err_file)).c_str(), "r");
  if (!p) return r;
  std::array<char, 65536> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), p)) > 0) r.out.append(buf.data(), n);
  const int status = ::pclose(p);
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  std::ifstream e(err_file);
  std::stringstream ss;
  ss << e.rdbuf();
  r.err = ss.str();
  std::filesystem::remove(err_file);
  return r;
}

inline std::string Sha256OfFile(const std::string& path) {
  return Shell("sha256sum " + Quote(path) + " | cut -d' ' -f1").out;
}

// Polls `pred` every 100 ms until true or `timeout` passes.
inline bool WaitFor(const std::function<bool()>& pred, std::chrono::milliseconds timeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (std::chrono::steady_clock::now() < deadline) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return pred();
}

class LocalCluster {
 public:
  // Starts a cluster; `extra` are more local-cluster.sh options.
  LocalCluster(int workers, int datacenters, const std::string& extra = "") {
    dir_ = std::filesystem::temp_directory_path() /
           ("mr-it-" + std::to_string(::getpid()) + "-" + std::to_string(counter_++));
    std::filesystem::remove_all(dir_);
    up_ = Script("up --workers " + std::to_string(workers) + " --datacenters " +
                 std::to_string(datacenters) + " " + extra);
  }
  ~LocalCluster() {
    Script("down");
    if (!::testing::Test::HasFailure()) std::filesystem::remove_all(dir_);
  }

  const CommandResult& up() const { return up_; }
  const std::string& dir() const { return dir_; }
  std::string config() const { return dir_ + "/cluster.toml"; }

  // Daemons it starts carry MR_IT_CLUSTER=<dir> in their environment, and
  // so does everything they spawn (CountProcesses).
  CommandResult Script(const std::string& args) const {
    return Shell("MR_IT_CLUSTER=" + Quote(dir_) + " MR_BUILD_DIR=" + Quote(BuildDir()) + " " +
                 Quote(SourceDir()) + "/deploy/local-cluster.sh " + args + " --dir " + Quote(dir_));
  }
  // Processes of this cluster whose command line contains `what`: its
  // daemons and whatever they started (task children, streaming commands,
  // orphans among them), found by their MR_IT_CLUSTER, never by name
  // machine-wide.
  int CountProcesses(const std::string& what) const {
    const std::string marker = "MR_IT_CLUSTER=" + dir_;
    int n = 0;
    std::error_code ec;
    for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
      const std::string pid = e.path().filename().string();
      if (pid.find_first_not_of("0123456789") != std::string::npos) continue;
      auto read = [&](const char* file) {
        std::ifstream f(e.path() / file, std::ios::binary);
        return std::string(std::istreambuf_iterator<char>(f), {});
      };
      std::istringstream env(read("environ"));
      bool ours = false;
      for (std::string kv; !ours && std::getline(env, kv, '\0');) ours = kv == marker;
      std::string cmdline = read("cmdline");
      std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
      n += ours && cmdline.find(what) != std::string::npos;
    }
    return n;
  }
  CommandResult Mrctl(const std::string& args) const {
    return Shell(Quote(BuildDir() + "/tools/mrctl") + " --config " + Quote(config()) + " " + args);
  }
  nlohmann::json MrctlJson(const std::string& args) const {
    CommandResult r = Mrctl(args);
    EXPECT_EQ(r.exit_code, 0) << args << ": " << r.err;
    return nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
  }
  // Live workers, or 0 while the master is unreachable (e.g. restarting).
  int LiveWorkers() const {
    CommandResult r = Mrctl("cluster status --json");
    auto j = nlohmann::json::parse(r.out, nullptr, /*allow_exceptions=*/false);
    int live = 0;
    if (j.is_object()) {
      for (const auto& w : j["workers"]) live += w["live"].get<bool>();
    }
    return live;
  }
  // Path of a worker's block file (see docs/storage-format.md).
  std::string BlockFile(const std::string& worker, uint64_t id) const {
    char rel[64];
    std::snprintf(rel, sizeof rel, "/blocks/%02x/blk_%016llx", static_cast<unsigned>(id % 256),
                  static_cast<unsigned long long>(id));
    return dir_ + "/data/" + worker + "/blocks" + rel;
  }

 private:
  static inline int counter_ = 0;
  std::string dir_;
  CommandResult up_;
};

// A test with a private scratch directory, kept when the test fails (for a
// look at what it generated), and the mrctl helpers every cluster test uses.
class ScratchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // A parameterized test's name has a '/' ("Test/fifo"): one directory
    // level, not two, so that removing it leaves nothing behind.
    std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    std::replace(name.begin(), name.end(), '/', '-');
    work_ = std::filesystem::temp_directory_path() /
            ("mr-it-" + std::to_string(::getpid()) + "-" + name);
    std::filesystem::remove_all(work_);
    std::filesystem::create_directories(work_);
  }
  void TearDown() override {
    if (!HasFailure()) std::filesystem::remove_all(work_);
  }

  static std::string Mrctl() { return Quote(BuildDir() + "/tools/mrctl"); }

  // A generated file (mrctl gen) of `size` bytes in the scratch directory.
  std::string Generate(const std::string& kind, const std::string& size, int seed = 7) {
    const std::string path = work_ + "/" + kind + "-" + size + "-" + std::to_string(seed);
    CommandResult r = Shell(Mrctl() + " gen " + kind + " " + Quote(path) + " --size " + size +
                            " --seed " + std::to_string(seed));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    return path;
  }

  static std::string CatSha(const LocalCluster& c, const std::string& dfs_path) {
    return Shell(Mrctl() + " --config " + Quote(c.config()) + " dfs cat " + Quote(dfs_path) +
                 " | sha256sum | cut -d' ' -f1")
        .out;
  }

  std::string work_;
};

}  // namespace mr::testing

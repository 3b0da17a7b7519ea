#include "tools/cli_support.h"

#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

namespace mr::tools {
namespace fs = std::filesystem;

namespace {
std::string SearchUp(fs::path dir) {
  std::error_code ec;
  for (; !dir.empty(); dir = dir.parent_path()) {
    fs::path candidate = dir / ".mr" / "cluster.toml";
    if (fs::exists(candidate, ec)) return candidate.string();
    if (dir == dir.root_path()) break;
  }
  return "";
}
}  // namespace

Result<std::string> FindClusterFile(const std::string& explicit_path) {
  if (!explicit_path.empty()) return explicit_path;
  if (const char* env = std::getenv("MR_CONFIG"); env && *env) return std::string(env);
  std::error_code ec;
  if (auto found = SearchUp(fs::current_path(ec)); !found.empty()) return found;
  if (auto exe = fs::read_symlink("/proc/self/exe", ec); !ec) {
    if (auto found = SearchUp(exe.parent_path()); !found.empty()) return found;
  }
  return Status::NotFound(
      "no cluster file: pass --config FILE or --master HOST:PORT, set MR_CONFIG, or start a "
      "local cluster with deploy/local-cluster.sh up");
}

Result<int64_t> ParseBytes(const std::string& text) {
  size_t pos = 0;
  long double value = 0;
  try {
    value = std::stold(text, &pos);
  } catch (...) {
    return Status::InvalidArgument("'" + text + "' is not a size (e.g. 1048576, 64K, 4M, 1G)");
  }
  std::string unit = text.substr(pos);
  for (auto& c : unit) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  if (unit.ends_with("IB")) unit.resize(unit.size() - 2);
  else if (unit.size() > 1 && unit.ends_with("B")) unit.resize(unit.size() - 1);
  long double mult = 1;
  if (unit == "" || unit == "B") mult = 1;
  else if (unit == "K") mult = 1024.0L;
  else if (unit == "M") mult = 1024.0L * 1024;
  else if (unit == "G") mult = 1024.0L * 1024 * 1024;
  else if (unit == "T") mult = 1024.0L * 1024 * 1024 * 1024;
  else return Status::InvalidArgument("'" + text + "': unknown size unit '" + text.substr(pos) + "'");
  const long double bytes = value * mult;
  if (bytes < 0 || bytes > 9.0e18L) return Status::InvalidArgument("'" + text + "' is out of range");
  return static_cast<int64_t>(bytes);
}

std::string HumanBytes(int64_t bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  double v = static_cast<double>(bytes);
  int u = 0;
  while (v >= 1024 && u < 4) {
    v /= 1024;
    ++u;
  }
  char buf[32];
  std::snprintf(buf, sizeof buf, u == 0 ? "%.0f %s" : "%.1f %s", v, units[u]);
  return buf;
}

Status WriteFully(int fd, std::span<const char> data) {
  size_t done = 0;
  while (done < data.size()) {
    ssize_t n = ::write(fd, data.data() + done, data.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return Status::IOError(std::string("write: ") + std::strerror(errno));
    done += static_cast<size_t>(n);
  }
  return Status::OK();
}

}  // namespace mr::tools

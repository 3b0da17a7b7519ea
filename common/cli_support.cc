#include "common/cli_support.h"

#include <unistd.h>

#include <cctype>
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

namespace {

// "put, get, ls": the visible subcommands of `app`.
std::string SubcommandList(const CLI::App& app) {
  std::string out;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App* s) { return !s->get_group().empty(); })) {
    out += (out.empty() ? "" : ", ") + sub->get_name();
  }
  return out;
}

// CLI11's message, its first letter lowered to continue our line.
std::string Lowered(std::string what) {
  if (!what.empty() && std::isupper(static_cast<unsigned char>(what[0])) &&
      !(what.size() > 1 && std::isupper(static_cast<unsigned char>(what[1])))) {
    what[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(what[0])));
  }
  return what;
}

}  // namespace

int ReportParseError(const CLI::App& app, const CLI::ParseError& e, const std::string& program) {
  if (e.get_exit_code() == 0) return const_cast<CLI::App&>(app).exit(e);  // --help, --version
  // The command the words chose: the deepest subcommand parsed.
  const CLI::App* leaf = &app;
  std::string path = program;
  for (bool deeper = true; deeper;) {
    deeper = false;
    for (const CLI::App* sub : leaf->get_subcommands()) {
      leaf = sub;
      path += " " + sub->get_name();
      deeper = true;
      break;
    }
  }
  std::string stray;  // the first word no command or option took
  for (const std::string& w : app.remaining(true)) {
    if (!w.empty() && w[0] != '-') {
      stray = w;
      break;
    }
  }
  const std::string subs = SubcommandList(*leaf);
  const std::string rel = path.substr(program.size() + (path == program ? 0 : 1));  // "dfs", or ""
  const std::string prefix = rel.empty() ? "" : rel + ": ";
  const bool wants_command = !subs.empty() && leaf->get_subcommands().empty();
  std::string line;
  if (wants_command && !stray.empty()) {
    line = "no such command '" + (rel.empty() ? "" : rel + " ") + stray + "' (" +
           (rel.empty() ? "" : rel + " ") + "commands: " + subs + ")";
  } else if (wants_command && leaf->get_require_subcommand_min() > 0) {
    line = prefix + "a command is required (" + subs + "); see " + path + " --help";
  } else {
    line = prefix + Lowered(e.what()) + "; see " + path + " --help";
  }
  std::fprintf(stderr, "%s: %s\n", program.c_str(), line.c_str());
  return 2;
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

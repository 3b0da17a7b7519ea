// mrctl's `dfs` commands that move bytes between local files and the DFS
// (put, get, getmerge, cat) and those that show or change the tree (ls,
// rm, mkdir, stat). The verbs of mrctl_dfs_verbs.cc join them. docs/dfs.md
// describes each one.
#include "tools/mrctl_dfs.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include <nlohmann/json.hpp>

#include "dfs/input_type.h"
#include "dfs/namespace.h"
#include "common/cli_support.h"
#include "tools/progress.h"

namespace mr::tools {

std::string JoinDfs(const std::string& dir, const std::string& name) {
  return (dir == "/" ? "" : dir) + "/" + name;
}

namespace {

// ListTree's walk: `dir`'s children into `out`, each directory followed by
// its own subtree. `dir` by value: a coroutine outlives its caller's temporaries.
awaitable<Status> ListInto(dfs::DfsClient& c, std::string dir, bool internal, std::vector<DfsEntry>* out) {
  auto list = co_await c.List(dir);
  if (!list.ok()) co_return list.status();
  for (const auto& e : list->entries()) {
    std::string path = JoinDfs(dir, e.name());
    if (path == kInternalDir && !internal) continue;
    out->push_back({path, e.inode()});
    if (e.inode().kind() == pb::INode::DIR) MR_CO_RETURN_IF_ERROR(co_await ListInto(c, path, internal, out));
  }
  co_return Status::OK();
}

}  // namespace

awaitable<Result<std::vector<DfsEntry>>> ListTree(dfs::DfsClient& c, std::string dir, bool internal) {
  std::vector<DfsEntry> out;
  Status s = co_await ListInto(c, dir, internal, &out);
  if (!s.ok()) co_return s;
  co_return out;
}

namespace {

using nlohmann::json;
namespace fs = std::filesystem;

// Every option of the dfs commands; CLI11 writes into it while parsing.
struct DfsOptions {
  std::vector<std::string> put_paths;  // LOCAL... DFSPATH
  int replication = 0;
  std::string block_size;
  bool force = false;
  std::string path = "/";              // the DFS path of ls, cat, rm, mkdir, stat, get
  std::string local;                   // get's destination
  bool recursive = false;              // rm -r, ls -R
  bool parents = false;                // mkdir -p
  bool all = false;                    // ls -a
  bool human = false;                  // ls -h
  bool json = false;
  std::string put_datacenter;          // dfs put --datacenter
  bool read_stats = false;             // dfs cat|get --stats
};

json InodeJson(const std::string& path, const pb::INode& inode) {
  json j = {{"path", path},
            {"type", inode.kind() == pb::INode::DIR ? "dir" : "file"},
            {"mtime_ms", inode.mtime_ms()}};
  if (inode.kind() == pb::INode::FILE) {
    j["length"] = inode.length();
    j["replication"] = inode.replication();
    j["block_size"] = inode.block_size();
    j["input_type"] = inode.input_type();
    j["datacenter"] = inode.datacenter();  // replica 1 pinned here by the put; "" = none
  }
  return j;
}

// The local name a put of `local` takes in the DFS: its last component
// ("data/" and "data" → "data", "." → the current directory's name).
std::string LocalBaseName(const std::string& local) {
  std::error_code ec;
  fs::path p = fs::absolute(local, ec).lexically_normal();
  if (p.filename().empty()) p = p.parent_path();
  return p.filename().string();
}

// ------------------------------------------------------------------ put

struct PutItem {
  std::string local, dfs;
  bool dir = false;
  int64_t bytes = 0;
};

// The files and directories a put of `local` to `dst` makes, parents first;
// InvalidArgument for anything but regular files and directories (sockets,
// devices), found before a byte is sent.
Status PlanPut(const std::string& local, const std::string& dst, std::vector<PutItem>* plan) {
  std::error_code ec;
  const fs::file_status st = fs::status(local, ec);
  if (ec || !fs::exists(st)) return Status::NotFound("local file '" + local + "' does not exist");
  if (fs::is_regular_file(st)) {
    plan->push_back({local, dst, false, static_cast<int64_t>(fs::file_size(local, ec))});
    return Status::OK();
  }
  if (!fs::is_directory(st)) {
    return Status::InvalidArgument("'" + local + "' is not a regular file or a directory");
  }
  plan->push_back({local, dst, true, 0});
  std::vector<fs::path> children;
  for (fs::directory_iterator it(local, ec), end; !ec && it != end; it.increment(ec)) {
    children.push_back(it->path());
  }
  if (ec) return Status::IOError("cannot read directory '" + local + "': " + ec.message());
  std::sort(children.begin(), children.end());
  for (const auto& child : children) {
    MR_RETURN_IF_ERROR(PlanPut(child.string(), JoinDfs(dst, child.filename().string()), plan));
  }
  return Status::OK();
}

// Copies one local file, reporting bytes to `progress` from `before`.
awaitable<Status> PutFile(dfs::DfsClient& c, const PutItem& item, const dfs::PutOptions& options,
                          Progress& progress, int64_t before, int64_t total) {
  const int fd = ::open(item.local.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) co_return Status::IOError("cannot open '" + item.local + "': " + std::strerror(errno));
  struct stat st {};
  ::fstat(fd, &st);
  int64_t done = 0;
  dfs::ByteSource source = [&](int64_t offset, int64_t n, std::string* out) {
    out->resize(static_cast<size_t>(n));
    int64_t got = 0;
    while (got < n) {
      const ssize_t r = ::pread(fd, out->data() + got, static_cast<size_t>(n - got), offset + got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        return Status::IOError("read '" + item.local + "': " + (r < 0 ? std::strerror(errno) : "file shrank"));
      }
      got += r;
    }
    done = std::max(done, offset + n);  // a retried block reads its bytes again
    progress.Bytes(before + done, total);
    return Status::OK();
  };
  std::string first;
  Status s = source(0, std::min<int64_t>(st.st_size, dfs::kClassifySampleBytes), &first);
  done = 0;
  if (s.ok()) s = co_await c.Write(item.dfs, st.st_size, first, source, options);
  ::close(fd);
  co_return s;
}

// `dfs put LOCAL... DFSPATH`: files and whole directories (recursively).
awaitable<Status> Put(dfs::DfsClient& c, std::vector<std::string> locals, std::string dst,
                      dfs::PutOptions options) {
  MR_CO_RETURN_IF_ERROR(co_await InferLocation(c));
  auto normalized = dfs::NormalizePath(dst);
  if (!normalized.ok()) co_return normalized.status();
  const bool dir_syntax = dst.ends_with("/");  // "put a /newdir/" means into /newdir
  dst = *normalized;
  auto existing = co_await c.Stat(dst);
  const bool exists = existing.ok();
  if (!exists && !existing.status().IsNotFound()) co_return existing.status();
  if (exists && existing->inode().kind() == pb::INode::FILE && (locals.size() > 1 || dir_syntax)) {
    co_return Status::FailedPrecondition("'" + dst + "' is a file, not a directory");
  }
  const bool into_dir = locals.size() > 1 || dir_syntax || (exists && existing->inode().kind() == pb::INode::DIR);
  std::vector<PutItem> plan;
  for (const auto& l : locals) {
    MR_CO_RETURN_IF_ERROR(PlanPut(l, into_dir ? JoinDfs(dst, LocalBaseName(l)) : dst, &plan));
  }
  int64_t total = 0;
  for (const auto& item : plan) total += item.bytes;
  if (into_dir && !exists) MR_CO_RETURN_IF_ERROR(co_await c.Mkdir(dst, true));
  Progress progress("put " + dst);
  int64_t before = 0;
  for (const auto& item : plan) {
    if (item.dir) {
      // Like `hdfs dfs -put`: a directory copy never merges into one there.
      Status made = co_await c.Mkdir(item.dfs, false);
      if (made.IsAlreadyExists()) made = Status::AlreadyExists("'" + item.dfs + "' already exists");
      MR_CO_RETURN_IF_ERROR(made);
      continue;
    }
    MR_CO_RETURN_IF_ERROR(co_await PutFile(c, item, options, progress, before, total));
    before += item.bytes;
  }
  co_return Status::OK();
}

// ------------------------------------------------------------------ cat, get

// Streams a file, or every file of a directory in name order (part-00000,
// …; not names starting with '_' or '.'), to `sink`. `sink` by value:
// callers pass temporaries, and a coroutine outlives them.
awaitable<Status> Cat(dfs::DfsClient& c, std::string path, dfs::ByteSink sink, std::string what) {
  MR_CO_RETURN_IF_ERROR(co_await InferLocation(c));
  auto stat = co_await c.Stat(path);
  if (!stat.ok()) co_return stat.status();
  std::vector<std::string> files;
  int64_t total = 0;
  if (stat->inode().kind() == pb::INode::FILE) {
    files.push_back(stat->path());
    total = stat->inode().length();
  } else {
    auto list = co_await c.List(path);
    if (!list.ok()) co_return list.status();
    for (const auto& e : list->entries()) {
      if (e.inode().kind() != pb::INode::FILE || e.name().starts_with("_") || e.name().starts_with(".")) continue;
      files.push_back(JoinDfs(stat->path(), e.name()));
      total += e.inode().length();
    }
  }
  // No progress when the bytes go to a terminal: they would mix.
  std::optional<Progress> progress;
  if (!what.empty()) progress.emplace(what);
  int64_t done = 0;
  dfs::ByteSink counted = [&](std::span<const char> d) {
    done += static_cast<int64_t>(d.size());
    if (progress) progress->Bytes(done, total);
    return sink(d);
  };
  for (const auto& f : files) MR_CO_RETURN_IF_ERROR(co_await c.Read(f, counted));
  co_return Status::OK();
}

// dfs cat|get --stats: after the read, one line on stderr per datacenter
// other than mrctl's that blocks were read from, with the read rate
// estimate that ordered its replicas (docs/dfs.md, "Where reads come from").
void PrintReadStats(const dfs::DfsClient& c) {
  const std::string& here = c.location().datacenter;
  if (here.empty()) {
    std::fprintf(stderr,
                 "mrctl: read stats: mrctl does not know its datacenter (--datacenter): "
                 "replicas were read in the master's order and not timed\n");
    return;
  }
  const auto stats = c.link_rates().Stats();
  if (stats.empty()) std::fprintf(stderr, "mrctl: read stats: nothing read from outside %s\n", here.c_str());
  for (const auto& s : stats) {
    std::fprintf(stderr,
                 "mrctl: read stats: %s -> %s: %lld reads, %lld bytes, %lld rate samples, "
                 "estimate %.2f MB/s\n",
                 s.datacenter.c_str(), here.c_str(), static_cast<long long>(s.reads),
                 static_cast<long long>(s.bytes), static_cast<long long>(s.samples), s.estimate / 1e6);
  }
}

// Awaits `read`, then prints the read stats when asked, whether or not the
// read succeeded. `read` by value: the caller's awaitable is a temporary.
awaitable<Status> WithReadStats(dfs::DfsClient& c, awaitable<Status> read, bool stats) {
  Status s = co_await std::move(read);
  if (stats) PrintReadStats(c);
  co_return s;
}

// Writes what Cat(src) streams into `local`, through `local`.mrctl-partial,
// renamed into place at the end (removed on failure): never a partial copy.
awaitable<Status> CatToFile(dfs::DfsClient& c, std::string src, std::string local, std::string what) {
  const std::string tmp = local + ".mrctl-partial";
  int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) co_return Status::IOError("cannot create '" + tmp + "': " + std::strerror(errno));
  Status s = co_await Cat(c, src, [fd](std::span<const char> d) { return WriteFully(fd, d); }, what);
  if (::close(fd) != 0 && s.ok()) s = Status::IOError("close '" + tmp + "': " + std::strerror(errno));
  if (s.ok() && std::rename(tmp.c_str(), local.c_str()) != 0) {
    s = Status::IOError("rename to '" + local + "': " + std::strerror(errno));
  }
  if (!s.ok()) ::unlink(tmp.c_str());
  co_return s;
}

// `dfs get DFSPATH LOCAL`: a file to a file; a directory to a local
// directory tree, made as LOCAL.mrctl-partial and renamed into place when
// every file arrived (removed on failure). LOCAL an existing directory:
// into it, under the DFS name.
awaitable<Status> Get(dfs::DfsClient& c, std::string src, std::string local) {
  MR_CO_RETURN_IF_ERROR(co_await InferLocation(c));
  auto stat = co_await c.Stat(src);
  if (!stat.ok()) co_return stat.status();
  if (fs::is_directory(local)) {
    const std::string base = dfs::BaseName(stat->path());
    local = (fs::path(local) / (base.empty() ? "root" : base)).string();
  }
  if (stat->inode().kind() == pb::INode::FILE) {
    co_return co_await CatToFile(c, stat->path(), local, "get " + stat->path());
  }
  std::error_code ec;
  if (fs::exists(local, ec)) co_return Status::AlreadyExists("'" + local + "' already exists");
  auto tree = co_await ListTree(c, stat->path(), /*internal=*/false);
  if (!tree.ok()) co_return tree.status();
  const fs::path tmp = local + ".mrctl-partial";
  fs::remove_all(tmp, ec);
  Status s;
  if (!fs::create_directory(tmp, ec)) s = Status::IOError("cannot create '" + tmp.string() + "': " + ec.message());
  Progress progress("get " + stat->path());
  int64_t total = 0, before = 0;
  for (const auto& e : *tree) total += e.inode.kind() == pb::INode::FILE ? e.inode.length() : 0;
  for (const auto& e : *tree) {
    if (!s.ok()) break;
    const fs::path to = tmp / e.path.substr(stat->path() == "/" ? 1 : stat->path().size() + 1);
    if (e.inode.kind() == pb::INode::DIR) {
      if (!fs::create_directory(to, ec)) s = Status::IOError("cannot create '" + to.string() + "': " + ec.message());
      continue;
    }
    const int fd = ::open(to.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) {
      s = Status::IOError("cannot create '" + to.string() + "': " + std::strerror(errno));
      break;
    }
    dfs::ByteSink sink = [&](std::span<const char> d) {
      before += static_cast<int64_t>(d.size());
      progress.Bytes(before, total);
      return WriteFully(fd, d);
    };
    s = co_await c.Read(e.path, sink);
    if (::close(fd) != 0 && s.ok()) s = Status::IOError("close '" + to.string() + "': " + std::strerror(errno));
  }
  if (s.ok() && std::rename(tmp.c_str(), local.c_str()) != 0) {
    s = Status::IOError("rename to '" + local + "': " + std::strerror(errno));
  }
  if (!s.ok()) fs::remove_all(tmp, ec);  // never leave a partial copy behind
  co_return s;
}

// ------------------------------------------------------------------ ls, stat

// "2026-11-27 13:12", local time, as `hdfs dfs -ls` shows it.
std::string When(int64_t mtime_ms) {
  const std::time_t t = static_cast<std::time_t>(mtime_ms / 1000);
  std::tm tm{};
  localtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M", &tm);
  return buf;
}

// One `ls` line: kind, replication, size, modification time, input type, path.
void PrintLsLine(const std::string& path, const pb::INode& inode, bool human) {
  const bool dir = inode.kind() == pb::INode::DIR;
  const std::string size = human ? HumanBytes(inode.length()) : std::to_string(inode.length());
  std::printf("%s %3s %12s %s %-4s %s\n", dir ? "d" : "-",
              dir ? "-" : std::to_string(inode.replication()).c_str(), size.c_str(),
              When(inode.mtime_ms()).c_str(), dir ? "" : inode.input_type().c_str(), path.c_str());
}

// `dfs ls [-R] [-a] [-h] [--json] PATH`. A file lists itself. JSON keeps
// "path" relative to PATH (the name, without -R).
awaitable<Status> Ls(dfs::DfsClient& c, std::string path, DfsOptions o) {
  auto stat = co_await c.Stat(path);
  if (!stat.ok()) co_return stat.status();
  const std::string dir = stat->path();
  std::vector<DfsEntry> entries;
  if (stat->inode().kind() == pb::INode::FILE) {
    pb::INode inode = stat->inode();
    inode.clear_blocks();
    entries.push_back({dir, inode});
  } else if (o.recursive) {
    auto tree = co_await ListTree(c, dir, o.all);
    if (!tree.ok()) co_return tree.status();
    entries = std::move(*tree);
  } else {
    auto list = co_await c.List(dir);
    if (!list.ok()) co_return list.status();
    for (const auto& e : list->entries()) {
      if (JoinDfs(dir, e.name()) == kInternalDir && !o.all) continue;
      entries.push_back({JoinDfs(dir, e.name()), e.inode()});
    }
  }
  json out = json::array();
  for (const auto& e : entries) {
    if (!o.json) {
      PrintLsLine(e.path, e.inode, o.human);
      continue;
    }
    const std::string rel = e.path == dir ? dfs::BaseName(dir) : e.path.substr(dir == "/" ? 1 : dir.size() + 1);
    out.push_back(InodeJson(rel, e.inode));
  }
  if (o.json) std::printf("%s\n", out.dump(2).c_str());
  co_return Status::OK();
}

// For each datacenter, how many of the file's blocks have a live replica
// there (good or corrupt), by datacenter name.
std::map<std::string, int> BlocksByDatacenter(const pb::StatReply& stat) {
  std::map<std::string, int> count;
  for (const auto& b : stat.blocks()) {
    std::set<std::string> dcs;
    for (const auto& r : b.replicas()) dcs.insert(r.datacenter());
    for (const auto& r : b.corrupt_replicas()) dcs.insert(r.datacenter());
    for (const auto& dc : dcs) ++count[dc];
  }
  return count;
}

void PrintStatJson(const pb::StatReply& stat) {
  json j = InodeJson(stat.path(), stat.inode());
  if (stat.inode().kind() == pb::INode::FILE) {
    json blocks = json::array();
    for (const auto& b : stat.blocks()) {
      json replicas = json::array(), dcs = json::array(), corrupt = json::array();
      for (const auto& r : b.replicas()) {
        replicas.push_back(r.node_id());
        dcs.push_back(r.datacenter());
      }
      for (const auto& r : b.corrupt_replicas()) corrupt.push_back(r.node_id());
      blocks.push_back({{"id", b.id()}, {"offset", b.offset()}, {"bytes", b.bytes()},
                        {"replicas", replicas}, {"datacenters", dcs}, {"corrupt_replicas", corrupt}});
    }
    j["blocks"] = blocks;
    json by_dc = json::object();
    for (const auto& [dc, n] : BlocksByDatacenter(stat)) by_dc[dc] = n;
    j["blocks_by_datacenter"] = by_dc;
  }
  std::printf("%s\n", j.dump(2).c_str());
}

awaitable<Status> StatCmd(dfs::DfsClient& c, std::string path, bool as_json) {
  auto stat = co_await c.Stat(path);
  if (!stat.ok()) co_return stat.status();
  const auto& inode = stat->inode();
  if (as_json) {
    PrintStatJson(*stat);
    co_return Status::OK();
  }
  if (inode.kind() == pb::INode::DIR) {
    std::printf("%s: directory\n", stat->path().c_str());
    co_return Status::OK();
  }
  std::printf("%s: file, %lld bytes (%s), type %s, replication %d, block size %s, %d blocks\n",
              stat->path().c_str(), static_cast<long long>(inode.length()), HumanBytes(inode.length()).c_str(),
              inode.input_type().c_str(), inode.replication(), HumanBytes(inode.block_size()).c_str(),
              stat->blocks_size());
  std::printf("%6s %10s %14s %12s  %s\n", "block", "id", "offset", "bytes", "replicas (datacenter)");
  for (int i = 0; i < stat->blocks_size(); ++i) {
    const auto& b = stat->blocks(i);
    std::string where;
    for (const auto& r : b.replicas()) where += r.node_id() + "(" + r.datacenter() + ") ";
    if (b.replicas().empty() && !b.corrupt_replicas().empty()) where = "NO GOOD REPLICA ";
    for (const auto& r : b.corrupt_replicas()) where += r.node_id() + "(" + r.datacenter() + ",corrupt) ";
    if (where.empty()) where = "NO LIVE REPLICA";
    std::printf("%6d %10llu %14lld %12lld  %s\n", i, static_cast<unsigned long long>(b.id()),
                static_cast<long long>(b.offset()), static_cast<long long>(b.bytes()), where.c_str());
  }
  std::string by_dc;
  for (const auto& [dc, n] : BlocksByDatacenter(*stat)) {
    by_dc += (by_dc.empty() ? "" : ", ") + dc + " " + std::to_string(n) + "/" + std::to_string(stat->blocks_size());
  }
  if (!by_dc.empty()) std::printf("blocks with a live replica in: %s\n", by_dc.c_str());
  if (!inode.datacenter().empty()) {
    std::printf("replica 1 of every block placed in %s (dfs put --datacenter)\n", inode.datacenter().c_str());
  }
  co_return Status::OK();
}

int RunPut(Target& target, DfsOptions& o) {
  dfs::PutOptions put;
  put.replication = o.replication;
  put.overwrite = o.force;
  put.datacenter = o.put_datacenter;
  if (!o.block_size.empty()) {
    auto b = ParseBytes(o.block_size);
    if (!b.ok()) return Fail(b.status(), 2);
    put.block_size = *b;
  }
  std::vector<std::string> locals(o.put_paths.begin(), o.put_paths.end() - 1);
  return WithClient(target, [&](auto& c) { return Put(c, locals, o.put_paths.back(), put); });
}

void AddTransferCommands(CLI::App* dfs, Target& target, DfsOptions& o, std::function<int()>* action) {
  auto on = [action](CLI::App* cmd, std::function<int()> fn) { cmd->callback([action, fn] { *action = fn; }); };
  auto* put = dfs->add_subcommand("put", "copy local files and directories (recursively) into the DFS");
  put->add_option("paths", o.put_paths, "LOCAL... DFSPATH (a DFSPATH ending in / is a directory)")
      ->required()->expected(2, -1);
  put->add_option("-r,--replication", o.replication, "replicas per block (default: cluster file)");
  put->add_option("-b,--block-size", o.block_size, "block size, e.g. 64M (default: cluster file)");
  put->add_flag("-f,--force", o.force, "overwrite an existing file");
  put->add_option("--datacenter", o.put_datacenter,
                  "put replica 1 of every block in this datacenter (default: the placement policy decides)");
  on(put, [&target, &o] { return RunPut(target, o); });

  auto* get = dfs->add_subcommand("get", "copy a DFS file, or a directory with everything in it, to the local disk");
  get->add_option("DFSPATH", o.path, "the DFS file or directory")->required();
  get->add_option("LOCAL", o.local, "the local file or directory (an existing directory: into it)")->required();
  get->add_flag("--stats", o.read_stats,
                "after the copy, print on stderr the bytes read from each other datacenter and its measured read rate");
  on(get, [&target, &o] {
    return WithClient(target, [&](auto& c) { return WithReadStats(c, Get(c, o.path, o.local), o.read_stats); });
  });

  auto* merge = dfs->add_subcommand("getmerge", "concatenate a directory's files (in name order) into one local file");
  merge->add_option("DFSPATH", o.path, "the DFS directory (or file)")->required();
  merge->add_option("LOCAL", o.local, "the local file")->required();
  on(merge, [&target, &o] {
    return WithClient(target, [&](auto& c) { return CatToFile(c, o.path, o.local, "getmerge " + o.path); });
  });

  auto* cat = dfs->add_subcommand("cat", "print a DFS file, or a directory's files in name order");
  cat->add_option("PATH", o.path, "a DFS file or directory")->required();
  cat->add_flag("--stats", o.read_stats,
                "after the file, print on stderr the bytes read from each other datacenter and its measured read rate");
  on(cat, [&target, &o] {
    return WithClient(target, [&](auto& c) {
      const std::string what = ::isatty(1) == 1 ? "" : "cat " + o.path;
      return WithReadStats(c, Cat(c, o.path, [](std::span<const char> d) { return WriteFully(1, d); }, what),
                           o.read_stats);
    });
  });
}

}  // namespace

void AddDfsCommands(CLI::App& app, Target& target, std::function<int()>* action) {
  static DfsOptions o;  // lives as long as the parse and the action
  auto on = [action](CLI::App* cmd, std::function<int()> fn) { cmd->callback([action, fn] { *action = fn; }); };
  auto* dfs = app.add_subcommand("dfs", "the distributed file system")->require_subcommand(1);
  AddTransferCommands(dfs, target, o, action);

  auto* ls = dfs->add_subcommand("ls", "list a directory: kind, replication, size, modification time, type, path");
  ls->add_option("PATH", o.path, "a DFS directory or file (default: /)");
  ls->add_flag("-R,--recursive", o.recursive, "list subdirectories too");
  ls->add_flag("-a,--all", o.all, "show the runtime's internal /.mr directory");
  ls->set_help_flag("--help", "Print this help message and exit");  // -h is --human, as in hdfs
  ls->add_flag("-h,--human", o.human, "sizes as 1.5 MiB");
  ls->add_flag("--json", o.json, "print JSON");
  on(ls, [&target] { return WithClient(target, [](auto& c) { return Ls(c, o.path, o); }); });

  auto* rm = dfs->add_subcommand("rm", "remove a file or directory");
  rm->add_option("PATH", o.path, "a DFS file or directory")->required();
  rm->add_flag("-r,--recursive", o.recursive, "remove a non-empty directory and everything in it");
  on(rm, [&target] { return WithClient(target, [](auto& c) { return c.Delete(o.path, o.recursive); }); });

  auto* mkdir = dfs->add_subcommand("mkdir", "make a directory");
  mkdir->add_option("PATH", o.path, "the DFS directory to make")->required();
  mkdir->add_flag("-p,--parents", o.parents, "make parents as needed; no error if it exists");
  on(mkdir, [&target] { return WithClient(target, [](auto& c) { return c.Mkdir(o.path, o.parents); }); });

  auto* stat = dfs->add_subcommand("stat", "show a file's type tag and every block with its replicas");
  stat->add_option("PATH", o.path, "a DFS file or directory")->required();
  stat->add_flag("--json", o.json, "print JSON");
  on(stat, [&target] { return WithClient(target, [](auto& c) { return StatCmd(c, o.path, o.json); }); });

  AddDfsVerbCommands(*dfs, target, action);
}

}  // namespace mr::tools

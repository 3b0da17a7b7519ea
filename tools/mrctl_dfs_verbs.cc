// The `dfs` verbs `hdfs dfs` users expect beyond put/get/ls: mv, cp, du,
// tail, setrep and test (docs/dfs.md, "Commands"). Renames and replication
// changes are the master's (dfs.Rename, dfs.SetReplication); cp, du and
// tail are built from List, Stat, Read and Write on the client.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>

#include "dfs/namespace.h"
#include "common/cli_support.h"
#include "tools/mrctl_dfs.h"
#include "tools/progress.h"

namespace mr::tools {
namespace {

struct VerbOptions {
  std::vector<std::string> paths;  // SRC... DST, or PATH...
  bool force = false;               // cp -f
  bool summary = false;             // du -s
  bool human = false;               // du -h
  bool all = false;                 // du -a: count /.mr too
  int replication = 0;              // setrep N
  bool wait = false;                // setrep -w
  double timeout_s = 0;             // setrep -w --timeout (0: none)
  bool exists = false, is_dir = false, is_file = false;  // test -e|-d|-f
};

// Where SRC goes for mv and cp: into DST when DST is a directory, else DST
// itself. Several sources need an existing directory.
awaitable<Result<std::vector<std::pair<std::string, std::string>>>> Targets(dfs::DfsClient& c,
                                                                            std::vector<std::string> paths) {
  auto dst = dfs::NormalizePath(paths.back());
  if (!dst.ok()) co_return dst.status();
  auto existing = co_await c.Stat(*dst);
  if (!existing.ok() && !existing.status().IsNotFound()) co_return existing.status();
  const bool dir = existing.ok() && existing->inode().kind() == pb::INode::DIR;
  if (paths.size() > 2 && !dir) co_return Status::FailedPrecondition("'" + *dst + "' is not a directory (several sources)");
  std::vector<std::pair<std::string, std::string>> out;
  for (size_t i = 0; i + 1 < paths.size(); ++i) {
    auto src = dfs::NormalizePath(paths[i]);
    if (!src.ok()) co_return src.status();
    out.emplace_back(*src, dir ? JoinDfs(*dst, dfs::BaseName(*src)) : *dst);
  }
  co_return out;
}

awaitable<Status> Mv(dfs::DfsClient& c, std::vector<std::string> paths) {
  auto targets = co_await Targets(c, paths);
  if (!targets.ok()) co_return targets.status();
  for (const auto& [from, to] : *targets) MR_CO_RETURN_IF_ERROR(co_await c.Rename(from, to));
  co_return Status::OK();
}

// Copies one file through an unlinked local temporary file (the DFS file
// may be larger than memory), keeping its replication and block size.
awaitable<Status> CopyFile(dfs::DfsClient& c, std::string from, std::string to, pb::INode inode, bool force,
                           Progress& progress, int64_t* done, int64_t total) {
  std::FILE* tmp = std::tmpfile();
  if (tmp == nullptr) co_return Status::IOError("cannot make a temporary file for the copy (TMPDIR)");
  const int fd = ::fileno(tmp);
  dfs::ByteSink sink = [&](std::span<const char> d) {
    *done += static_cast<int64_t>(d.size());
    progress.Bytes(*done, total);
    return WriteFully(fd, d);
  };
  Status s = co_await c.Read(from, sink);
  const int64_t length = inode.length();
  dfs::ByteSource source = [fd](int64_t offset, int64_t n, std::string* out) {
    out->resize(static_cast<size_t>(n));
    if (::pread(fd, out->data(), static_cast<size_t>(n), offset) != n) return Status::IOError("read of the temporary copy");
    return Status::OK();
  };
  std::string first;
  if (s.ok()) s = source(0, std::min<int64_t>(length, 64 * 1024), &first);
  dfs::PutOptions options;
  options.replication = inode.replication();
  options.block_size = inode.block_size();
  options.overwrite = force;
  options.datacenter = inode.datacenter();
  if (s.ok()) s = co_await c.Write(to, length, first, source, options);
  std::fclose(tmp);
  co_return s;
}

// `dfs cp [-f] SRC... DST`: files, and directories with everything in them.
awaitable<Status> Cp(dfs::DfsClient& c, std::vector<std::string> paths, bool force) {
  MR_CO_RETURN_IF_ERROR(co_await InferLocation(c));
  auto targets = co_await Targets(c, paths);
  if (!targets.ok()) co_return targets.status();
  for (const auto& [from, to] : *targets) {
    if (to == from || to.starts_with(from + "/")) {
      co_return Status::InvalidArgument("cannot copy '" + from + "' into itself");
    }
    auto stat = co_await c.Stat(from);
    if (!stat.ok()) co_return stat.status();
    std::vector<DfsEntry> items;
    if (stat->inode().kind() == pb::INode::FILE) {
      items.push_back({from, stat->inode()});
    } else {
      MR_CO_RETURN_IF_ERROR(co_await c.Mkdir(to, false));
      auto tree = co_await ListTree(c, from, /*internal=*/false);
      if (!tree.ok()) co_return tree.status();
      items = std::move(*tree);
    }
    int64_t total = 0, done = 0;
    for (const auto& e : items) total += e.inode.kind() == pb::INode::FILE ? e.inode.length() : 0;
    Progress progress("cp " + from);
    for (const auto& e : items) {
      const std::string dst = e.path == from ? to : to + e.path.substr(from == "/" ? 0 : from.size());
      if (e.inode.kind() == pb::INode::DIR) {
        MR_CO_RETURN_IF_ERROR(co_await c.Mkdir(dst, false));
        continue;
      }
      MR_CO_RETURN_IF_ERROR(co_await CopyFile(c, e.path, dst, e.inode, force, progress, &done, total));
    }
  }
  co_return Status::OK();
}

// `dfs du [-s] [-h] [-a] PATH...`: like `hdfs dfs -du`, per line the bytes,
// the bytes stored counting every replica, and the path; one line per entry
// of a directory, or with -s one per PATH.
awaitable<Status> Du(dfs::DfsClient& c, std::vector<std::string> paths, VerbOptions o) {
  auto size = [&o](int64_t n) { return o.human ? HumanBytes(n) : std::to_string(n); };
  for (const std::string& raw : paths) {
    auto stat = co_await c.Stat(raw);
    if (!stat.ok()) co_return stat.status();
    const std::string root = stat->path();
    std::vector<DfsEntry> tree;
    if (stat->inode().kind() == pb::INode::FILE) {
      tree.push_back({root, stat->inode()});
    } else {
      auto listed = co_await ListTree(c, root, o.all);
      if (!listed.ok()) co_return listed.status();
      tree = std::move(*listed);
    }
    // Totals per line: the whole PATH with -s (or for a file), else per
    // entry of the directory (a subdirectory counts everything under it).
    const bool one = o.summary || stat->inode().kind() == pb::INode::FILE;
    std::vector<std::string> order;
    std::map<std::string, std::pair<int64_t, int64_t>> totals;
    if (one) order.push_back(root);
    for (const auto& e : tree) {
      std::string key = root;
      if (!one) {
        key = e.path.substr(0, e.path.find('/', root == "/" ? 1 : root.size() + 1));
        if (key == e.path) order.push_back(key);  // a directory's entry comes before its subtree
      }
      auto& t = totals[key];
      if (e.inode.kind() == pb::INode::FILE) {
        t.first += e.inode.length();
        t.second += e.inode.length() * e.inode.replication();
      }
    }
    for (const auto& key : order) {
      const auto& t = totals[key];
      std::printf("%-12s %-12s %s\n", size(t.first).c_str(), size(t.second).c_str(), key.c_str());
    }
  }
  co_return Status::OK();
}

// `dfs tail PATH`: the file's last KiB, as `hdfs dfs -tail` prints it.
awaitable<Status> Tail(dfs::DfsClient& c, std::string path) {
  constexpr int64_t kTailBytes = 1024;
  MR_CO_RETURN_IF_ERROR(co_await InferLocation(c));
  auto stat = co_await c.Stat(path);
  if (!stat.ok()) co_return stat.status();
  if (stat->inode().kind() != pb::INode::FILE) co_return Status::FailedPrecondition("'" + stat->path() + "' is a directory");
  const int64_t from = std::max<int64_t>(0, stat->inode().length() - kTailBytes);
  dfs::ByteSink out = [](std::span<const char> d) { return WriteFully(1, d); };
  for (const auto& b : stat->blocks()) {
    if (b.offset() + b.bytes() <= from) continue;
    const int64_t start = std::max<int64_t>(0, from - b.offset());
    MR_CO_RETURN_IF_ERROR(co_await c.ReadBlock(b, start, b.bytes() - start, out));
  }
  co_return Status::OK();
}

// Blocks of the files at or under `path` and how many have exactly
// `replication` good replicas now.
awaitable<Result<std::pair<int64_t, int64_t>>> Replicated(dfs::DfsClient& c, std::string path, int replication) {
  auto stat = co_await c.Stat(path);
  if (!stat.ok()) co_return stat.status();
  std::vector<std::string> files;
  if (stat->inode().kind() == pb::INode::FILE) {
    files.push_back(stat->path());
  } else {
    auto tree = co_await ListTree(c, stat->path(), /*internal=*/true);
    if (!tree.ok()) co_return tree.status();
    for (const auto& e : *tree) {
      if (e.inode.kind() == pb::INode::FILE) files.push_back(e.path);
    }
  }
  int64_t blocks = 0, done = 0;
  for (const auto& f : files) {
    Result<pb::StatReply> file = *stat;
    if (f != stat->path()) file = co_await c.Stat(f);  // if/else: no co_await in ?: (docs/development.md)
    if (!file.ok()) co_return file.status();
    for (const auto& b : file->blocks()) {
      ++blocks;
      done += b.replicas_size() == replication;
    }
  }
  co_return std::make_pair(blocks, done);
}

// `dfs setrep [-w] N PATH...`: the master records N for every file at or
// under each PATH and copies or trims replicas; -w polls until every block
// has exactly N good replicas (or --timeout passes).
awaitable<Status> Setrep(dfs::DfsClient& c, std::vector<std::string> paths, VerbOptions o) {
  for (const auto& p : paths) {
    pb::SetReplicationRequest req;
    req.set_path(p);
    req.set_replication(o.replication);
    pb::SetReplicationReply reply;
    MR_CO_RETURN_IF_ERROR(co_await c.CallMaster("dfs.SetReplication", req, &reply));
    std::printf("Replication %d set: %s\n", o.replication, p.c_str());
  }
  std::fflush(stdout);
  if (!o.wait) co_return Status::OK();
  asio::steady_timer timer(co_await asio::this_coro::executor);
  for (const auto& p : paths) {
    Progress progress("setrep " + p);
    while (true) {
      auto state = co_await Replicated(c, p, o.replication);
      if (!state.ok()) co_return state.status();
      const auto [blocks, done] = *state;
      progress.Update(blocks > 0 ? static_cast<double>(done) / static_cast<double>(blocks) : 1.0,
                      std::to_string(done) + " of " + std::to_string(blocks) + " blocks at " +
                          std::to_string(o.replication) + " replicas");
      if (done == blocks) break;
      if (o.timeout_s > 0 && progress.Elapsed() > o.timeout_s) {
        co_return Status::TimedOut("setrep -w " + p + ": " + std::to_string(blocks - done) + " of " +
                                   std::to_string(blocks) + " blocks still not at " +
                                   std::to_string(o.replication) + " replicas after --timeout");
      }
      timer.expires_after(std::chrono::milliseconds(500));
      co_await timer.async_wait(asio::as_tuple(asio::use_awaitable));
    }
  }
  co_return Status::OK();
}

// `dfs test -e|-d|-f PATH`: exit 0 (true) or 1 (false), no output; 2 with
// one line when the master could not be asked.
int Test(Target& target, const VerbOptions& o) {
  if (o.exists + o.is_dir + o.is_file != 1) {
    return Fail(Status::InvalidArgument("dfs test wants exactly one of -e, -d, -f"), 2);
  }
  bool answer = false;
  Status error;
  const int rc = WithClient(target, [&](dfs::DfsClient& c) -> awaitable<Status> {
    auto stat = co_await c.Stat(o.paths.front());
    if (stat.ok()) {
      const bool dir = stat->inode().kind() == pb::INode::DIR;
      answer = o.exists || (o.is_dir && dir) || (o.is_file && !dir);
    } else if (!stat.status().IsNotFound()) {
      error = stat.status();
    }
    co_return Status::OK();
  });
  if (rc != 0) return 2;
  if (!error.ok()) return Fail(error, 2);
  return answer ? 0 : 1;
}

}  // namespace

void AddDfsVerbCommands(CLI::App& dfs, Target& target, std::function<int()>* action) {
  static VerbOptions o;  // lives as long as the parse and the action
  auto on = [action](CLI::App* cmd, std::function<int()> fn) { cmd->callback([action, fn] { *action = fn; }); };
  auto* mv = dfs.add_subcommand("mv", "move or rename files and directories (refused while a running job uses them)");
  mv->add_option("paths", o.paths, "SRC... DST (an existing directory DST: into it)")->required()->expected(2, -1);
  on(mv, [&target] { return WithClient(target, [](auto& c) { return Mv(c, o.paths); }); });

  auto* cp = dfs.add_subcommand("cp", "copy files and directories within the DFS (same replication and block size)");
  cp->add_option("paths", o.paths, "SRC... DST (an existing directory DST: into it)")->required()->expected(2, -1);
  cp->add_flag("-f,--force", o.force, "overwrite existing files");
  on(cp, [&target] { return WithClient(target, [](auto& c) { return Cp(c, o.paths, o.force); }); });

  auto* du = dfs.add_subcommand("du", "bytes and bytes stored with every replica, per entry of a directory");
  du->set_help_flag("--help", "Print this help message and exit");  // -h is --human, as in hdfs
  du->add_option("PATH", o.paths, "DFS files or directories (default: /)");
  du->add_flag("-s,--summary", o.summary, "one total per PATH");
  du->add_flag("-h,--human", o.human, "sizes as 1.5 MiB");
  du->add_flag("-a,--all", o.all, "count the runtime's internal /.mr directory too");
  on(du, [&target] {
    if (o.paths.empty()) o.paths.push_back("/");
    return WithClient(target, [](auto& c) { return Du(c, o.paths, o); });
  });

  auto* tail = dfs.add_subcommand("tail", "print the last KiB of a file");
  tail->add_option("PATH", o.paths, "a DFS file")->required()->expected(1);
  on(tail, [&target] { return WithClient(target, [](auto& c) { return Tail(c, o.paths.front()); }); });

  auto* setrep = dfs.add_subcommand("setrep", "change the replication of a file, or of every file under a directory");
  setrep->add_option("N", o.replication, "replicas per block")->required();
  setrep->add_option("PATH", o.paths, "DFS files or directories")->required();
  setrep->add_flag("-w,--wait", o.wait, "wait until every block has N replicas");
  setrep->add_option("--timeout", o.timeout_s, "with -w: give up (exit 1) after this many seconds (default: wait)");
  on(setrep, [&target] { return WithClient(target, [](auto& c) { return Setrep(c, o.paths, o); }); });

  auto* test = dfs.add_subcommand("test", "exit 0 if PATH exists (-e), is a directory (-d) or a file (-f), else 1");
  test->add_flag("-e", o.exists, "PATH exists");
  test->add_flag("-d", o.is_dir, "PATH is a directory");
  test->add_flag("-f", o.is_file, "PATH is a file");
  test->add_option("PATH", o.paths, "a DFS path")->required()->expected(1);
  on(test, [&target] { return Test(target, o); });
}

}  // namespace mr::tools

// What mrctl's two `dfs` files share (mrctl_dfs.cc: put, get, getmerge,
// cat, ls, rm, mkdir, stat; mrctl_dfs_verbs.cc: mv, cp, du, tail, setrep,
// test). Internal to mrctl.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "dfs/client.h"
#include "tools/mrctl_common.h"

namespace mr::tools {

// "/a" + "b" → "/a/b"; "/" + "b" → "/b".
std::string JoinDfs(const std::string& dir, const std::string& name);

// The internal directory of the runtime (jobs' temporary outputs):
// `dfs ls` and `dfs du` of "/" leave it out unless asked (-a).
inline constexpr const char kInternalDir[] = "/.mr";

// One entry of a DFS tree: its full path and inode (without blocks).
struct DfsEntry {
  std::string path;
  pb::INode inode;
};

// Every entry below the directory `dir` (not `dir` itself), parents
// before their children, siblings by name. /.mr is left out unless
// `internal`. Called by ls -R, du, get and cp of a directory, setrep -w.
awaitable<Result<std::vector<DfsEntry>>> ListTree(dfs::DfsClient& c, std::string dir, bool internal);

// Adds mv, cp, du, tail, setrep and test to the `dfs` command
// (mrctl_dfs_verbs.cc). Each callback stores what to run in *action.
void AddDfsVerbCommands(CLI::App& dfs, Target& target, std::function<int()>* action);

}  // namespace mr::tools

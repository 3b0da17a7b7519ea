#include "dfs/namespace.h"

#include <gtest/gtest.h>
#include <rocksdb/db.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <initializer_list>
#include <set>
#include <string>
#include <vector>

namespace mr::dfs {
namespace {

namespace fs = std::filesystem;

// ------------------------------------------------------------- path helpers

TEST(NormalizePathTest, AcceptsAndCleansAbsolutePaths) {
  // Trailing and repeated slashes are tolerated and removed.
  const std::pair<const char*, const char*> cases[] = {
      {"/", "/"},
      {"//", "/"},
      {"///", "/"},
      {"/a", "/a"},
      {"/a/", "/a"},
      {"/a//b", "/a/b"},
      {"//a///b//", "/a/b"},
      {"/a/b/c", "/a/b/c"},
      // Dots inside a name are ordinary characters.
      {"/...", "/..."},
      {"/.hidden", "/.hidden"},
      {"/a.b/c..", "/a.b/c.."},
      {"/a b", "/a b"},
  };
  for (const auto& [in, want] : cases) {
    auto got = NormalizePath(in);
    ASSERT_TRUE(got.ok()) << in << ": " << got.status().ToString();
    EXPECT_EQ(*got, want) << in;
  }
}

TEST(NormalizePathTest, RejectsRelativeDotAndNul) {
  // Only absolute paths without '.', '..' or NUL name a unique namespace entry.
  const std::string bad[] = {"",     "a",     "a/b",    "./a",     "/.",   "/..",
                             "/a/.", "/a/..", "/a/./b", "/a/../b", "//./", std::string("/a\0b", 4)};
  for (const auto& path : bad) {
    auto got = NormalizePath(path);
    EXPECT_TRUE(got.status().IsInvalidArgument())
        << testing::PrintToString(path) << " → " << (got.ok() ? *got : got.status().ToString());
  }
}

TEST(NormalizePathTest, AComponentIsAtMost255Bytes) {
  // Issue 28 item 12: as HDFS (and local file systems a `dfs get` writes to).
  const std::string ok_name(255, 'a'), long_name(256, 'a');
  EXPECT_TRUE(NormalizePath("/d/" + ok_name).ok());
  auto got = NormalizePath("/d/" + long_name + "/x");
  ASSERT_TRUE(got.status().IsInvalidArgument());
  EXPECT_NE(got.status().message().find("is 256 bytes; at most 255"), std::string::npos)
      << got.status().ToString();
}

TEST(PathTest, ParentAndBaseName) {
  // The key layout splits every path into parent + name with these two.
  EXPECT_EQ(ParentPath("/a/b"), "/a");
  EXPECT_EQ(ParentPath("/a/b/c"), "/a/b");
  EXPECT_EQ(ParentPath("/a"), "/");
  EXPECT_EQ(BaseName("/a/b"), "b");
  EXPECT_EQ(BaseName("/a"), "a");
  EXPECT_EQ(BaseName("/a b/c d"), "c d");
}

// ---------------------------------------------------------------- Namespace

pb::INode MakeFile(std::initializer_list<uint64_t> block_ids, std::string input_type = "text") {
  pb::INode f;
  f.set_kind(pb::INode::FILE);
  f.set_mtime_ms(1234);
  f.set_replication(3);
  f.set_block_size(64 << 20);
  f.set_input_type(std::move(input_type));
  int64_t length = 0;
  for (uint64_t id : block_ids) {
    auto* b = f.add_blocks();
    b->set_id(id);
    b->set_bytes(100);
    length += 100;
  }
  f.set_length(length);
  return f;
}

std::vector<uint64_t> Sorted(std::vector<uint64_t> v) {
  std::sort(v.begin(), v.end());
  return v;
}

class NamespaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ =
        ::testing::TempDir() + "namespace_test_" + info->name() + "_" + std::to_string(::getpid());
    fs::remove_all(dir_);
    Reopen();
  }
  void TearDown() override {
    ns_.reset();
    fs::remove_all(dir_);
  }

  void Reopen() {
    ns_.reset();  // closes the DB (releases its lock) before opening again
    auto ns = Namespace::Open(dir_);
    ASSERT_TRUE(ns.ok()) << ns.status().ToString();
    ns_ = std::move(ns).value();
  }

  // Names of the entries List(path) returns, in order.
  std::vector<std::string> ListNames(const std::string& path) {
    auto list = ns_->List(path);
    EXPECT_TRUE(list.ok()) << path << ": " << list.status().ToString();
    std::vector<std::string> names;
    if (list.ok()) {
      for (const auto& [name, inode] : *list) names.push_back(name);
    }
    return names;
  }

  void Add(const std::string& path, std::initializer_list<uint64_t> blocks) {
    std::vector<uint64_t> freed;
    ASSERT_TRUE(ns_->AddFile(path, MakeFile(blocks), false, &freed).ok()) << path;
    ASSERT_TRUE(freed.empty());
  }

  // Closes the namespace and writes one raw key into its RocksDB (namespace.h layout).
  void PutRaw(const std::string& key, const std::string& value) {
    ns_.reset();
    rocksdb::DB* raw = nullptr;
    rocksdb::Options options;
    ASSERT_TRUE(rocksdb::DB::Open(options, dir_, &raw).ok());
    std::unique_ptr<rocksdb::DB> db(raw);
    ASSERT_TRUE(db->Put(rocksdb::WriteOptions(), key, value).ok());
  }

  bool Exists(const std::string& path) { return ns_->Lookup(path).ok(); }
  bool IsDir(const std::string& path) {
    auto n = ns_->Lookup(path);
    return n.ok() && n->kind() == pb::INode::DIR;
  }

  std::string dir_;
  std::unique_ptr<Namespace> ns_;
};

using Names = std::vector<std::string>;

TEST_F(NamespaceTest, RootAlwaysExists) {
  // "/" is implicit: a fresh namespace can look it up and list it.
  auto root = ns_->Lookup("/");
  ASSERT_TRUE(root.ok());
  EXPECT_EQ(root->kind(), pb::INode::DIR);
  EXPECT_EQ(ListNames("/"), Names{});
  EXPECT_EQ(ns_->file_count(), 0);
}

TEST_F(NamespaceTest, LookupMissingIsNotFound) {
  // Absence is reported as NotFound, not as an empty inode.
  EXPECT_TRUE(ns_->Lookup("/nope").status().IsNotFound());
  EXPECT_TRUE(ns_->List("/nope").status().IsNotFound());
}

TEST_F(NamespaceTest, MkdirWithoutParents) {
  // Plain mkdir needs the parent to exist.
  EXPECT_TRUE(ns_->Mkdir("/a", false, 1).ok());
  EXPECT_TRUE(IsDir("/a"));
  EXPECT_EQ(ns_->Lookup("/a")->mtime_ms(), 1);
  EXPECT_TRUE(ns_->Mkdir("/a/b", false, 2).ok());
  EXPECT_TRUE(ns_->Mkdir("/x/y", false, 3).IsNotFound());
  EXPECT_FALSE(Exists("/x"));
}

TEST_F(NamespaceTest, MkdirWithParentsCreatesAncestors) {
  // mkdir -p creates every missing ancestor in one call.
  EXPECT_TRUE(ns_->Mkdir("/a/b/c", true, 1).ok());
  EXPECT_TRUE(IsDir("/a"));
  EXPECT_TRUE(IsDir("/a/b"));
  EXPECT_TRUE(IsDir("/a/b/c"));
  // Partly existing ancestors are fine too.
  EXPECT_TRUE(ns_->Mkdir("/a/b/d/e", true, 1).ok());
  EXPECT_TRUE(IsDir("/a/b/d/e"));
}

TEST_F(NamespaceTest, MkdirExistingDirectory) {
  // Existing dir: an error for mkdir, a no-op for mkdir -p.
  ASSERT_TRUE(ns_->Mkdir("/a", false, 1).ok());
  EXPECT_TRUE(ns_->Mkdir("/a", false, 2).IsAlreadyExists());
  EXPECT_TRUE(ns_->Mkdir("/a", true, 2).ok());
  EXPECT_EQ(ns_->Lookup("/a")->mtime_ms(), 1);  // not re-created
  EXPECT_TRUE(ns_->Mkdir("/", false, 1).IsAlreadyExists());
  EXPECT_TRUE(ns_->Mkdir("/", true, 1).ok());
}

TEST_F(NamespaceTest, MkdirUnderFileIsFailedPrecondition) {
  // A file cannot have children, with or without -p.
  Add("/f", {1});
  EXPECT_TRUE(ns_->Mkdir("/f/x", false, 1).IsFailedPrecondition());
  EXPECT_TRUE(ns_->Mkdir("/f/x", true, 1).IsFailedPrecondition());
  EXPECT_TRUE(ns_->Mkdir("/f/x/y/z", true, 1).IsFailedPrecondition());
  EXPECT_FALSE(Exists("/f/x"));
  EXPECT_EQ(ns_->Lookup("/f")->kind(), pb::INode::FILE);
}

TEST_F(NamespaceTest, MkdirOverExistingFileIsAlreadyExists) {
  // namespace.h: FailedPrecondition only if an *ancestor* is a file, AlreadyExists otherwise.
  Add("/f", {1});
  const Status plain = ns_->Mkdir("/f", false, 1);
  const Status with_p = ns_->Mkdir("/f", true, 1);
  EXPECT_EQ(ns_->Lookup("/f")->kind(), pb::INode::FILE);  // never replaced
  EXPECT_TRUE(plain.IsAlreadyExists()) << plain.ToString();
  EXPECT_TRUE(with_p.IsAlreadyExists()) << with_p.ToString();
}

TEST_F(NamespaceTest, AddFileCreatesParents) {
  // A put into a new directory must not need a separate mkdir.
  std::vector<uint64_t> freed;
  ASSERT_TRUE(ns_->AddFile("/x/y/f", MakeFile({1, 2}), false, &freed).ok());
  EXPECT_TRUE(IsDir("/x"));
  EXPECT_TRUE(IsDir("/x/y"));
  auto f = ns_->Lookup("/x/y/f");
  ASSERT_TRUE(f.ok());
  EXPECT_EQ(f->kind(), pb::INode::FILE);
  ASSERT_EQ(f->blocks_size(), 2);
  EXPECT_EQ(f->blocks(1).id(), 2u);
  EXPECT_TRUE(freed.empty());
  EXPECT_EQ(ns_->file_count(), 1);
}

TEST_F(NamespaceTest, AddFileExistingWithoutOverwrite) {
  // Without overwrite the old file and its blocks stay as they were.
  Add("/f", {1, 2});
  std::vector<uint64_t> freed;
  EXPECT_TRUE(ns_->AddFile("/f", MakeFile({3}), false, &freed).IsAlreadyExists());
  EXPECT_TRUE(freed.empty());
  EXPECT_EQ(ns_->Lookup("/f")->blocks_size(), 2);
}

TEST_F(NamespaceTest, AddFileOverwriteFreesOldBlocks) {
  // The replaced file's blocks are handed back for deletion on the workers.
  Add("/f", {1, 2});
  std::vector<uint64_t> freed{99};  // appended to, not cleared
  ASSERT_TRUE(ns_->AddFile("/f", MakeFile({3}), true, &freed).ok());
  EXPECT_EQ(freed, (std::vector<uint64_t>{99, 1, 2}));
  auto f = ns_->Lookup("/f");
  ASSERT_EQ(f->blocks_size(), 1);
  EXPECT_EQ(f->blocks(0).id(), 3u);
  EXPECT_EQ(ns_->file_count(), 1);
}

TEST_F(NamespaceTest, AddFileOverDirectoryOrUnderFile) {
  // A file never replaces a directory, even with overwrite, and never nests in a file.
  ASSERT_TRUE(ns_->Mkdir("/d", false, 1).ok());
  std::vector<uint64_t> freed;
  EXPECT_TRUE(ns_->AddFile("/d", MakeFile({1}), true, &freed).IsAlreadyExists());
  EXPECT_TRUE(ns_->AddFile("/", MakeFile({1}), true, &freed).IsAlreadyExists());
  EXPECT_TRUE(IsDir("/d"));
  Add("/f", {2});
  EXPECT_TRUE(ns_->AddFile("/f/g", MakeFile({3}), false, &freed).IsFailedPrecondition());
  EXPECT_TRUE(freed.empty());
}

TEST_F(NamespaceTest, ListIsSortedAndDirectChildrenOnly) {
  // ls shows one level, in name order, no matter the insertion order.
  Add("/d/zeta", {1});
  Add("/d/alpha", {2});
  ASSERT_TRUE(ns_->Mkdir("/d/mid/deeper", true, 1).ok());
  Add("/d/mid/grandchild", {3});
  EXPECT_EQ(ListNames("/d"), (Names{"alpha", "mid", "zeta"}));
  EXPECT_EQ(ListNames("/"), (Names{"d"}));
  EXPECT_EQ(ListNames("/d/mid"), (Names{"deeper", "grandchild"}));
  EXPECT_EQ(ListNames("/d/mid/deeper"), Names{});
}

TEST_F(NamespaceTest, ListOfFileIsTheFileItself) {
  // ls of a file shows that one file, like POSIX ls.
  Add("/d/f", {7});
  auto list = ns_->List("/d/f");
  ASSERT_TRUE(list.ok());
  ASSERT_EQ(list->size(), 1u);
  EXPECT_EQ((*list)[0].first, "f");
  EXPECT_EQ((*list)[0].second.blocks(0).id(), 7u);
}

TEST_F(NamespaceTest, ListDoesNotLeakSiblingsSharingAPrefix) {
  // "/a b", "/a-", "/ab" and "/a/..." all start with "/a"; only "/a"'s own children belong.
  Add("/a/x", {1});
  Add("/a/c/d", {2});
  Add("/a b/y", {3});
  Add("/a-", {4});
  Add("/ab/z", {5});
  Add("/a0/w", {6});
  EXPECT_EQ(ListNames("/a"), (Names{"c", "x"}));
  EXPECT_EQ(ListNames("/a b"), (Names{"y"}));
  EXPECT_EQ(ListNames("/ab"), (Names{"z"}));
  EXPECT_EQ(ListNames("/a/c"), (Names{"d"}));
  // Byte order: ' ' < '-' < '0' < 'b'.
  EXPECT_EQ(ListNames("/"), (Names{"a", "a b", "a-", "a0", "ab"}));
}

TEST_F(NamespaceTest, DeleteFileFreesItsBlocks) {
  // rm of a file returns its blocks and leaves the parent in place.
  Add("/d/f", {1, 2});
  Add("/d/g", {3});
  std::vector<uint64_t> freed;
  ASSERT_TRUE(ns_->Delete("/d/f", false, &freed).ok());
  EXPECT_EQ(Sorted(freed), (std::vector<uint64_t>{1, 2}));
  EXPECT_FALSE(Exists("/d/f"));
  EXPECT_EQ(ListNames("/d"), (Names{"g"}));
  EXPECT_EQ(ns_->file_count(), 1);
}

TEST_F(NamespaceTest, DeleteMissingIsNotFound) {
  // rm of something that is not there is reported, not silently ignored.
  std::vector<uint64_t> freed;
  EXPECT_TRUE(ns_->Delete("/nope", true, &freed).IsNotFound());
}

TEST_F(NamespaceTest, DeleteEmptyDirectoryNeedsNoRecursive) {
  // An empty directory is removed like a file.
  ASSERT_TRUE(ns_->Mkdir("/d", false, 1).ok());
  std::vector<uint64_t> freed;
  ASSERT_TRUE(ns_->Delete("/d", false, &freed).ok());
  EXPECT_FALSE(Exists("/d"));
  EXPECT_TRUE(freed.empty());
}

TEST_F(NamespaceTest, DeleteNonEmptyDirectoryWithoutRecursive) {
  // rm without -r must not destroy a subtree.
  Add("/d/f", {1});
  std::vector<uint64_t> freed;
  EXPECT_TRUE(ns_->Delete("/d", false, &freed).IsFailedPrecondition());
  EXPECT_TRUE(freed.empty());
  EXPECT_TRUE(Exists("/d/f"));
}

TEST_F(NamespaceTest, RecursiveDeleteCollectsWholeSubtreeOnly) {
  // Every block below the directory is freed; prefix-sharing siblings are untouched.
  Add("/a/f", {1, 2});
  Add("/a/b/g", {3});
  Add("/a/b/c/h", {4, 5});
  ASSERT_TRUE(ns_->Mkdir("/a/empty", false, 1).ok());
  Add("/ab/keep", {10});
  Add("/a b/keep", {11});
  Add("/a-", {12});
  std::vector<uint64_t> freed;
  ASSERT_TRUE(ns_->Delete("/a", true, &freed).ok());
  EXPECT_EQ(Sorted(freed), (std::vector<uint64_t>{1, 2, 3, 4, 5}));
  for (const char* p : {"/a", "/a/f", "/a/b", "/a/b/g", "/a/b/c", "/a/b/c/h", "/a/empty"}) {
    EXPECT_FALSE(Exists(p)) << p;
  }
  EXPECT_EQ(ListNames("/"), (Names{"a b", "a-", "ab"}));
  EXPECT_EQ(ns_->file_count(), 3);

  // Nothing of the subtree comes back from disk either.
  Reopen();
  EXPECT_FALSE(Exists("/a/b/c/h"));
  EXPECT_EQ(ListNames("/"), (Names{"a b", "a-", "ab"}));
}

TEST_F(NamespaceTest, RootCannotBeDeleted) {
  // rm -r / must never wipe the namespace.
  Add("/f", {1});
  std::vector<uint64_t> freed;
  EXPECT_TRUE(ns_->Delete("/", true, &freed).IsInvalidArgument());
  EXPECT_TRUE(freed.empty());
  EXPECT_TRUE(Exists("/f"));
}

TEST_F(NamespaceTest, RenameFile) {
  // mv keeps the inode (blocks and all) and creates missing target parents.
  Add("/d/f", {1, 2});
  ASSERT_TRUE(ns_->Rename("/d/f", "/e/g/h").ok());
  EXPECT_FALSE(Exists("/d/f"));
  EXPECT_TRUE(IsDir("/d"));
  EXPECT_TRUE(IsDir("/e/g"));
  auto h = ns_->Lookup("/e/g/h");
  ASSERT_TRUE(h.ok());
  EXPECT_EQ(h->blocks_size(), 2);
  EXPECT_EQ(ns_->file_count(), 1);
}

TEST_F(NamespaceTest, RenameDirectoryMovesSubtree) {
  // Every descendant follows the directory; prefix-sharing siblings stay.
  Add("/a/f", {1});
  Add("/a/b/c/g", {2});
  ASSERT_TRUE(ns_->Mkdir("/a/empty", false, 1).ok());
  Add("/ab/keep", {3});
  ASSERT_TRUE(ns_->Rename("/a", "/z/moved").ok());
  EXPECT_FALSE(Exists("/a"));
  EXPECT_FALSE(Exists("/a/b/c/g"));
  EXPECT_EQ(ListNames("/z/moved"), (Names{"b", "empty", "f"}));
  EXPECT_EQ(ns_->Lookup("/z/moved/b/c/g")->blocks(0).id(), 2u);
  EXPECT_TRUE(IsDir("/z/moved/empty"));
  EXPECT_EQ(ListNames("/ab"), (Names{"keep"}));
  EXPECT_EQ(ListNames("/"), (Names{"ab", "z"}));

  // The move is on disk, not only in memory.
  Reopen();
  EXPECT_EQ(ns_->Lookup("/z/moved/b/c/g")->blocks(0).id(), 2u);
  EXPECT_FALSE(Exists("/a"));
}

TEST_F(NamespaceTest, RenameIntoItselfIsRejected) {
  // Moving a directory below itself would detach the subtree.
  ASSERT_TRUE(ns_->Mkdir("/a/b", true, 1).ok());
  EXPECT_TRUE(ns_->Rename("/a", "/a/b/c").IsInvalidArgument());
  EXPECT_TRUE(ns_->Rename("/a", "/a/new").IsInvalidArgument());
  EXPECT_TRUE(IsDir("/a/b"));
  EXPECT_FALSE(Exists("/a/b/c"));
  // A sibling whose name merely starts with "a" is not "inside" /a.
  EXPECT_TRUE(ns_->Rename("/a", "/ab").ok());
  EXPECT_TRUE(IsDir("/ab/b"));
}

TEST_F(NamespaceTest, RenameOntoExistingIsAlreadyExists) {
  // mv never silently replaces a file or a directory.
  Add("/f", {1});
  Add("/g", {2});
  ASSERT_TRUE(ns_->Mkdir("/d", false, 1).ok());
  EXPECT_TRUE(ns_->Rename("/f", "/g").IsAlreadyExists());
  EXPECT_TRUE(ns_->Rename("/f", "/d").IsAlreadyExists());
  EXPECT_TRUE(ns_->Rename("/d", "/f").IsAlreadyExists());
  EXPECT_EQ(ns_->Lookup("/g")->blocks(0).id(), 2u);
}

TEST_F(NamespaceTest, RenameMissingOrRoot) {
  // Errors for a missing source and for the root on either side.
  Add("/f", {1});
  EXPECT_TRUE(ns_->Rename("/nope", "/x").IsNotFound());
  EXPECT_TRUE(ns_->Rename("/", "/x").IsInvalidArgument());
  EXPECT_TRUE(ns_->Rename("/f", "/").IsInvalidArgument());
  EXPECT_TRUE(Exists("/f"));
}

TEST_F(NamespaceTest, SetReplicationOfAFileAndOfATree) {
  // setrep on a file changes that file; on a directory every file below
  // it, and survives a reopen. Files already at the target are not listed.
  Add("/f", {1});
  Add("/d/g", {2});
  Add("/d/e/h", {3});
  std::vector<std::pair<std::string, pb::INode>> changed;
  ASSERT_TRUE(ns_->SetReplication("/f", 2, &changed).ok());
  ASSERT_EQ(changed.size(), 1u);
  EXPECT_EQ(changed[0].first, "/f");
  EXPECT_EQ(changed[0].second.blocks(0).id(), 1u);
  changed.clear();
  ASSERT_TRUE(ns_->SetReplication("/d", 1, &changed).ok());
  std::set<std::string> paths;
  for (const auto& [p, inode] : changed) paths.insert(p);
  EXPECT_EQ(paths, (std::set<std::string>{"/d/g", "/d/e/h"}));
  changed.clear();
  ASSERT_TRUE(ns_->SetReplication("/d", 1, &changed).ok());
  EXPECT_TRUE(changed.empty());
  EXPECT_TRUE(ns_->SetReplication("/nope", 2, &changed).IsNotFound());
  Reopen();
  EXPECT_EQ(ns_->Lookup("/f")->replication(), 2);
  EXPECT_EQ(ns_->Lookup("/d/e/h")->replication(), 1);
  EXPECT_EQ(ns_->Lookup("/d/e/h")->blocks(0).id(), 3u);
}

TEST_F(NamespaceTest, ForEachFileVisitsEveryFileWithItsPath) {
  // Block reports walk all files; directories are skipped.
  Add("/f", {1});
  Add("/d/g", {2});
  Add("/d/e/h", {3});
  std::set<std::string> seen;
  ns_->ForEachFile([&](const std::string& path, const pb::INode& inode) {
    EXPECT_EQ(inode.kind(), pb::INode::FILE);
    seen.insert(path);
  });
  EXPECT_EQ(seen, (std::set<std::string>{"/f", "/d/g", "/d/e/h"}));
  EXPECT_EQ(ns_->file_count(), 3);
}

TEST_F(NamespaceTest, NextBlockIdIsUniqueAndIncreasing) {
  // Block ids name files on workers; a repeat would overwrite another file's data.
  uint64_t last = 0;
  for (int i = 0; i < 3000; ++i) {
    auto id = ns_->NextBlockId();
    ASSERT_TRUE(id.ok());
    ASSERT_GT(*id, last) << "at " << i;
    last = *id;
  }
}

TEST_F(NamespaceTest, NextBlockIdSurvivesReopen) {
  // After a restart no id is handed out twice, also across several 1024-id batches.
  std::set<uint64_t> seen;
  uint64_t last = 0;
  auto take = [&](int n) {
    for (int i = 0; i < n; ++i) {
      auto id = ns_->NextBlockId();
      ASSERT_TRUE(id.ok());
      ASSERT_GT(*id, last);
      ASSERT_TRUE(seen.insert(*id).second) << "id " << *id << " handed out twice";
      last = *id;
    }
  };
  // Reopen right after the first id, at a batch edge (1023, 1024, 1025 taken),
  // and after crossing several batches.
  for (int n : {1, 1022, 1, 1, 2500, 1024, 0, 7}) {
    take(n);
    Reopen();
  }
  take(1);
  EXPECT_EQ(seen.size(), 4557u);  // every id taken was distinct
}

TEST_F(NamespaceTest, NextEpochGrowsAcrossReopens) {
  // The master puts the epoch in its lease ids: two runs sharing one would
  // let a client's lease from the old run name a new run's file.
  std::set<uint64_t> seen;
  for (int run = 0; run < 5; ++run) {
    auto epoch = ns_->NextEpoch();
    ASSERT_TRUE(epoch.ok()) << epoch.status().ToString();
    EXPECT_EQ(*epoch, static_cast<uint64_t>(run + 1));
    EXPECT_TRUE(seen.insert(*epoch).second);
    Reopen();
  }
}

TEST_F(NamespaceTest, EverythingSurvivesReopen) {
  // The master restarts from RocksDB alone: dirs, files, blocks and input_type must all load.
  ASSERT_TRUE(ns_->Mkdir("/empty/dir", true, 42).ok());
  std::vector<uint64_t> freed;
  ASSERT_TRUE(ns_->AddFile("/data/web.txt", MakeFile({5, 6, 7}, "web"), false, &freed).ok());
  ASSERT_TRUE(ns_->AddFile("/data/dna.fa", MakeFile({8}, "dna"), false, &freed).ok());

  Reopen();
  EXPECT_TRUE(IsDir("/empty"));
  EXPECT_EQ(ns_->Lookup("/empty/dir")->mtime_ms(), 42);
  EXPECT_EQ(ListNames("/"), (Names{"data", "empty"}));
  EXPECT_EQ(ListNames("/data"), (Names{"dna.fa", "web.txt"}));
  auto web = ns_->Lookup("/data/web.txt");
  ASSERT_TRUE(web.ok());
  EXPECT_EQ(web->kind(), pb::INode::FILE);
  EXPECT_EQ(web->input_type(), "web");
  EXPECT_EQ(web->replication(), 3);
  EXPECT_EQ(web->block_size(), 64 << 20);
  EXPECT_EQ(web->length(), 300);
  EXPECT_EQ(web->mtime_ms(), 1234);
  ASSERT_EQ(web->blocks_size(), 3);
  EXPECT_EQ(web->blocks(0).id(), 5u);
  EXPECT_EQ(web->blocks(2).id(), 7u);
  EXPECT_EQ(web->blocks(2).bytes(), 100);
  EXPECT_EQ(ns_->Lookup("/data/dna.fa")->input_type(), "dna");
  EXPECT_EQ(ns_->file_count(), 2);

  // An overwrite is persisted too.
  ASSERT_TRUE(ns_->AddFile("/data/web.txt", MakeFile({9}, "text"), true, &freed).ok());
  Reopen();
  EXPECT_EQ(ns_->Lookup("/data/web.txt")->input_type(), "text");
  EXPECT_EQ(ns_->Lookup("/data/web.txt")->blocks(0).id(), 9u);
}

TEST_F(NamespaceTest, UnparseableInodeIsCorruption) {
  // A damaged database must fail Open with a Status, not load a bogus tree.
  PutRaw(std::string("n/\0bad", 6), "\x0f\x0f");  // not an INode
  auto ns = Namespace::Open(dir_);
  EXPECT_TRUE(ns.status().IsCorruption()) << ns.status().ToString();
}

TEST_F(NamespaceTest, DamagedBlockIdMarkIsAStatusNotAnException) {
  // status.h: exceptions never cross a module boundary, so a bad record must come back as a Status.
  PutRaw("m:next_block_id", "not a number");
  auto ns = Namespace::Open(dir_);
  EXPECT_TRUE(ns.status().IsCorruption()) << ns.status().ToString();
}

}  // namespace
}  // namespace mr::dfs

namespace mr::dfs {
namespace {

// Issue 11: the workers the master admitted survive a restart, with their
// labels and decommissioning state; a record is replaced, not duplicated.
TEST_F(NamespaceTest, KnownWorkersSurviveReopen) {
  pb::KnownWorker w;
  w.mutable_info()->set_id("w7");
  w.mutable_info()->set_datacenter("dc2");
  w.mutable_info()->set_rack("r1");
  ASSERT_TRUE(ns_->PutWorker(w).ok());
  w.set_admin_state("decommissioning");
  ASSERT_TRUE(ns_->PutWorker(w).ok());
  Reopen();
  auto workers = ns_->Workers();
  ASSERT_TRUE(workers.ok()) << workers.status().ToString();
  ASSERT_EQ(workers->size(), 1u);
  EXPECT_EQ((*workers)[0].info().rack(), "r1");
  EXPECT_EQ((*workers)[0].admin_state(), "decommissioning");
  EXPECT_TRUE(ListNames("/").empty());  // not files
  PutRaw("w:bad", "\xff\xff");
  Reopen();
  EXPECT_TRUE(ns_->Workers().status().IsCorruption());
}

}  // namespace
}  // namespace mr::dfs

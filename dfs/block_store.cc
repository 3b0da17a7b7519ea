// BlockStore: see block_store.h for the layout and the contract.
//
// Open() loads every BlockMeta from RocksDB into `index` (id -> length and
// checksums), so Read() never touches RocksDB; RocksDB is the durable copy and
// is written after the block file is in place. `mu` guards the in-memory state
// only: reads and writes of block files run outside it. Commit(), Remove()
// and Quarantine() of the same id are serialised by claiming the id in `busy`.
// Index entries are immutable: a change (quarantine, repair) swaps in a new
// one, so a reader holding the old entry is never disturbed. Reads and
// checksums are in block_reader.cc; the state both files share is in
// block_store_impl.h.
#include "dfs/block_store.h"

#include <fcntl.h>
#include <rocksdb/db.h>
#include <rocksdb/write_batch.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <filesystem>

#include "dfs/block_store_impl.h"
#include "proto/dfs.pb.h"

namespace mr::dfs {
namespace {

namespace fs = std::filesystem;
using store_internal::BlockInfo;
using store_internal::BlockName;
using store_internal::Hex16;
using store_internal::IoError;
using store_internal::kChunk;
using store_internal::NumChunks;
using store_internal::ScopedFd;

// RocksDB key: "b" + id as 8 big-endian bytes.
std::string MetaKey(uint64_t id) {
  std::string key(9, 'b');
  for (int i = 0; i < 8; ++i) key[1 + i] = static_cast<char>(id >> (56 - 8 * i));
  return key;
}

uint64_t IdFromKey(const rocksdb::Slice& key) {
  uint64_t id = 0;
  for (int i = 1; i < 9; ++i) id = (id << 8) | static_cast<unsigned char>(key[i]);
  return id;
}

Status WriteAll(int fd, const char* p, size_t n, off_t off, const std::string& path) {
  while (n > 0) {
    ssize_t w = ::pwrite(fd, p, n, off);
    if (w < 0 && errno == EINTR) continue;
    if (w < 0) return IoError("pwrite", path);
    p += w, n -= w, off += w;
  }
  return Status::OK();
}

Status SyncPath(const std::string& path) {
  ScopedFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
  if (fd.get() < 0) return IoError("open", path);
  if (::fsync(fd.get()) != 0) return IoError("fsync", path);
  return Status::OK();
}

// Removes every entry of `dir` for which keep(path) is false (Open() only).
template <typename Keep>
Status RemoveEntries(const std::string& dir, Keep keep) {
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    if (keep(it->path())) continue;
    std::error_code rm_ec;
    fs::remove_all(it->path(), rm_ec);
    if (rm_ec) return IoError("remove", it->path().string(), rm_ec);
  }
  return ec ? IoError("list", dir, ec) : Status::OK();
}

}  // namespace

// Called once by Open(): creates the layout, empties tmp/, opens RocksDB and
// drops whatever does not have both a file and metadata.
Status BlockStore::Impl::OpenAndReconcile() {
  for (const char* sub : {"/blocks", "/tmp", "/meta"}) {
    std::error_code ec;
    fs::create_directories(dir + sub, ec);
    if (ec) return IoError("mkdir", dir + sub, ec);
  }
  MR_RETURN_IF_ERROR(RemoveEntries(dir + "/tmp", [](const fs::path&) { return false; }));
  rocksdb::Options db_options;
  db_options.create_if_missing = true;
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(db_options, dir + "/meta", &raw);
  if (!s.ok()) return Status::IOError("open rocksdb " + dir + "/meta: " + s.ToString());
  db.reset(raw);
  MR_RETURN_IF_ERROR(LoadIndex());
  return SweepBlockFiles();
}

// Loads every well-formed BlockMeta whose file has the recorded length;
// deletes the other "b" keys and notes each in `dropped` with the reason.
Status BlockStore::Impl::LoadIndex() {
  rocksdb::WriteBatch drop;
  std::unique_ptr<rocksdb::Iterator> it(db->NewIterator(rocksdb::ReadOptions()));
  for (it->Seek("b"); it->Valid() && it->key().starts_with("b"); it->Next()) {
    pb::BlockMeta meta;
    const uint64_t id = it->key().size() == 9 ? IdFromKey(it->key()) : 0;
    std::string why;
    if (it->key().size() != 9 ||
        !meta.ParseFromArray(it->value().data(), static_cast<int>(it->value().size())) ||
        meta.length() < 0 || meta.chunk_bytes() != kChunk ||
        meta.checksums_size() != NumChunks(meta.length())) {
      why = "bad metadata";
    } else {
      std::error_code ec;
      const uintmax_t size = fs::file_size(BlockPath(id), ec);
      if (ec) {
        why = ec == std::errc::no_such_file_or_directory ? "missing" : "unreadable: " + ec.message();
      } else if (size != static_cast<uintmax_t>(meta.length())) {
        why = "length " + std::to_string(size) + " expected " + std::to_string(meta.length());
      }
    }
    if (!why.empty()) {
      dropped.push_back({id, std::move(why)});
      drop.Delete(it->key());
      continue;
    }
    auto info = std::make_shared<BlockInfo>();
    info->length = meta.length();
    info->checksums.assign(meta.checksums().begin(), meta.checksums().end());
    info->quarantined = meta.quarantined();
    info->quarantine_reason = meta.quarantine_reason();
    index.emplace(id, std::move(info));
    used_bytes += meta.length();
  }
  if (!it->status().ok()) return Status::IOError("scan rocksdb: " + it->status().ToString());
  rocksdb::Status s = db->Write(rocksdb::WriteOptions(), &drop);
  return s.ok() ? Status::OK() : Status::IOError("rocksdb write: " + s.ToString());
}

// Creates blocks/00..ff and deletes every file there that is not the block
// file of an indexed block.
Status BlockStore::Impl::SweepBlockFiles() {
  for (int sub = 0; sub < 256; ++sub) {
    std::string sub_dir = fs::path(BlockPath(sub)).parent_path().string();
    std::error_code ec;
    fs::create_directories(sub_dir, ec);
    if (ec) return IoError("mkdir", sub_dir, ec);
    MR_RETURN_IF_ERROR(RemoveEntries(sub_dir, [this](const fs::path& path) {
      const std::string name = path.filename().string();
      uint64_t id = 0;
      bool parsed =
          name.size() == 20 && name.starts_with("blk_") &&
          std::from_chars(name.data() + 4, name.data() + 20, id, 16).ptr == name.data() + 20;
      if (parsed && index.contains(id) && BlockPath(id) == path.string()) return true;
      const bool noted = std::any_of(dropped.begin(), dropped.end(),
                                     [&](const DroppedBlock& d) { return d.id == id; });
      if (parsed && !noted) dropped.push_back({id, "no metadata"});
      return false;
    }));
  }
  return Status::OK();
}

// Called by BlockWriter::Commit() with a closed (and, if asked, synced) tmp
// file: renames it into place (over a quarantined replica of the same id:
// the repair), then writes the metadata.
Status BlockStore::Impl::Publish(uint64_t id, const std::string& tmp_path,
                                 std::shared_ptr<const BlockInfo> info) {
  Claim(id);
  Status status = [&]() -> Status {
    std::shared_ptr<const BlockInfo> old = Find(id);
    if (old && !old->quarantined) return Status::AlreadyExists(BlockName(id));
    const std::string path = BlockPath(id);
    if (::rename(tmp_path.c_str(), path.c_str()) != 0) return IoError("rename", tmp_path);
    Status put = PutMeta(id, *info);
    if (!put.ok()) {
      // No metadata, so no block; but a replaced replica's metadata still
      // describes the new file (same block, same checksums): keep it.
      if (!old) ::unlink(path.c_str());
      return put;
    }
    std::lock_guard lock(mu);
    used_bytes += info->length - (old ? old->length : 0);
    index[id] = std::move(info);
    return Status::OK();
  }();
  Release(id);
  return status;
}

// Makes a renamed block file durable (if asked) and writes its metadata.
Status BlockStore::Impl::PutMeta(uint64_t id, const BlockInfo& info) {
  if (options.fsync) MR_RETURN_IF_ERROR(SyncPath(fs::path(BlockPath(id)).parent_path().string()));
  pb::BlockMeta meta;
  meta.set_length(info.length);
  meta.set_chunk_bytes(kChunk);
  meta.mutable_checksums()->Add(info.checksums.begin(), info.checksums.end());
  meta.set_quarantined(info.quarantined);
  meta.set_quarantine_reason(info.quarantine_reason);
  rocksdb::WriteOptions write_options;
  write_options.sync = options.fsync;
  rocksdb::Status s = db->Put(write_options, MetaKey(id), meta.SerializeAsString());
  if (s.ok()) return Status::OK();
  return Status::IOError("rocksdb put " + BlockName(id) + ": " + s.ToString());
}

// ---- BlockWriter ----

struct BlockWriter::Impl {
  BlockStore::Impl* store = nullptr;  // outlives the writer
  uint64_t id = 0;
  std::string tmp_path;
  int fd = -1;
  int64_t bytes = 0;
  std::vector<uint64_t> checksums;
  Status error;  // sticky: a failed Append() spoils the block
  bool committed = false;

  Status DoAppend(std::span<const char> data, std::span<const uint64_t> expected);
};

BlockWriter::BlockWriter(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

BlockWriter::~BlockWriter() {
  if (impl_->fd >= 0) ::close(impl_->fd);
  if (!impl_->committed) ::unlink(impl_->tmp_path.c_str());  // gone already if renamed
}

int64_t BlockWriter::bytes_written() const { return impl_->bytes; }

Status BlockWriter::Append(std::span<const char> data, std::span<const uint64_t> checksums) {
  if (impl_->committed) return Status::FailedPrecondition(BlockName(impl_->id) + " is committed");
  if (impl_->error.ok()) impl_->error = impl_->DoAppend(data, checksums);
  return impl_->error;
}

Status BlockWriter::Impl::DoAppend(std::span<const char> data, std::span<const uint64_t> expected) {
  if (data.empty()) return Status::OK();
  if (bytes % kChunk != 0) {
    return Status::InvalidArgument(BlockName(id) + ": append after a short chunk");
  }
  std::vector<uint64_t> sums = ChunkChecksums(data);
  if (!expected.empty() && expected.size() != sums.size()) {
    return Status::InvalidArgument(BlockName(id) + ": wrong number of checksums");
  }
  for (size_t i = 0; i < expected.size(); ++i) {
    if (expected[i] != sums[i]) {
      return Status::Corruption(BlockName(id) + ": checksum mismatch in chunk " +
                                std::to_string(checksums.size() + i));
    }
  }
  MR_RETURN_IF_ERROR(WriteAll(fd, data.data(), data.size(), bytes, tmp_path));
  checksums.insert(checksums.end(), sums.begin(), sums.end());
  bytes += data.size();
  return Status::OK();
}

Status BlockWriter::Commit() {
  Impl& w = *impl_;
  if (w.committed) return Status::AlreadyExists(BlockName(w.id));
  if (!w.error.ok()) return w.error;
  if (w.store->options.fsync && ::fsync(w.fd) != 0) return IoError("fsync", w.tmp_path);
  int fd = std::exchange(w.fd, -1);
  if (::close(fd) != 0) return w.error = IoError("close", w.tmp_path);
  auto info = std::make_shared<BlockInfo>();
  info->length = w.bytes;
  info->checksums = w.checksums;
  w.error = w.store->Publish(w.id, w.tmp_path, std::move(info));
  w.committed = w.error.ok();
  return w.error;
}

// ---- BlockStore ----

BlockStore::BlockStore(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BlockStore::~BlockStore() = default;

Result<std::unique_ptr<BlockStore>> BlockStore::Open(const std::string& dir,
                                                     const Options& options) {
  auto impl = std::make_unique<Impl>();
  impl->dir = dir;
  impl->options = options;
  MR_RETURN_IF_ERROR(impl->OpenAndReconcile());
  return std::unique_ptr<BlockStore>(new BlockStore(std::move(impl)));
}

Result<std::unique_ptr<BlockWriter>> BlockStore::NewWriter(uint64_t id) {
  {
    std::lock_guard lock(impl_->mu);
    auto it = impl_->index.find(id);
    const bool repair = it != impl_->index.end() && it->second->quarantined;
    if (it != impl_->index.end() && !repair) return Status::AlreadyExists(BlockName(id));
    if (!repair && impl_->options.capacity_bytes > 0 &&
        impl_->used_bytes >= impl_->options.capacity_bytes) {
      return Status::IOError("over capacity: " + std::to_string(impl_->used_bytes) + " of " +
                             std::to_string(impl_->options.capacity_bytes) + " bytes used");
    }
  }
  auto w = std::make_unique<BlockWriter::Impl>();
  w->store = impl_.get();
  w->id = id;
  w->tmp_path = impl_->dir + "/tmp/blk_" + Hex16(id) + "." + Hex16(impl_->tmp_seq++);
  w->fd = ::open(w->tmp_path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (w->fd < 0) return IoError("open", w->tmp_path);
  return std::unique_ptr<BlockWriter>(new BlockWriter(std::move(w)));
}

Result<int64_t> BlockStore::Length(uint64_t id) {
  std::shared_ptr<const BlockInfo> info = impl_->Find(id);
  if (!info) return Status::NotFound(BlockName(id));
  return info->length;
}

bool BlockStore::Contains(uint64_t id) { return impl_->Find(id) != nullptr; }

bool BlockStore::IsQuarantined(uint64_t id) {
  std::shared_ptr<const BlockInfo> info = impl_->Find(id);
  return info && info->quarantined;
}

// Deletes the metadata first (the block is gone), then the file; a crash in
// between leaves an orphan file that the next Open() deletes.
Status BlockStore::Remove(uint64_t id) {
  impl_->Claim(id);
  Status status = [&]() -> Status {
    std::shared_ptr<const BlockInfo> info = impl_->Find(id);
    if (!info) return Status::OK();
    rocksdb::Status s = impl_->db->Delete(rocksdb::WriteOptions(), MetaKey(id));
    if (!s.ok()) return Status::IOError("rocksdb delete " + BlockName(id) + ": " + s.ToString());
    {
      std::lock_guard lock(impl_->mu);
      impl_->index.erase(id);
      impl_->used_bytes -= info->length;
    }
    const std::string path = BlockPath(id);
    if (::unlink(path.c_str()) != 0 && errno != ENOENT) return IoError("unlink", path);
    return Status::OK();
  }();
  impl_->Release(id);
  return status;
}

Result<bool> BlockStore::Quarantine(uint64_t id, const std::string& reason) {
  impl_->Claim(id);
  Result<bool> result = [&]() -> Result<bool> {
    std::shared_ptr<const BlockInfo> info = impl_->Find(id);
    if (!info) return Status::NotFound(BlockName(id));
    if (info->quarantined) return false;
    auto marked = std::make_shared<BlockInfo>(*info);
    marked->quarantined = true;
    marked->quarantine_reason = reason;
    MR_RETURN_IF_ERROR(impl_->PutMeta(id, *marked));
    std::lock_guard lock(impl_->mu);
    impl_->index[id] = std::move(marked);
    return true;
  }();
  impl_->Release(id);
  return result;
}

std::vector<StoredBlock> BlockStore::List() {
  std::lock_guard lock(impl_->mu);
  std::vector<StoredBlock> blocks;
  blocks.reserve(impl_->index.size());
  for (const auto& [id, info] : impl_->index) blocks.push_back({id, info->length, info->quarantined});
  return blocks;
}

const std::vector<DroppedBlock>& BlockStore::dropped_at_open() const { return impl_->dropped; }

int64_t BlockStore::used_bytes() {
  std::lock_guard lock(impl_->mu);
  return impl_->used_bytes;
}

std::string BlockStore::BlockPath(uint64_t id) const { return impl_->BlockPath(id); }

}  // namespace mr::dfs

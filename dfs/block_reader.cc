// Verified reads of stored blocks (BlockReader, BlockStore::Read and
// ReadChunks) and the chunk checksums (block_store.h). A read takes the
// whole chunks covering its range with one pread, checks each against the
// checksums in the block's metadata, then trims to the range.
#include <fcntl.h>
#include <unistd.h>
#include <xxhash.h>

#include <algorithm>
#include <cerrno>

#include "dfs/block_store.h"
#include "dfs/block_store_impl.h"

namespace mr::dfs {
namespace {

using store_internal::BlockInfo;
using store_internal::BlockName;
using store_internal::IoError;
using store_internal::kChunk;
using store_internal::NumChunks;
using store_internal::ScopedFd;

// Reads `n` bytes at `off`; `*got` < n only at end of file.
Status ReadAll(int fd, char* p, size_t n, off_t off, const std::string& path, size_t* got) {
  for (*got = 0; *got < n;) {
    ssize_t r = ::pread(fd, p + *got, n - *got, off + *got);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) return IoError("pread", path);
    if (r == 0) break;
    *got += r;
  }
  return Status::OK();
}

}  // namespace

uint64_t ChunkChecksum(std::span<const char> data) { return XXH3_64bits(data.data(), data.size()); }

std::vector<uint64_t> ChunkChecksums(std::span<const char> data) {
  std::vector<uint64_t> sums;
  sums.reserve(NumChunks(data.size()));
  for (size_t off = 0; off < data.size(); off += kChunk) {
    sums.push_back(ChunkChecksum(data.subspan(off, std::min<size_t>(kChunk, data.size() - off))));
  }
  return sums;
}

std::vector<uint64_t> RangeChecksums(int64_t offset, std::span<const char> data) {
  std::vector<uint64_t> sums;
  size_t off = 0;
  while (off < data.size()) {
    const int64_t at = offset + static_cast<int64_t>(off);
    const size_t piece =
        std::min<size_t>(static_cast<size_t>(kChunk - at % kChunk), data.size() - off);
    sums.push_back(ChunkChecksum(data.subspan(off, piece)));
    off += piece;
  }
  return sums;
}

struct BlockReader::Impl {
  Impl(uint64_t id, std::shared_ptr<const BlockInfo> info, std::string path, int fd)
      : id(id), info(std::move(info)), path(std::move(path)), fd(fd) {}

  // Reads [begin, end) (chunk-aligned, or ending at the block's end) into
  // `out` and checks each chunk against the stored checksums.
  Status ReadVerified(int64_t begin, int64_t end, std::string* out);

  const uint64_t id;
  const std::shared_ptr<const BlockInfo> info;
  const std::string path;
  const ScopedFd fd;
};

BlockReader::BlockReader(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
BlockReader::~BlockReader() = default;

int64_t BlockReader::length() const { return impl_->info->length; }
int BlockReader::fd() const { return impl_->fd.get(); }

Status BlockReader::ReadChunks(int64_t offset, int64_t length, std::string* out,
                               std::vector<uint64_t>* checksums) {
  const BlockInfo& info = *impl_->info;
  const uint64_t id = impl_->id;
  if (offset < 0 || length < 0) return Status::InvalidArgument("negative offset or length");
  if (offset > info.length) {
    return Status::InvalidArgument(BlockName(id) + ": offset " + std::to_string(offset) +
                                   " past length " + std::to_string(info.length));
  }
  const int64_t n = std::min(length, info.length - offset);
  const int64_t begin = offset / kChunk * kChunk;
  const int64_t end = std::min(info.length, (offset + n + kChunk - 1) / kChunk * kChunk);
  if (checksums) checksums->clear();
  if (n == 0) {
    out->clear();
    return Status::OK();
  }
  MR_RETURN_IF_ERROR(impl_->ReadVerified(begin, end, out));
  if (offset > begin) out->erase(0, offset - begin);  // the only copy, for unaligned reads
  out->resize(n);
  if (checksums) {
    // One per piece of [offset, offset + n) cut at chunk boundaries: the
    // stored one for a whole chunk, the piece's own (of bytes just verified
    // as part of their chunk) for a piece of one.
    for (int64_t at = offset; at < offset + n;) {
      const int64_t chunk = at / kChunk;
      const int64_t chunk_end = std::min(info.length, (chunk + 1) * kChunk);
      const int64_t piece_end = std::min(chunk_end, offset + n);
      if (at == chunk * kChunk && piece_end == chunk_end) {
        checksums->push_back(info.checksums[chunk]);
      } else {
        checksums->push_back(
            ChunkChecksum({out->data() + (at - offset), static_cast<size_t>(piece_end - at)}));
      }
      at = piece_end;
    }
  }
  return Status::OK();
}

Status BlockReader::Impl::ReadVerified(int64_t begin, int64_t end, std::string* out) {
  out->resize(end - begin);
  size_t got = 0;
  MR_RETURN_IF_ERROR(ReadAll(fd.get(), out->data(), out->size(), begin, path, &got));
  if (got != out->size()) return Status::Corruption(BlockName(id) + ": block file truncated");
  for (int64_t off = 0; off < end - begin; off += kChunk) {
    const int64_t chunk = (begin + off) / kChunk;
    const size_t size = std::min(kChunk, end - begin - off);
    if (ChunkChecksum({out->data() + off, size}) != info->checksums[chunk]) {
      return Status::Corruption(BlockName(id) + ": checksum mismatch in chunk " +
                                std::to_string(chunk));
    }
  }
  return Status::OK();
}

Result<std::unique_ptr<BlockReader>> BlockStore::OpenReader(uint64_t id) {
  std::shared_ptr<const BlockInfo> info = impl_->Find(id);
  if (!info) return Status::NotFound(BlockName(id));
  std::string path = impl_->BlockPath(id);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    const int err = errno;
    if (err != ENOENT) return IoError("open", path, std::error_code(err, std::generic_category()));
    // Removed since Find(), or deleted behind our back.
    if (!impl_->Find(id)) return Status::NotFound(BlockName(id));
    return Status::Corruption(BlockName(id) + ": block file missing");
  }
  return std::unique_ptr<BlockReader>(new BlockReader(
      std::make_unique<BlockReader::Impl>(id, std::move(info), std::move(path), fd)));
}

Status BlockStore::Read(uint64_t id, int64_t offset, int64_t length, std::string* out) {
  return ReadChunks(id, offset, length, out, nullptr);
}

Status BlockStore::ReadChunks(uint64_t id, int64_t offset, int64_t length, std::string* out,
                              std::vector<uint64_t>* checksums) {
  auto reader = OpenReader(id);
  if (!reader.ok()) return reader.status();
  return (*reader)->ReadChunks(offset, length, out, checksums);
}

}  // namespace mr::dfs

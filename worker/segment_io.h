// The frame code under map output files (docs/map-output-format.md): the
// record encoding, a reusable zstd compression context, the writer of one
// segment and the reader of one segment from memory or a file range.
//
// Internal to worker/: segment_io.cc builds the public SegmentWriter,
// SegmentReader and MergingReader (map_output.h) on it, and map_output.cc's
// sort buffer writes its runs and output with it. FrameWriter and
// CompareBytes are here, inline, because the buffer calls them per record.
#pragma once

#include <unistd.h>
#include <xxhash.h>
#include <zstd.h>

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/status.h"
#include "worker/map_output.h"

namespace mr::worker::internal {

// Serialized records collected before one call into zstd (fewer, larger calls).
inline constexpr size_t kBatchBytes = 128 << 10;

// IOError "<what> <path>: <strerror(errno)>".
Status ErrnoError(std::string_view what, std::string_view path);

// An owned file descriptor; closes on destruction (errors then are ignored:
// writers call Close() to see them).
class UniqueFd {
 public:
  UniqueFd() = default;
  explicit UniqueFd(int fd) : fd_(fd) {}
  UniqueFd(UniqueFd&& o) noexcept : fd_(std::exchange(o.fd_, -1)) {}
  UniqueFd& operator=(UniqueFd&& o) noexcept {
    if (this != &o) {
      Reset();
      fd_ = std::exchange(o.fd_, -1);
    }
    return *this;
  }
  ~UniqueFd() { Reset(); }
  int get() const { return fd_; }
  void Reset() {
    if (fd_ >= 0) ::close(fd_);
    fd_ = -1;
  }
  Status Close(std::string_view path) {
    int fd = std::exchange(fd_, -1);
    if (fd >= 0 && ::close(fd) != 0) return ErrnoError("close", path);
    return Status::OK();
  }

 private:
  int fd_ = -1;
};

// Writes all n bytes, retrying on EINTR.
Status WriteAll(int fd, const char* data, size_t n, std::string_view path);

inline char* EncodeVarint32(char* dst, uint32_t v) {
  while (v >= 0x80) {
    *dst++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *dst++ = static_cast<char>(v);
  return dst;
}

inline uint64_t LoadBigEndian64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap64(v);
  return v;
}


// Bytewise (unsigned) comparison, inline: keys are short, and a call to
// memcmp per comparison dominated the sort.
inline int CompareBytes(std::string_view a, std::string_view b) {
  const size_t n = std::min(a.size(), b.size());
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t x = LoadBigEndian64(a.data() + i), y = LoadBigEndian64(b.data() + i);
    if (x != y) return x < y ? -1 : 1;
  }
  for (; i < n; ++i) {
    unsigned char x = a[i], y = b[i];
    if (x != y) return x < y ? -1 : 1;
  }
  return a.size() < b.size() ? -1 : (a.size() > b.size() ? 1 : 0);
}

// Level 0: frames of stored (raw) blocks, no compression (StoredFrame).
inline constexpr int kStoredLevel = 0;

// A zstd frame whose blocks are stored, not compressed (RFC 8878 §3.1.1:
// Raw_Block), with the content checksum (XXH64's low 32 bits) that zstd's
// own frames carry, so any zstd decoder reads it and still detects flipped
// bytes. Written by hand because zstd has no level that stores: level 1
// costs 0.35 CPU-s per 64 MiB of sorted text, and storing cut a 1 GiB Sort's
// workers from 19.6 to 15.0 CPU-s (docs/benchmarks.md, "Grep and Sort, issue
// 29 item 4").
class StoredFrame {
 public:
  // Largest block: the frame's window (2^17 bytes, its header says).
  static constexpr size_t kMaxBlock = size_t{1} << 17;

  StoredFrame() : state_(XXH64_createState()) {}
  ~StoredFrame() { XXH64_freeState(state_); }
  StoredFrame(const StoredFrame&) = delete;
  StoredFrame& operator=(const StoredFrame&) = delete;

  // Starts a frame: its header goes to *out.
  void Begin(std::string* out) {
    XXH64_reset(state_, 0);
    // Magic 0xFD2FB528; descriptor 0x04: no content size, not a single
    // segment, checksum on, no dictionary; window 2^(10 + 7) bytes.
    static constexpr char kHeader[] = {'\x28', '\xb5', '\x2f', '\xfd', '\x04', '\x38'};
    out->append(kHeader, sizeof kHeader);
  }
  // The header of a block holding `data` (at most kMaxBlock bytes, which
  // the caller writes after it); last: the frame's last block.
  void BlockHeader(std::string_view data, bool last, std::string* out) {
    XXH64_update(state_, data.data(), data.size());
    const uint32_t h = static_cast<uint32_t>(data.size() << 3) | (last ? 1u : 0u);  // type 0: raw
    const char header[3] = {static_cast<char>(h), static_cast<char>(h >> 8), static_cast<char>(h >> 16)};
    out->append(header, 3);
  }
  // Ends the frame (after a last block): the checksum goes to *out.
  void End(std::string* out) {
    const uint32_t c = static_cast<uint32_t>(XXH64_digest(state_));
    const char bytes[4] = {static_cast<char>(c), static_cast<char>(c >> 8), static_cast<char>(c >> 16),
                           static_cast<char>(c >> 24)};
    out->append(bytes, 4);
  }

 private:
  XXH64_state_t* state_;
};

// A compression context and its buffers, reused frame after frame. Level
// kStoredLevel stores (StoredFrame) and needs no zstd context.
struct Compressor {
  explicit Compressor(int level)
      : level(level), cctx(level == kStoredLevel ? nullptr : ZSTD_createCCtx()),
        out(ZSTD_CStreamOutSize()) {
    if (cctx != nullptr) {
      ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
      ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);  // detects flipped bytes
    }
  }
  ~Compressor() { ZSTD_freeCCtx(cctx); }
  Compressor(const Compressor&) = delete;
  Compressor& operator=(const Compressor&) = delete;
  bool ok() const { return level == kStoredLevel || cctx != nullptr; }

  int level;
  ZSTD_CCtx* cctx;
  std::string batch;
  std::vector<char> out;
  StoredFrame stored;
  std::string headers;  // a stored frame's headers before their bytes
};

// Writes one segment through a borrowed Compressor. A segment with no
// records writes nothing (compressed_bytes == 0).
class FrameWriter {
 public:
  FrameWriter(Compressor* c, int fd, std::string_view path, int64_t offset)
      : c_(c), fd_(fd), path_(path) {
    info_.offset = offset;
  }

  Status Add(std::string_view key, std::string_view value) {
    if (!status_.ok()) return status_;
    if (finished_) return Status::FailedPrecondition("segment already finished");
    if (key.size() > UINT32_MAX || value.size() > UINT32_MAX) {
      return Status::InvalidArgument("map output key or value over 4 GiB");
    }
    if (!started_) {
      if (!c_->ok()) return status_ = Status::Internal("ZSTD_createCCtx failed");
      if (c_->cctx != nullptr) ZSTD_CCtx_reset(c_->cctx, ZSTD_reset_session_only);
      c_->batch.clear();
      c_->headers.clear();
      if (c_->cctx == nullptr) c_->stored.Begin(&c_->headers);
      started_ = true;
    }
    char header[10];
    char* end = EncodeVarint32(header, static_cast<uint32_t>(key.size()));
    end = EncodeVarint32(end, static_cast<uint32_t>(value.size()));
    std::string& batch = c_->batch;
    batch.append(header, end - header);
    if (batch.size() + key.size() + value.size() <= kBatchBytes) {
      batch.append(key);
      batch.append(value);
    } else {  // flush, then stream the record itself (no copy of large values)
      status_ = Push(batch, ZSTD_e_continue);
      batch.clear();
      if (status_.ok()) status_ = Push(key, ZSTD_e_continue);
      if (status_.ok()) status_ = Push(value, ZSTD_e_continue);
    }
    info_.raw_bytes += static_cast<int64_t>(key.size() + value.size());
    info_.records++;
    return status_;
  }

  Result<SegmentInfo> Finish() {
    if (status_.ok() && started_) {
      status_ = Push(c_->batch, ZSTD_e_end);
      c_->batch.clear();
      started_ = false;
    }
    finished_ = true;
    if (!status_.ok()) return status_;
    return info_;
  }

 private:
  Status Push(std::string_view data, ZSTD_EndDirective directive) {
    if (c_->cctx == nullptr) return PushStored(data, directive == ZSTD_e_end);
    ZSTD_inBuffer in{data.data(), data.size(), 0};
    for (;;) {
      ZSTD_outBuffer out{c_->out.data(), c_->out.size(), 0};
      size_t remaining = ZSTD_compressStream2(c_->cctx, &out, &in, directive);
      if (ZSTD_isError(remaining)) {
        return Status::Internal(std::string("zstd compress: ") + ZSTD_getErrorName(remaining));
      }
      MR_RETURN_IF_ERROR(WriteAll(fd_, c_->out.data(), out.pos, path_));
      info_.compressed_bytes += static_cast<int64_t>(out.pos);
      bool done = directive == ZSTD_e_end ? remaining == 0 : in.pos == in.size;
      if (done) return Status::OK();
    }
  }

  // Push for kStoredLevel: `data` as blocks of at most kMaxBlock bytes,
  // each written after its header; `end` closes the frame (an empty last
  // block when `data` is empty).
  Status PushStored(std::string_view data, bool end) {
    if (data.empty() && !end) return Status::OK();
    std::string& headers = c_->headers;
    do {
      const std::string_view block = data.substr(0, StoredFrame::kMaxBlock);
      data.remove_prefix(block.size());
      const bool last = end && data.empty();
      c_->stored.BlockHeader(block, last, &headers);
      MR_RETURN_IF_ERROR(WriteAll(fd_, headers.data(), headers.size(), path_));
      MR_RETURN_IF_ERROR(WriteAll(fd_, block.data(), block.size(), path_));
      info_.compressed_bytes += static_cast<int64_t>(headers.size() + block.size());
      headers.clear();
    } while (!data.empty());
    if (!end) return Status::OK();
    c_->stored.End(&headers);
    MR_RETURN_IF_ERROR(WriteAll(fd_, headers.data(), headers.size(), path_));
    info_.compressed_bytes += static_cast<int64_t>(headers.size());
    headers.clear();
    return Status::OK();
  }

  Compressor* c_;
  int fd_;
  std::string path_;
  SegmentInfo info_;
  bool started_ = false;
  bool finished_ = false;
  Status status_;
};

// A reader of the segment at [offset, offset + length) of `fd`, which the
// caller keeps open for the reader's life; `path` names it in errors.
std::unique_ptr<SegmentReader> ReadSegmentRange(int fd, std::string_view path, int64_t offset,
                                                int64_t length);

// Calls a combiner and turns a throw into a Status.
Status RunCombiner(const CombineFn& combiner, std::string_view key, const NextValueFn& next,
                   const EmitFn& emit);

}  // namespace mr::worker::internal

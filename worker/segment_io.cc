// The segment codec and the readers built on it: FrameReader (one segment
// from memory or a file range, with a bounded window), the public
// SegmentWriter and SegmentReader, and MergingReader, which a reduce task
// uses to merge the segments it fetched. Format: docs/map-output-format.md.
#include "worker/segment_io.h"

#include <fcntl.h>

#include <cerrno>
#include <exception>
#include <new>

namespace mr::worker {
namespace internal {

Status ErrnoError(std::string_view what, std::string_view path) {
  return Status::IOError(std::string(what) + " " + std::string(path) + ": " + std::strerror(errno));
}

Status WriteAll(int fd, const char* data, size_t n, std::string_view path) {
  while (n > 0) {
    ssize_t w = ::write(fd, data, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return ErrnoError("write", path);
    }
    data += w;
    n -= static_cast<size_t>(w);
  }
  return Status::OK();
}

// Calls a combiner and turns a throw into a Status.
Status RunCombiner(const CombineFn& combiner, std::string_view key, const NextValueFn& next,
                   const EmitFn& emit) {
  try {
    combiner(key, next, emit);
  } catch (const std::exception& e) {
    return Status::Internal(std::string("combiner threw: ") + e.what());
  } catch (...) {
    return Status::Internal("combiner threw");
  }
  return Status::OK();
}

namespace {

enum class Parse { kOk, kNeedMore, kBad };

// Decodes a LEB128 varint32 at *p, advancing *p past it on kOk.
Parse DecodeVarint32(const char** p, const char* limit, uint32_t* v) {
  uint32_t result = 0;
  const char* q = *p;
  for (int shift = 0; shift <= 28; shift += 7) {
    if (q == limit) return Parse::kNeedMore;
    uint32_t byte = static_cast<uint8_t>(*q++);
    if (shift == 28 && byte > 0x0F) return Parse::kBad;  // more than 32 bits
    result |= (byte & 0x7F) << shift;
    if ((byte & 0x80) == 0) {
      *v = result;
      *p = q;
      return Parse::kOk;
    }
  }
  return Parse::kBad;
}

// Reads one segment from memory or from a file range with a bounded window:
// an input buffer of ZSTD_DStreamInSize() and an output buffer that grows
// only to the largest record.
class FrameReader final : public SegmentReader {
 public:
  explicit FrameReader(std::string_view bytes) : path_("<memory>") {
    in_ = {bytes.data(), bytes.size(), 0};
    frame_done_ = bytes.empty();
  }
  // Reads [offset, offset + length) of `fd`; owns it when `own_fd`.
  FrameReader(int fd, bool own_fd, std::string_view path, int64_t offset, int64_t length)
      : fd_(fd), own_fd_(own_fd), path_(path), file_pos_(offset), file_end_(offset + length) {
    frame_done_ = length == 0;
  }
  ~FrameReader() override {
    ZSTD_freeDCtx(dctx_);
    if (own_fd_) ::close(fd_);
  }

  Result<bool> Next(std::string_view* key, std::string_view* value) override {
    if (!status_.ok()) return status_;
    for (;;) {
      const char* start = out_.data() + begin_;
      const char* limit = out_.data() + end_;
      const char* p = start;
      uint32_t key_len = 0, value_len = 0;
      Parse parse = DecodeVarint32(&p, limit, &key_len);
      if (parse == Parse::kOk) parse = DecodeVarint32(&p, limit, &value_len);
      if (parse == Parse::kBad) return Fail(Status::Corruption("bad varint"));
      size_t need = end_ - begin_ + 1;
      if (parse == Parse::kOk) {
        size_t record = static_cast<size_t>(p - start) + key_len + value_len;
        if (record <= end_ - begin_) {
          *key = std::string_view(p, key_len);
          *value = std::string_view(p + key_len, value_len);
          begin_ += record;
          return true;
        }
        need = record;
      }
      if (frame_done_) {
        if (begin_ == end_) return false;
        return Fail(Status::Corruption("truncated record at end of segment"));
      }
      Status s;
      try {
        s = Fill(need);
      } catch (const std::bad_alloc&) {  // a record too large for memory
        s = Status::Internal("out of memory for a record of " + std::to_string(need) + " bytes");
      }
      if (!s.ok()) return Fail(s);
    }
  }

 private:
  Status Fail(const Status& s) {
    status_ = s.WithContext(path_);
    return status_;
  }

  bool SourceExhausted() const { return in_.pos == in_.size && file_pos_ == file_end_; }

  Status Refill() {
    if (fd_ < 0 || file_pos_ == file_end_) return Status::OK();
    if (in_buf_.empty()) in_buf_.resize(ZSTD_DStreamInSize());
    size_t want = static_cast<size_t>(
        std::min<int64_t>(static_cast<int64_t>(in_buf_.size()), file_end_ - file_pos_));
    ssize_t n;
    do {
      n = ::pread(fd_, in_buf_.data(), want, file_pos_);
    } while (n < 0 && errno == EINTR);
    if (n < 0) return ErrnoError("pread", path_);
    if (n == 0) return Status::Corruption("file ends inside the segment range");
    file_pos_ += n;
    in_ = {in_buf_.data(), static_cast<size_t>(n), 0};
    return Status::OK();
  }

  // Decompresses until `need` bytes from begin_ are buffered or the frame ends.
  Status Fill(size_t need) {
    if (begin_ > 0) {
      std::memmove(out_.data(), out_.data() + begin_, end_ - begin_);
      end_ -= begin_;
      begin_ = 0;
    }
    if (out_.size() < need || out_.empty()) {
      out_.resize(std::max({need, out_.size() * 2, ZSTD_DStreamOutSize()}));
    }
    if (dctx_ == nullptr && (dctx_ = ZSTD_createDCtx()) == nullptr) {
      return Status::Internal("ZSTD_createDCtx failed");
    }
    while (end_ < need && !frame_done_) {
      if (in_.pos == in_.size) MR_RETURN_IF_ERROR(Refill());
      size_t in_before = in_.pos, out_before = end_;
      ZSTD_outBuffer out{out_.data(), out_.size(), end_};
      size_t ret = ZSTD_decompressStream(dctx_, &out, &in_);
      if (ZSTD_isError(ret)) {
        return Status::Corruption(std::string("zstd: ") + ZSTD_getErrorName(ret));
      }
      end_ = out.pos;
      if (ret == 0) {
        frame_done_ = true;
        if (!SourceExhausted()) return Status::Corruption("trailing bytes after the frame");
      } else if (in_.pos == in_before && end_ == out_before && SourceExhausted()) {
        return Status::Corruption("truncated frame");
      }
    }
    return Status::OK();
  }

  int fd_ = -1;
  bool own_fd_ = false;
  std::string path_;
  int64_t file_pos_ = 0, file_end_ = 0;
  std::vector<char> in_buf_;
  ZSTD_inBuffer in_{nullptr, 0, 0};
  ZSTD_DCtx* dctx_ = nullptr;
  std::vector<char> out_;  // decompressed bytes; records are [begin_, end_)
  size_t begin_ = 0, end_ = 0;
  bool frame_done_ = false;
  Status status_;
};

}  // namespace

std::unique_ptr<SegmentReader> ReadSegmentRange(int fd, std::string_view path, int64_t offset,
                                                int64_t length) {
  return std::make_unique<FrameReader>(fd, /*own_fd=*/false, path, offset, length);
}

}  // namespace internal

using internal::CompareBytes;
using internal::Compressor;
using internal::ErrnoError;
using internal::FrameReader;
using internal::FrameWriter;

// ---------------------------------------------------------------------------
// SegmentWriter, SegmentReader

struct SegmentWriter::Impl {
  Impl(int fd, int64_t offset, int level)
      : compressor(level), writer(&compressor, fd, "fd " + std::to_string(fd), offset) {}
  Compressor compressor;
  FrameWriter writer;
};

SegmentWriter::SegmentWriter(int fd, int64_t offset, int zstd_level)
    : impl_(std::make_unique<Impl>(fd, offset, zstd_level)) {}
SegmentWriter::~SegmentWriter() = default;
Status SegmentWriter::Add(std::string_view key, std::string_view value) {
  try {
    return impl_->writer.Add(key, value);
  } catch (const std::bad_alloc&) {
    return Status::Internal("SegmentWriter::Add: out of memory");
  }
}
Result<SegmentInfo> SegmentWriter::Finish() {
  try {
    return impl_->writer.Finish();
  } catch (const std::bad_alloc&) {
    return Status::Internal("SegmentWriter::Finish: out of memory");
  }
}

std::unique_ptr<SegmentReader> SegmentReader::FromMemory(std::string_view bytes) {
  return std::make_unique<FrameReader>(bytes);
}

Result<std::unique_ptr<SegmentReader>> SegmentReader::FromFile(const std::string& path,
                                                               int64_t offset, int64_t length) {
  if (offset < 0 || length < 0) return Status::InvalidArgument("negative segment range");
  int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return ErrnoError("open", path);
  return std::unique_ptr<SegmentReader>(
      std::make_unique<FrameReader>(fd, /*own_fd=*/true, path, offset, length));
}

// ---------------------------------------------------------------------------
// MergingReader

struct MergingReader::Impl {
  std::vector<std::unique_ptr<SegmentReader>> inputs;
  std::vector<std::string_view> keys, values;  // each input's current record
  // Min-heap of inputs with a current record, by (key, input index). The input
  // whose value was handed out stays on top until the next call advances it.
  std::vector<int> heap;
  std::string key;       // the current key (a copy: the inputs move on)
  bool pending = false;  // heap[0]'s value was handed out
  bool started = false;
  bool in_key = false;
  Status status;

  bool Less(int a, int b) const {
    int c = CompareBytes(keys[a], keys[b]);
    return c != 0 ? c < 0 : a < b;
  }
  void SiftDown(size_t i) {
    const size_t n = heap.size();
    const int x = heap[i];
    for (;;) {
      size_t c = 2 * i + 1;
      if (c >= n) break;
      if (c + 1 < n && Less(heap[c + 1], heap[c])) ++c;
      if (!Less(heap[c], x)) break;
      heap[i] = heap[c];
      i = c;
    }
    heap[i] = x;
  }
  Status Start() {
    for (size_t i = 0; i < inputs.size(); ++i) {
      MR_ASSIGN_OR_RETURN(bool more, inputs[i]->Next(&keys[i], &values[i]));
      if (more) heap.push_back(static_cast<int>(i));
    }
    for (size_t i = heap.size() / 2; i-- > 0;) SiftDown(i);
    return Status::OK();
  }
  // Moves the top input to its next record and restores the heap.
  Status AdvanceTop() {
    int i = heap[0];
    MR_ASSIGN_OR_RETURN(bool more, inputs[i]->Next(&keys[i], &values[i]));
    if (!more) {
      heap[0] = heap.back();
      heap.pop_back();
    }
    if (!heap.empty()) SiftDown(0);
    return Status::OK();
  }
};

MergingReader::MergingReader(std::vector<std::unique_ptr<SegmentReader>> inputs)
    : impl_(std::make_unique<Impl>()) {
  impl_->keys.resize(inputs.size());
  impl_->values.resize(inputs.size());
  impl_->inputs = std::move(inputs);
}

MergingReader::~MergingReader() = default;

Result<bool> MergingReader::NextKey(std::string_view* key) {
  Impl& m = *impl_;
  if (!m.status.ok()) return m.status;
  if (!m.started) {
    m.started = true;
    m.status = m.Start();
    if (!m.status.ok()) return m.status;
  }
  if (m.in_key) {  // skip the values the caller did not read
    std::string_view ignored;
    while (NextValue(&ignored)) {
    }
    if (!m.status.ok()) return m.status;
  }
  if (m.heap.empty()) {
    m.in_key = false;
    return false;
  }
  try {
    m.key.assign(m.keys[m.heap[0]]);
  } catch (const std::bad_alloc&) {
    return m.status = Status::Internal("MergingReader: out of memory");
  }
  m.in_key = true;
  *key = m.key;
  return true;
}

bool MergingReader::NextValue(std::string_view* value) {
  Impl& m = *impl_;
  if (!m.status.ok() || !m.in_key) return false;
  if (m.pending) {
    m.pending = false;
    m.status = m.AdvanceTop();
    if (!m.status.ok()) return false;
  }
  if (m.heap.empty() || m.keys[m.heap[0]] != m.key) return false;
  *value = m.values[m.heap[0]];
  m.pending = true;
  return true;
}


}  // namespace mr::worker

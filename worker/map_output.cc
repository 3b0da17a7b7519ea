// Map output: segment writer and reader, the merging reader, and the sort
// buffer with its spills and merge. Format: docs/map-output-format.md.
//
// One file because the four pieces share the frame code (FrameWriter,
// FrameReader) and the buffer is the writer's and the merger's main user.
#include "worker/map_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <exception>
#include <new>
#include <utility>

#include "worker/map_aggregate.h"

namespace mr::worker {
namespace {

// Serialized records collected before one call into zstd (fewer, larger calls).
constexpr size_t kBatchBytes = 128 << 10;
// At most this many runs are merged at once; more runs take extra passes.
// Bounds the open readers (each a zstd context and two ~128 KiB buffers).
constexpr size_t kMergeFactor = 16;

Status ErrnoError(std::string_view what, std::string_view path) {
  return Status::IOError(std::string(what) + " " + std::string(path) + ": " + std::strerror(errno));
}

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

char* EncodeVarint32(char* dst, uint32_t v) {
  while (v >= 0x80) {
    *dst++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *dst++ = static_cast<char>(v);
  return dst;
}

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

uint64_t LoadBigEndian64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  if constexpr (std::endian::native == std::endian::little) v = __builtin_bswap64(v);
  return v;
}

// Bytewise (unsigned) comparison, inline: keys are short, and a call to
// memcmp per comparison dominated the sort.
int CompareBytes(std::string_view a, std::string_view b) {
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

// A compression context and its buffers, reused frame after frame.
struct Compressor {
  explicit Compressor(int level) : cctx(ZSTD_createCCtx()), out(ZSTD_CStreamOutSize()) {
    if (cctx != nullptr) {
      ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level);
      ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, 1);  // detects flipped bytes
    }
  }
  ~Compressor() { ZSTD_freeCCtx(cctx); }
  Compressor(const Compressor&) = delete;
  Compressor& operator=(const Compressor&) = delete;

  ZSTD_CCtx* cctx;
  std::string batch;
  std::vector<char> out;
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
      if (c_->cctx == nullptr) return status_ = Status::Internal("ZSTD_createCCtx failed");
      ZSTD_CCtx_reset(c_->cctx, ZSTD_reset_session_only);
      c_->batch.clear();
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

  Compressor* c_;
  int fd_;
  std::string path_;
  SegmentInfo info_;
  bool started_ = false;
  bool finished_ = false;
  Status status_;
};

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

}  // namespace

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

// ---------------------------------------------------------------------------
// MapOutputBuffer

namespace {

// One buffered record: key at arena[offset], value right after it. `prefix`
// holds the key's first 8 bytes big-endian (zero-padded) so most comparisons
// in the sort touch no arena memory; `seq` (arrival order) breaks ties.
struct Entry {
  uint64_t prefix;
  uint64_t offset;
  uint32_t key_len;
  uint32_t value_len;
  uint32_t partition;
  uint32_t seq;
};
static_assert(sizeof(Entry) == 32);

uint64_t KeyPrefix(std::string_view key) {
  unsigned char bytes[8] = {};
  std::memcpy(bytes, key.data(), std::min<size_t>(8, key.size()));
  uint64_t v = 0;
  for (unsigned char b : bytes) v = (v << 8) | b;
  return v;
}
// Accounted per record on top of its key and value bytes.
constexpr int64_t kRecordOverhead = sizeof(Entry);

// A run file: one segment per partition, in partition order.
struct Run {
  std::string path;
  std::vector<SegmentInfo> segments;
};

std::atomic<uint64_t> g_run_seq{0};

}  // namespace

struct MapOutputBuffer::Impl {
  explicit Impl(const MapOutputOptions& o)
      : options(o), compressor(o.zstd_level), progress(static_cast<size_t>(o.partitions), 0) {
    if (o.sum_counts) counts = std::make_unique<CountTable>(o.sort_buffer_bytes);
  }

  MapOutputOptions options;
  Compressor compressor;
  // With sum_counts, until a value is not a count: the buffer is this table
  // and arena and index stay empty.
  std::unique_ptr<CountTable> counts;
  std::string arena;
  std::vector<Entry> index;
  int64_t buffered_bytes = 0;      // accounted: key + value + kRecordOverhead per record
  std::vector<Run> runs;           // current runs, in spill order
  std::vector<std::string> files;  // every file not yet removed (runs, temporary output)
  MapOutputIndex stats;
  std::vector<int64_t> progress;  // partition_bytes_so_far()
  bool finished = false;
  Status failed;  // set by a failed spill: the buffer is unusable afterwards

  std::string_view Key(const Entry& e) const {
    return std::string_view(arena.data() + e.offset, e.key_len);
  }
  std::string_view KeyTail(const Entry& e) const {  // the key after its prefix
    return e.key_len <= 8 ? std::string_view() : Key(e).substr(8);
  }
  bool SameKey(const Entry& a, const Entry& b) const {  // and the same partition
    return a.partition == b.partition && a.prefix == b.prefix && a.key_len == b.key_len &&
           KeyTail(a) == KeyTail(b);
  }
  std::string_view Value(const Entry& e) const {
    return std::string_view(arena.data() + e.offset + e.key_len, e.value_len);
  }

  void Forget(const std::string& path) {
    ::unlink(path.c_str());
    files.erase(std::remove(files.begin(), files.end(), path), files.end());
  }

  Result<UniqueFd> CreateFile(const std::string& path, bool exclusive) {
    int flags = O_WRONLY | O_CREAT | O_CLOEXEC | (exclusive ? O_EXCL : O_TRUNC);
    int fd = ::open(path.c_str(), flags, 0600);
    if (fd < 0) return ErrnoError("create", path);
    files.push_back(path);
    return UniqueFd(fd);
  }

  Result<Run> NewRun(UniqueFd* fd) {
    Run run;
    run.path = options.spill_dir + "/mapout-" + std::to_string(::getpid()) + "-" +
               std::to_string(g_run_seq.fetch_add(1)) + ".run";
    MR_ASSIGN_OR_RETURN(*fd, CreateFile(run.path, /*exclusive=*/true));
    return run;
  }

  bool BufferEmpty() const { return counts ? counts->empty() : index.empty(); }

  // Why Add must refuse the record; OK when it need not.
  Status CheckAdd(std::string_view key, std::string_view value) const {
    if (finished) return Status::FailedPrecondition("MapOutputBuffer::Add after Finish");
    if (!failed.ok()) return failed;
    if (key.size() > UINT32_MAX || value.size() > UINT32_MAX) {
      return Status::InvalidArgument("map output key or value over 4 GiB");
    }
    return Status::OK();
  }
  bool AddAllowed(std::string_view key, std::string_view value) const {
    return !finished && failed.ok() && key.size() <= UINT32_MAX && value.size() <= UINT32_MAX;
  }

  Result<int> PartitionOf(std::string_view key) const {
    if (!options.partition) {
      return Status::FailedPrecondition("MapOutputBuffer::Add(key, value) needs options.partition");
    }
    const int p = options.partition(key);
    if (p < 0 || p >= options.partitions) {
      return Status::Internal("partition function gave " + std::to_string(p) + " for " +
                              std::to_string(options.partitions) + " partitions");
    }
    return p;
  }

  // Runs fn (one of the Adds below); an exception (std::bad_alloc, or one
  // from options.partition) fails the buffer. Out of line, so that the hot
  // path of MapOutputBuffer::Add stays small.
  template <typename Fn>
  [[gnu::noinline]] Status Guard(const Fn& fn) {
    try {
      return fn();
    } catch (const std::exception& e) {
      failed = Status::Internal(std::string("MapOutputBuffer::Add: ") + e.what());
      return failed;
    }
  }

  // With sum_counts, a record whose value is count n: the hot path of a
  // counting job. kAnyPartition: options.partition gives the partition, asked
  // only when the key is new to the table.
  Status Count(uint32_t partition, std::string_view key, std::string_view value, int64_t n) {
    CountRecord(key, value);
    uint64_t hash;
    if (counts->Increment(partition, key, n, &hash)) return Status::OK();
    return Guard([&]() -> Status {
      if (partition == CountTable::kAnyPartition) {
        MR_ASSIGN_OR_RETURN(const int p, PartitionOf(key));
        partition = static_cast<uint32_t>(p);
      }
      progress[partition] += static_cast<int64_t>(key.size() + value.size());
      return InsertCount(partition, key, hash, n);
    });
  }

  // Add(key, value) off the hot path.
  Status Add(std::string_view key, std::string_view value) {
    if (!AddAllowed(key, value)) return CheckAdd(key, value);
    MR_ASSIGN_OR_RETURN(const int p, PartitionOf(key));
    return Add(p, key, value);
  }

  // Add(partition, key, value) off the hot path.
  Status Add(int partition, std::string_view key, std::string_view value) {
    if (!AddAllowed(key, value)) return CheckAdd(key, value);
    if (partition < 0 || partition >= options.partitions) {
      return Status::InvalidArgument("partition " + std::to_string(partition) + " out of range");
    }
    if (counts) {
      int64_t n;
      if (ParseCount(value, &n)) return Count(static_cast<uint32_t>(partition), key, value, n);
      MR_RETURN_IF_ERROR(StopCounting());
    }
    return Buffer(partition, key, value);
  }

  // The statistics count every record as if it had been buffered.
  void CountRecord(std::string_view key, std::string_view value) {
    stats.raw_bytes_in += static_cast<int64_t>(key.size() + value.size());
    stats.records_in++;
  }

  // A new key for the count table; spills first when the table is full.
  Status InsertCount(uint32_t partition, std::string_view key, uint64_t hash, int64_t n) {
    if (!counts->Insert(partition, key, hash, n)) {
      MR_RETURN_IF_ERROR(SpillToRun());
      counts->Insert(partition, key, hash, n);  // an empty table takes any key
    }
    if (counts->full()) MR_RETURN_IF_ERROR(SpillToRun());
    return Status::OK();
  }

  // A value that is not a count: spills what was counted, and buffers every
  // record from now on (the combiner still sums them at spill and merge).
  Status StopCounting() {
    if (!counts->empty()) MR_RETURN_IF_ERROR(SpillToRun());
    counts.reset();
    return Status::OK();
  }

  // Appends one record to the sort buffer; spills when it is full.
  Status Buffer(int partition, std::string_view key, std::string_view value) {
    int64_t size = static_cast<int64_t>(key.size() + value.size());
    if (!index.empty() && buffered_bytes + size + kRecordOverhead > options.sort_buffer_bytes) {
      MR_RETURN_IF_ERROR(SpillToRun());
    }
    // Reserved up front: address space, not resident memory, and no regrowth.
    if (index.capacity() == 0) {
      index.reserve(static_cast<size_t>(options.sort_buffer_bytes / kRecordOverhead) + 1);
    }
    if (arena.capacity() < static_cast<size_t>(options.sort_buffer_bytes)) {
      arena.reserve(static_cast<size_t>(options.sort_buffer_bytes));
    }
    index.push_back(Entry{KeyPrefix(key), arena.size(), static_cast<uint32_t>(key.size()),
                          static_cast<uint32_t>(value.size()), static_cast<uint32_t>(partition),
                          static_cast<uint32_t>(index.size())});
    arena.append(key);
    arena.append(value);
    buffered_bytes += size + kRecordOverhead;
    progress[static_cast<size_t>(partition)] += size;
    CountRecord(key, value);
    if (buffered_bytes >= options.sort_buffer_bytes) MR_RETURN_IF_ERROR(SpillToRun());
    return Status::OK();
  }

  // Orders the index by (partition, key bytewise, arrival).
  void SortIndex() {
    std::sort(index.begin(), index.end(), [this](const Entry& a, const Entry& b) {
      if (a.partition != b.partition) return a.partition < b.partition;
      if (a.prefix != b.prefix) return a.prefix < b.prefix;
      // Equal first 8 bytes (zero padding included): the rest decides.
      if (a.key_len > 8 || b.key_len > 8) {
        int c = CompareBytes(KeyTail(a), KeyTail(b));
        if (c != 0) return c < 0;
      }
      if (a.key_len != b.key_len) return a.key_len < b.key_len;
      return a.seq < b.seq;
    });
  }

  // Sorts the buffer (records or counts) and writes one segment per partition
  // to `fd`; then empties the buffer.
  Status WriteBuffer(int fd, const std::string& path, std::vector<SegmentInfo>* segments) {
    return counts ? WriteCounts(fd, path, segments) : WriteRecords(fd, path, segments);
  }

  // The count table as records (key, decimal count), what the combiner would
  // have made of the records they count.
  Status WriteCounts(int fd, const std::string& path, std::vector<SegmentInfo>* segments) {
    counts->Sort();
    stats.spills++;
    const size_t n = counts->size();
    size_t i = 0;
    int64_t offset = 0;
    char digits[24];
    for (int p = 0; p < options.partitions; ++p) {
      FrameWriter w(&compressor, fd, path, offset);
      for (; i < n; ++i) {
        const CountTable::Entry e = counts->entry(i);
        if (e.partition != static_cast<uint32_t>(p)) break;
        const char* end = std::to_chars(digits, digits + sizeof digits, e.count).ptr;
        MR_RETURN_IF_ERROR(w.Add(e.key, std::string_view(digits, end - digits)));
      }
      MR_ASSIGN_OR_RETURN(SegmentInfo info, w.Finish());
      offset += info.compressed_bytes;
      segments->push_back(info);
    }
    counts->Clear();
    return Status::OK();
  }

  // Sorts the records and writes them, combining runs of equal keys.
  Status WriteRecords(int fd, const std::string& path, std::vector<SegmentInfo>* segments) {
    SortIndex();
    stats.spills++;
    const size_t n = index.size();
    size_t i = 0, next = 0, run_end = 0;
    FrameWriter* writer = nullptr;
    Status emit_status;
    NextValueFn next_value = [&](std::string_view* v) {
      if (next >= run_end) return false;
      *v = Value(index[next++]);
      return true;
    };
    EmitFn emit = [&](std::string_view k, std::string_view v) {
      if (emit_status.ok()) emit_status = writer->Add(k, v);
    };
    int64_t offset = 0;
    for (int p = 0; p < options.partitions; ++p) {
      FrameWriter w(&compressor, fd, path, offset);
      writer = &w;
      while (i < n && index[i].partition == static_cast<uint32_t>(p)) {
        if (!options.combiner) {
          MR_RETURN_IF_ERROR(w.Add(Key(index[i]), Value(index[i])));
          ++i;
          continue;
        }
        run_end = i + 1;
        while (run_end < n && SameKey(index[run_end], index[i])) {
          ++run_end;
        }
        next = i;
        MR_RETURN_IF_ERROR(RunCombiner(options.combiner, Key(index[i]), next_value, emit));
        MR_RETURN_IF_ERROR(emit_status);
        i = run_end;
      }
      MR_ASSIGN_OR_RETURN(SegmentInfo info, w.Finish());
      offset += info.compressed_bytes;
      segments->push_back(info);
    }
    index.clear();
    arena.clear();
    buffered_bytes = 0;
    if (arena.capacity() > 2 * static_cast<size_t>(options.sort_buffer_bytes)) {
      std::string().swap(arena);  // a record larger than the buffer grew it; give it back
    }
    return Status::OK();
  }

  Status SpillToRun() {
    Status s = WriteRun();
    if (!s.ok()) failed = s;
    return s;
  }

  Status WriteRun() {
    UniqueFd fd;
    MR_ASSIGN_OR_RETURN(Run run, NewRun(&fd));
    MR_RETURN_IF_ERROR(WriteBuffer(fd.get(), run.path, &run.segments));
    MR_RETURN_IF_ERROR(fd.Close(run.path));
    runs.push_back(std::move(run));
    return Status::OK();
  }

  // Merges `in` partition by partition into `fd`, combining equal keys across
  // runs when a combiner is set.
  Status MergeRuns(const std::vector<Run>& in, int fd, const std::string& path,
                   std::vector<SegmentInfo>* segments) {
    std::vector<UniqueFd> fds;
    for (const Run& run : in) {
      int rfd = ::open(run.path.c_str(), O_RDONLY | O_CLOEXEC);
      if (rfd < 0) return ErrnoError("open", run.path);
      fds.emplace_back(rfd);
    }
    int64_t offset = 0;
    for (int p = 0; p < options.partitions; ++p) {
      std::vector<std::unique_ptr<SegmentReader>> readers;
      for (size_t r = 0; r < in.size(); ++r) {
        const SegmentInfo& s = in[r].segments[p];
        if (s.compressed_bytes == 0) continue;
        readers.push_back(std::make_unique<FrameReader>(fds[r].get(), /*own_fd=*/false, in[r].path,
                                                        s.offset, s.compressed_bytes));
      }
      MergingReader merger(std::move(readers));
      FrameWriter w(&compressor, fd, path, offset);
      Status emit_status;
      NextValueFn next = [&](std::string_view* v) { return merger.NextValue(v); };
      EmitFn emit = [&](std::string_view k, std::string_view v) {
        if (emit_status.ok()) emit_status = w.Add(k, v);
      };
      for (;;) {
        std::string_view key, value;
        MR_ASSIGN_OR_RETURN(bool more, merger.NextKey(&key));
        if (!more) break;
        if (options.combiner) {
          MR_RETURN_IF_ERROR(RunCombiner(options.combiner, key, next, emit));
          MR_RETURN_IF_ERROR(emit_status);
        } else {
          while (merger.NextValue(&value)) MR_RETURN_IF_ERROR(w.Add(key, value));
        }
      }
      MR_ASSIGN_OR_RETURN(SegmentInfo info, w.Finish());
      offset += info.compressed_bytes;
      segments->push_back(info);
    }
    return Status::OK();
  }

  // Merges consecutive groups of kMergeFactor runs into one run each, keeping
  // spill order, so the final merge reads at most kMergeFactor runs.
  Status MergePass() {
    std::vector<Run> merged;
    for (size_t i = 0; i < runs.size(); i += kMergeFactor) {
      size_t end = std::min(runs.size(), i + kMergeFactor);
      if (end - i == 1) {
        merged.push_back(std::move(runs[i]));
        continue;
      }
      std::vector<Run> group(std::make_move_iterator(runs.begin() + i),
                             std::make_move_iterator(runs.begin() + end));
      UniqueFd fd;
      MR_ASSIGN_OR_RETURN(Run out, NewRun(&fd));
      MR_RETURN_IF_ERROR(MergeRuns(group, fd.get(), out.path, &out.segments));
      MR_RETURN_IF_ERROR(fd.Close(out.path));
      for (const Run& r : group) Forget(r.path);
      merged.push_back(std::move(out));
    }
    runs = std::move(merged);
    return Status::OK();
  }

  Result<MapOutputIndex> Finish(const std::string& output_path) {
    if (finished) return Status::FailedPrecondition("MapOutputBuffer::Finish called twice");
    finished = true;
    if (!failed.ok()) return failed;
    const std::string tmp = output_path + ".tmp";
    std::vector<SegmentInfo> segments;
    if (runs.empty()) {  // all in memory (or nothing): one pass straight to the output
      MR_ASSIGN_OR_RETURN(UniqueFd fd, CreateFile(tmp, /*exclusive=*/false));
      if (BufferEmpty()) {
        segments.assign(options.partitions, SegmentInfo{});
      } else {
        MR_RETURN_IF_ERROR(WriteBuffer(fd.get(), tmp, &segments));
      }
      MR_RETURN_IF_ERROR(fd.Close(tmp));
    } else {
      if (!BufferEmpty()) MR_RETURN_IF_ERROR(SpillToRun());
      std::string().swap(arena);  // the merge needs no sort buffer
      std::vector<Entry>().swap(index);
      counts.reset();
      while (runs.size() > kMergeFactor) MR_RETURN_IF_ERROR(MergePass());
      MR_ASSIGN_OR_RETURN(UniqueFd fd, CreateFile(tmp, /*exclusive=*/false));
      MR_RETURN_IF_ERROR(MergeRuns(runs, fd.get(), tmp, &segments));
      MR_RETURN_IF_ERROR(fd.Close(tmp));
    }
    if (::rename(tmp.c_str(), output_path.c_str()) != 0) return ErrnoError("rename", tmp);
    files.erase(std::remove(files.begin(), files.end(), tmp), files.end());
    for (const Run& r : runs) Forget(r.path);
    runs.clear();
    stats.segments = std::move(segments);
    return stats;
  }
};

Result<std::unique_ptr<MapOutputBuffer>> MapOutputBuffer::Create(const MapOutputOptions& options) {
  if (options.partitions < 1) return Status::InvalidArgument("partitions must be >= 1");
  if (options.sort_buffer_bytes < 1) {
    return Status::InvalidArgument("sort_buffer_bytes must be >= 1");
  }
  if (options.sum_counts && !options.combiner) {
    return Status::InvalidArgument("sum_counts needs a combiner (it merges the runs)");
  }
  if (options.zstd_level < ZSTD_minCLevel() || options.zstd_level > ZSTD_maxCLevel()) {
    return Status::InvalidArgument("zstd_level " + std::to_string(options.zstd_level) +
                                   " out of range");
  }
  struct stat st;
  if (::stat(options.spill_dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return Status::InvalidArgument("spill_dir '" + options.spill_dir + "' is not a directory");
  }
  auto impl = std::make_unique<Impl>(options);
  if (impl->compressor.cctx == nullptr) return Status::Internal("ZSTD_createCCtx failed");
  return std::unique_ptr<MapOutputBuffer>(new MapOutputBuffer(std::move(impl)));
}

MapOutputBuffer::MapOutputBuffer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

MapOutputBuffer::~MapOutputBuffer() {
  for (const std::string& path : impl_->files) ::unlink(path.c_str());
}

// Both Adds check for the hot path of a counting job inline and leave the
// rest to Impl, through Guard.
Status MapOutputBuffer::Add(int partition, std::string_view key, std::string_view value) {
  Impl& m = *impl_;
  int64_t n;
  if (m.counts && m.AddAllowed(key, value) && partition >= 0 && partition < m.options.partitions &&
      ParseCount(value, &n)) {
    return m.Count(static_cast<uint32_t>(partition), key, value, n);
  }
  return m.Guard([&] { return m.Add(partition, key, value); });
}

Status MapOutputBuffer::Add(std::string_view key, std::string_view value) {
  Impl& m = *impl_;
  int64_t n;
  if (m.counts && m.AddAllowed(key, value) && ParseCount(value, &n)) {
    return m.Count(CountTable::kAnyPartition, key, value, n);
  }
  return m.Guard([&] { return m.Add(key, value); });
}

const std::vector<int64_t>& MapOutputBuffer::partition_bytes_so_far() const {
  return impl_->progress;
}

Result<MapOutputIndex> MapOutputBuffer::Finish(const std::string& output_path) {
  Result<MapOutputIndex> result = Status::Internal("unset");
  try {
    result = impl_->Finish(output_path);
  } catch (const std::exception& e) {
    result = Status::Internal(std::string("MapOutputBuffer::Finish: ") + e.what());
  }
  if (!result.ok()) {  // leave no partial output or run files behind
    for (const std::string& path : impl_->files) ::unlink(path.c_str());
    impl_->files.clear();
    impl_->runs.clear();
  }
  return result;
}

}  // namespace mr::worker

// Map output: the sort buffer of a map task, its spills and its merge into
// one file with a segment per partition. The segment codec and the readers
// are in segment_io.{h,cc}. Format: docs/map-output-format.md.
#include "worker/map_output.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <exception>
#include <new>
#include <utility>

#include "worker/map_aggregate.h"
#include "worker/record_sort.h"
#include "worker/segment_io.h"

namespace mr::worker {

using internal::CompareBytes;
using internal::Compressor;
using internal::ErrnoError;
using internal::FrameWriter;
using internal::RunCombiner;
using internal::UniqueFd;

// ---------------------------------------------------------------------------
// MapOutputBuffer

namespace {

// At most this many runs are merged at once; more runs take extra passes.
// Bounds the open readers (each a zstd context and two ~128 KiB buffers).
constexpr size_t kMergeFactor = 16;

using Entry = internal::SortEntry;
using internal::KeyPrefix;

// Accounted per record on top of its key and value bytes.
constexpr int64_t kRecordOverhead = sizeof(Entry);

// A run file: one segment per partition, in partition order.
struct Run {
  std::string path;
  std::vector<SegmentInfo> segments;
};

std::atomic<uint64_t> g_run_seq{0};

// The most a count table may hold before it spills, whatever the sort
// buffer: a larger table (more distinct keys kept) misses the cache on more
// of its lookups. With a 128 MiB buffer for both, SequenceCount's maps took
// 13.6-15.4 task-seconds against 11.6-12.4 with 64 MiB (128 MiB of text,
// interleaved, idle machine; docs/benchmarks.md, "Where the time goes").
constexpr int64_t kCountTableMaxBytes = 64 << 20;

}  // namespace

struct MapOutputBuffer::Impl {
  explicit Impl(const MapOutputOptions& o)
      : options(o), compressor(o.zstd_level), progress(static_cast<size_t>(o.partitions), 0) {
    if (o.sum_counts) {
      counts = std::make_unique<CountTable>(std::min(o.sort_buffer_bytes, kCountTableMaxBytes));
    }
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
  int64_t buffered_records = 0;  // records that went into the sort buffer (not the count table)
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
    return CountNewKey(partition, key, value, n, hash);
  }

  // Count's second half: `key`, whose record CountRecord has counted, is not
  // in the table, and `hash` is what Increment set.
  Status CountNewKey(uint32_t partition, std::string_view key, std::string_view value, int64_t n,
                     uint64_t hash) {
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
    ++buffered_records;
    progress[static_cast<size_t>(partition)] += size;
    CountRecord(key, value);
    if (buffered_bytes >= options.sort_buffer_bytes) MR_RETURN_IF_ERROR(SpillToRun());
    return Status::OK();
  }

  // Orders the index by (partition, key bytewise, arrival).
  void SortIndex() {
    internal::SortEntries(index, arena.data(), static_cast<uint32_t>(options.partitions));
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
    stats.table_records_out += static_cast<int64_t>(n);
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

  void CountSpilled(const std::vector<SegmentInfo>& segments) {
    for (const SegmentInfo& s : segments) stats.spilled_records += s.records;
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
    CountSpilled(run.segments);
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
        readers.push_back(
            internal::ReadSegmentRange(fds[r].get(), in[r].path, s.offset, s.compressed_bytes));
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
      CountSpilled(out.segments);
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
    CountSpilled(segments);
    stats.table_records_in = stats.records_in - buffered_records;
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
  if (!impl->compressor.ok()) return Status::Internal("ZSTD_createCCtx failed");
  return std::unique_ptr<MapOutputBuffer>(new MapOutputBuffer(std::move(impl)));
}

MapOutputBuffer::MapOutputBuffer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) { SyncTable(); }

bool MapOutputBuffer::CountNewKey(std::string_view key, std::string_view value, int64_t n,
                                  int64_t repeat, uint64_t hash, Status* status) {
  Impl& m = *impl_;
  if (m.AddAllowed(key, value)) {
    counted_records_ += repeat;
    counted_bytes_ += repeat * static_cast<int64_t>(key.size() + value.size());
    *status = m.CountNewKey(CountTable::kAnyPartition, key, value, n, hash);
  } else {
    *status = m.CheckAdd(key, value);
  }
  SyncTable();
  return true;
}

void MapOutputBuffer::SyncTable() {
  const Impl& m = *impl_;
  table_ = !m.finished && m.failed.ok() ? m.counts.get() : nullptr;
}

MapOutputBuffer::~MapOutputBuffer() {
  for (const std::string& path : impl_->files) ::unlink(path.c_str());
}

// Both Adds check for the hot path of a counting job inline and leave the
// rest to Impl, through Guard.
Status MapOutputBuffer::Add(int partition, std::string_view key, std::string_view value) {
  Impl& m = *impl_;
  int64_t n;
  Status s;
  if (m.counts && m.AddAllowed(key, value) && partition >= 0 && partition < m.options.partitions &&
      ParseCount(value, &n)) {
    s = m.Count(static_cast<uint32_t>(partition), key, value, n);
  } else {
    s = m.Guard([&] { return m.Add(partition, key, value); });
  }
  SyncTable();
  return s;
}

Status MapOutputBuffer::Add(std::string_view key, std::string_view value) {
  Impl& m = *impl_;
  int64_t n;
  Status s;
  if (m.counts && m.AddAllowed(key, value) && ParseCount(value, &n)) {
    s = m.Count(CountTable::kAnyPartition, key, value, n);
  } else {
    s = m.Guard([&] { return m.Add(key, value); });
  }
  SyncTable();
  return s;
}

const std::vector<int64_t>& MapOutputBuffer::partition_bytes_so_far() const {
  return impl_->progress;
}

Result<MapOutputIndex> MapOutputBuffer::Finish(const std::string& output_path) {
  Result<MapOutputIndex> result = Status::Internal("unset");
  table_ = nullptr;
  impl_->stats.records_in += counted_records_;
  impl_->stats.raw_bytes_in += counted_bytes_;
  counted_records_ = counted_bytes_ = 0;
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

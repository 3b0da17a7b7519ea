// Map output: the sort buffer, spills and merge of a map task, and the
// readers a reduce task merges from. Start here for the shuffle's data path.
//
// A map task Add()s (partition, key, value) records into a MapOutputBuffer.
// When its memory reaches `sort_buffer_bytes`, the buffer sorts its records by
// (partition, key bytewise), runs the combiner (if any) over each run of equal
// keys, and spills them to a run file. Finish() merges all runs (combining
// again across runs) into one output file with one zstd-compressed segment
// per partition, and returns the index: where each partition's segment is and
// how big it is. A reducer fetches segment p of every map's output and merges
// them with a MergingReader.
//
// File format (docs/map-output-format.md): a segment is one zstd
// frame holding records `varint32 key_len | varint32 value_len | key | value`
// in key order. Run files use the same segment format. Record values larger
// than the buffer are allowed (a buffer with one record spills it alone).
//
// With `sum_counts` (a combiner known to sum decimal counts), the buffer
// keeps one count per (partition, key) in a hash table instead of every
// record (map_aggregate.h) and spills the sorted counts as an ordinary run,
// so the files, the merge and the readers are the same.
//
// Memory is bounded by sort_buffer_bytes (plus one zstd context and I/O
// buffers); inputs far larger than RAM are fine.
//
// Thread-compatible: one buffer per map task.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"
#include "worker/map_aggregate.h"

namespace mr::worker {

// Where partition p's records are in a map output file.
struct SegmentInfo {
  int64_t offset = 0;            // byte offset of the zstd frame in the file
  int64_t compressed_bytes = 0;  // bytes on disk (and on the wire)
  int64_t raw_bytes = 0;         // serialized key+value bytes after the combiner
  int64_t records = 0;
};

struct MapOutputIndex {
  std::vector<SegmentInfo> segments;  // one per partition
  int64_t raw_bytes_in = 0;    // serialized key+value bytes Add()ed (before combiner): FP raw
  int64_t records_in = 0;
  int64_t spills = 0;
  // Counters (docs/logs-and-counters.md): records written to disk, in runs
  // and in the output (each record each time: Hadoop's SPILLED_RECORDS);
  // records that went into the count table and keys written out of it
  // (sum_counts: in-mapper combining counts as combining). The combiner's
  // own calls are counted by the caller, around options.combiner.
  int64_t spilled_records = 0;
  int64_t table_records_in = 0;
  int64_t table_records_out = 0;
};

// Receives combiner output (see jobs/job.h Emitter).
using EmitFn = std::function<void(std::string_view key, std::string_view value)>;
// Pulls the values of one key (see jobs/job.h ValueStream).
using NextValueFn = std::function<bool(std::string_view* value)>;
// A combiner: reads all values of `key` through `next`, emits through `emit`.
using CombineFn =
    std::function<void(std::string_view key, const NextValueFn& next, const EmitFn& emit)>;

// Which partition a key goes to (for Add(key, value)).
using PartitionFn = std::function<int(std::string_view key)>;

struct MapOutputOptions {
  int partitions = 1;                        // ≥ 1
  int64_t sort_buffer_bytes = 128 << 20;     // memory for buffered records (or counts)
  // zstd level of the segments and runs; 0 (internal::kStoredLevel): zstd
  // frames of stored blocks, not compressed (MapTaskSpec::map_output_zstd_level).
  int zstd_level = 1;
  CombineFn combiner;                        // empty = no combiner
  // The combiner emits, for each key, exactly one record: the key and the
  // decimal int64 sum, wrapping, of those of its values that are decimal
  // integers (jobs::SumCounts; jobs::CombinerKind::kSumCounts). The buffer
  // then counts in a hash table and calls the combiner only to merge runs; a
  // value that is not a decimal integer makes it spill its counts and buffer
  // records from then on. Same output either way. REQUIRES: combiner set.
  // Default: false.
  bool sum_counts = false;
  // Partition of a key, for Add(key, value): called once per record, or with
  // sum_counts once per distinct key between spills. Must return
  // 0 <= p < partitions and depend on the key only. Default: none.
  PartitionFn partition;
  std::string spill_dir;                     // where run files go (removed by Finish or destruction)
};

class MapOutputBuffer {
 public:
  static Result<std::unique_ptr<MapOutputBuffer>> Create(const MapOutputOptions& options);
  ~MapOutputBuffer();  // removes run files not yet merged

  // REQUIRES: 0 <= partition < partitions. May spill (IOError on disk trouble).
  Status Add(int partition, std::string_view key, std::string_view value);
  // Add(options.partition(key), key, value), calling options.partition less
  // often (see there). Internal when it returns a partition out of range.
  // REQUIRES: options.partition is set; a buffer with sum_counts that also
  // gets Add(partition, ...) gets the partition options.partition gives.
  Status Add(std::string_view key, std::string_view value);

  // The hot path of a counting job, inline in the caller. With sum_counts
  // and a one-digit count as `value`, does what Add(key, value) does, sets
  // *status to its result only when that is not a plain increment (a new
  // key), and returns true. Otherwise returns false having changed nothing:
  // call Add(key, value). (Through Add alone, each word of WordCount cost
  // 0.32 s instead of 0.28 s per 64 MiB: docs/benchmarks.md.)
  // `readable_end`: where the memory holding `key` ends, when the caller
  // knows (CountTable::Increment reads up to 8 bytes from key.data() then);
  // nullptr: at the key's end. REQUIRES: key.data() + key.size() <=
  // readable_end.
  // `repeat`: the record `repeat` times over (Emitter::EmitRepeated), one
  // lookup for all of them. REQUIRES: repeat >= 1.
  bool TryCount(std::string_view key, std::string_view value, Status* status,
                const char* readable_end = nullptr, int64_t repeat = 1) {
    if (table_ == nullptr || value.size() != 1 || value[0] < '0' || value[0] > '9') return false;
    // Counts add modulo 2^64, as the combiner's sums wrap (jobs::SumCounts).
    const int64_t n = static_cast<int64_t>(static_cast<uint64_t>(value[0] - '0') *
                                           static_cast<uint64_t>(repeat));
    if (readable_end == nullptr) readable_end = key.data() + key.size();
    uint64_t hash;
    if (!table_->Increment(CountTable::kAnyPartition, key, readable_end, n, &hash)) {
      return CountNewKey(key, value, n, repeat, hash, status);
    }
    counted_records_ += repeat;
    counted_bytes_ += repeat * (static_cast<int64_t>(key.size()) + 1);
    return true;
  }

  // Merges everything into `output_path` (written to a temporary name and
  // renamed) and returns its index. The buffer cannot be used afterwards.
  Result<MapOutputIndex> Finish(const std::string& output_path);

  // Progress for the scheduler (Shen Eq. 3 extrapolates from it): an
  // estimate of each partition's output so far, in key + value bytes. A
  // buffered record counts when added (before the combiner); with
  // sum_counts a key counts once each time it enters the count table (what
  // the combiner will emit for it), not at every increment, so the hot path
  // pays nothing. Finish's SegmentInfo::raw_bytes is the exact figure.
  const std::vector<int64_t>& partition_bytes_so_far() const;

 private:
  struct Impl;
  explicit MapOutputBuffer(std::unique_ptr<Impl> impl);
  // After every call into impl_: TryCount's table, or nullptr while the
  // buffer does not count (no sum_counts, counting stopped, failed, finished).
  void SyncTable();
  // TryCount's key that the table does not hold (out of line).
  bool CountNewKey(std::string_view key, std::string_view value, int64_t n, int64_t repeat,
                   uint64_t hash, Status* status);
  std::unique_ptr<Impl> impl_;
  CountTable* table_ = nullptr;
  int64_t counted_records_ = 0;  // TryCount's records and their bytes, for Finish's stats
  int64_t counted_bytes_ = 0;
};

// Reads the records of one segment (a zstd frame of records) from memory or
// from a file range, decompressing as it goes. Corruption on a malformed frame.
class SegmentReader {
 public:
  // Over bytes held in memory (e.g. fetched from a mapper); `bytes` must
  // outlive the reader.
  static std::unique_ptr<SegmentReader> FromMemory(std::string_view bytes);
  // Over [offset, offset + length) of a local file.
  static Result<std::unique_ptr<SegmentReader>> FromFile(const std::string& path, int64_t offset,
                                                         int64_t length);
  virtual ~SegmentReader() = default;
  // The next record (views valid until the next call), false at the end.
  virtual Result<bool> Next(std::string_view* key, std::string_view* value) = 0;
};

// Merges sorted segment readers into one stream of keys in bytewise order,
// each key with all its values from every input (what Reduce needs).
class MergingReader {
 public:
  explicit MergingReader(std::vector<std::unique_ptr<SegmentReader>> inputs);
  ~MergingReader();
  // Advances to the next distinct key; false at the end.
  Result<bool> NextKey(std::string_view* key);
  // The next value of the current key; false when the key's values are done.
  // Errors are returned by the following NextKey().
  bool NextValue(std::string_view* value);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

// Writes one segment (records in key order, as one zstd frame) to a file
// descriptor at its current end, streaming: memory stays small however many
// records are added. Used by MapOutputBuffer and by tests.
class SegmentWriter {
 public:
  // `fd` is open for appending (O_APPEND or positioned at the end);
  // `offset` is its current size, recorded in the returned SegmentInfo.
  SegmentWriter(int fd, int64_t offset, int zstd_level = 1);
  ~SegmentWriter();
  Status Add(std::string_view key, std::string_view value);
  // Ends the frame; the SegmentInfo gives where it is and its sizes.
  Result<SegmentInfo> Finish();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace mr::worker

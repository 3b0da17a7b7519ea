#include "worker/task_runner.h"

#include <cstdio>
#include <exception>
#include <fstream>
#include <utility>

#include "jobs/word_split.h"

namespace mr::worker {
namespace {

using jobs::Job;

// Text output of WriteOutput, handed on in chunks of about kWriteChunkBytes.
// After the first error from `write` it drops everything and keeps the error.
class ChunkedOutput : public jobs::Emitter {
 public:
  ChunkedOutput(const Job& job, std::function<Status(std::string_view)> write)
      : job_(job), write_(std::move(write)) {}

  void Emit(std::string_view key, std::string_view value) override {
    ++records_;
    if (!status_.ok()) return;
    job_.WriteOutput(key, value, &buf_);
    if (static_cast<int64_t>(buf_.size()) >= kWriteChunkBytes) Flush();
  }

  // Hands on what is buffered; the first error so far.
  Status Flush() {
    if (status_.ok() && !buf_.empty()) {
      status_ = write_(buf_);
      bytes_ += static_cast<int64_t>(buf_.size());
    }
    buf_.clear();
    return status_;
  }

  const Status& status() const { return status_; }
  int64_t records() const { return records_; }
  int64_t bytes() const { return bytes_; }

 private:
  const Job& job_;
  std::function<Status(std::string_view)> write_;
  std::string buf_;
  Status status_;
  int64_t records_ = 0;
  int64_t bytes_ = 0;
};

// Map output for reducers >= 1: Add()s each pair to the buffer, which
// partitions it (with Job::Partition, options.partition) and counts it.
class PartitionedOutput final : public jobs::Emitter {
 public:
  explicit PartitionedOutput(MapOutputBuffer* buffer) : buffer_(buffer) {}

  void Emit(std::string_view key, std::string_view value) override {
    if (!status_.ok() || buffer_->TryCount(key, value, &status_)) return;
    Status s = buffer_->Add(key, value);  // copies key and value
    if (!s.ok()) status_ = std::move(s);
  }

  // One count-table lookup for all n pairs when the buffer counts.
  void EmitRepeated(std::string_view key, std::string_view value, int64_t n) override {
    if (n <= 0 || !status_.ok()) return;
    if (buffer_->TryCount(key, value, &status_, /*readable_end=*/nullptr, n)) return;
    for (int64_t i = 0; i < n && status_.ok(); ++i) Emit(key, value);
  }

  // The first error of Add.
  const Status& status() const { return status_; }

 private:
  MapOutputBuffer* buffer_;
  Status status_;
};

// Counts raw bytes on the way to a ChunkedOutput (map-only tasks).
class CountingOutput : public jobs::Emitter {
 public:
  explicit CountingOutput(ChunkedOutput* out) : out_(out) {}
  void Emit(std::string_view key, std::string_view value) override {
    raw_bytes_ += static_cast<int64_t>(key.size() + value.size());
    out_->Emit(key, value);
  }
  int64_t raw_bytes() const { return raw_bytes_; }

 private:
  ChunkedOutput* out_;
  int64_t raw_bytes_ = 0;
};

// ValueStream / NextValueFn over a function; counts the values taken into
// *taken when given one.
class FnValues : public jobs::ValueStream {
 public:
  explicit FnValues(const NextValueFn& next, int64_t* taken = nullptr) : next_(next), taken_(taken) {}
  bool Next(std::string_view* value) override {
    const bool more = next_(value);
    if (more && taken_ != nullptr) ++*taken_;
    return more;
  }

 private:
  const NextValueFn& next_;
  int64_t* taken_;
};

// Emitter over a function, counting the pairs into *emitted.
class FnEmitter : public jobs::Emitter {
 public:
  FnEmitter(const EmitFn& emit, int64_t* emitted) : emit_(emit), emitted_(emitted) {}
  void Emit(std::string_view key, std::string_view value) override {
    ++*emitted_;
    emit_(key, value);
  }

 private:
  const EmitFn& emit_;
  int64_t* emitted_;
};

// Counts what a reduce task reads from one segment.
class CountingReader : public SegmentReader {
 public:
  CountingReader(std::unique_ptr<SegmentReader> in, ReduceTaskResult* counts)
      : in_(std::move(in)), counts_(counts) {}
  Result<bool> Next(std::string_view* key, std::string_view* value) override {
    Result<bool> more = in_->Next(key, value);
    if (more.ok() && *more) {
      ++counts_->input_records;
      counts_->input_raw_bytes += static_cast<int64_t>(key->size() + value->size());
    }
    return more;
  }

 private:
  std::unique_ptr<SegmentReader> in_;
  ReduceTaskResult* counts_;
};

// A LineReader over the map task's split.
jobs::LineReader SplitReader(const MapTaskSpec& spec, const jobs::LineReader::ReadFn& read,
                             int lookahead) {
  jobs::LineReader reader(read, spec.file_length, spec.split_offset,
                          spec.split_offset + spec.split_length, lookahead);
  if (spec.byte_before >= 0) reader.set_byte_before(static_cast<char>(spec.byte_before));
  return reader;
}

// Steps 1-2 of a map task: Map over the split's lines (and lookahead), or
// MapLines over blocks of them when the job allows (jobs::MapKind), then
// FinishMap, counting the split's lines into *result.
Status MapSplit(const MapTaskSpec& spec, const jobs::LineReader::ReadFn& read, Job& job,
                jobs::Emitter& out, MapTaskResult* result) {
  const bool blocks = job.map_kind() != jobs::MapKind::kLines && job.lookahead_lines() == 0;
  jobs::LineReader reader = SplitReader(spec, read, job.lookahead_lines());
  std::string_view text;
  jobs::LineInfo info;
  info.file = spec.file;
  info.in_split = true;
  int64_t lines = 1;
  for (;;) {
    bool more;
    if (blocks) {
      MR_ASSIGN_OR_RETURN(more, reader.NextLines(&text, &info.offset, &lines));
    } else {
      MR_ASSIGN_OR_RETURN(more, reader.Next(&text, &info.offset, &info.in_split));
    }
    if (!more) break;
    if (info.in_split) {
      result->records_in += lines;
      result->input_bytes += reader.next_offset() - info.offset;  // with terminators
    }
    blocks ? job.MapLines(text, info, out) : job.Map(text, info, out);
  }
  job.FinishMap(out);
  return Status::OK();
}

// MapSplit for a kCountWords job whose output `buffer` counts (sum_counts):
// the words of a block of lines, counted straight into the buffer, are the
// pairs Map would emit line by line, in the same order, without a call per
// line or per word (jobs::MapKind).
Status CountWordsOfSplit(const MapTaskSpec& spec, const jobs::LineReader::ReadFn& read,
                         MapOutputBuffer& buffer, MapTaskResult* result) {
  jobs::LineReader reader = SplitReader(spec, read, /*lookahead=*/0);
  std::string_view text;
  int64_t offset, lines;
  Status status;
  for (;;) {
    MR_ASSIGN_OR_RETURN(bool more, reader.NextLines(&text, &offset, &lines));
    if (!more) break;
    result->records_in += lines;
    result->input_bytes += reader.next_offset() - offset;
    const char* text_end = text.data() + text.size();
    jobs::ForEachWord(text, [&](std::string_view word) {
      if (status.ok() && !buffer.TryCount(word, "1", &status, text_end)) {
        status = buffer.Add(word, "1");
      }
    });
    MR_RETURN_IF_ERROR(status);
  }
  return Status::OK();
}

std::string JoinPath(const std::string& dir, const char* name) {
  return dir.empty() || dir.back() == '/' ? dir + name : dir + "/" + name;
}

// reducers == 0: Map's output through WriteOutput into work_dir/map-output.txt.
Status RunMapOnly(const MapTaskSpec& spec, const jobs::LineReader::ReadFn& read, Job& job,
                  MapTaskResult* result) {
  result->output_path = JoinPath(spec.work_dir, "map-output.txt");
  const std::string tmp = result->output_path + ".tmp";
  std::ofstream file(tmp, std::ios::binary | std::ios::trunc);
  if (!file) return Status::IOError("cannot create '" + tmp + "'");
  ChunkedOutput text(job, [&](std::string_view chunk) {
    file.write(chunk.data(), static_cast<std::streamsize>(chunk.size()));
    return file ? Status::OK() : Status::IOError("cannot write '" + tmp + "'");
  });
  CountingOutput out(&text);
  Status s = MapSplit(spec, read, job, out, result);
  if (s.ok()) s = text.Flush();
  if (s.ok()) {
    file.close();
    if (!file) s = Status::IOError("cannot write '" + tmp + "'");
  }
  if (s.ok() && std::rename(tmp.c_str(), result->output_path.c_str()) != 0) {
    s = Status::IOError("cannot rename '" + tmp + "'");
  }
  if (!s.ok()) {
    std::remove(tmp.c_str());
    return s;
  }
  result->raw_output_bytes = out.raw_bytes();
  result->records_out = text.records();
  return Status::OK();
}

Result<MapTaskResult> MapTask(const MapTaskSpec& spec, const jobs::LineReader::ReadFn& read) {
  if (spec.reducers < 0) return Status::InvalidArgument("reducers must be >= 0");
  if (spec.split_offset < 0 || spec.split_length < 0) {
    return Status::InvalidArgument("split offset and length must be >= 0");
  }
  if (spec.work_dir.empty()) return Status::InvalidArgument("work_dir is required");
  MR_ASSIGN_OR_RETURN(std::unique_ptr<Job> job, jobs::MakeJob(spec.job, spec.params, spec.env));
  MapTaskResult result;
  if (spec.reducers == 0) {
    MR_RETURN_IF_ERROR(RunMapOnly(spec, read, *job, &result));
    return result;
  }

  MapOutputOptions options;
  options.partitions = spec.reducers;
  options.sort_buffer_bytes = spec.sort_buffer_bytes;
  options.zstd_level = spec.map_output_zstd_level;
  options.spill_dir = spec.work_dir;
  options.partition = [&job, reducers = spec.reducers](std::string_view key) {
    return job->Partition(key, reducers);
  };
  if (job->has_combiner()) {
    options.combiner = [&job, &result](std::string_view key, const NextValueFn& next, const EmitFn& emit) {
      FnValues values(next, &result.combine_records_in);
      FnEmitter out(emit, &result.combine_records_out);
      job->Combine(key, values, out);
    };
    options.sum_counts =
        spec.aggregate_counts && job->combiner_kind() == jobs::CombinerKind::kSumCounts;
  }
  MR_ASSIGN_OR_RETURN(std::unique_ptr<MapOutputBuffer> buffer, MapOutputBuffer::Create(options));
  PartitionedOutput out(buffer.get());
  jobs::LineReader::ReadFn read_reporting = read;
  if (spec.progress) {
    read_reporting = [&](int64_t offset, int64_t n, std::string* chunk) {
      spec.progress(buffer->partition_bytes_so_far());
      return read(offset, n, chunk);
    };
  }
  if (options.sum_counts && job->map_kind() == jobs::MapKind::kCountWords &&
      job->lookahead_lines() == 0) {
    MR_RETURN_IF_ERROR(CountWordsOfSplit(spec, read_reporting, *buffer, &result));
  } else {
    MR_RETURN_IF_ERROR(MapSplit(spec, read_reporting, *job, out, &result));
    MR_RETURN_IF_ERROR(out.status());
  }
  if (spec.map_done) spec.map_done();
  result.output_path = JoinPath(spec.work_dir, "map-output");
  MR_ASSIGN_OR_RETURN(result.index, buffer->Finish(result.output_path));
  result.raw_output_bytes = result.index.raw_bytes_in;  // every pair, before the combiner
  result.records_out = result.index.records_in;
  result.combine_records_in += result.index.table_records_in;
  result.combine_records_out += result.index.table_records_out;
  result.spilled_records = result.index.spilled_records;
  return result;
}

Result<ReduceTaskResult> ReduceTask(const ReduceTaskSpec& spec,
                                    std::vector<std::unique_ptr<SegmentReader>> inputs,
                                    const std::function<Status(std::string_view)>& write) {
  if (spec.reducers < 1 || spec.index < 0 || spec.index >= spec.reducers) {
    return Status::InvalidArgument("reduce index " + std::to_string(spec.index) + " of " +
                                   std::to_string(spec.reducers) + " reducers");
  }
  MR_ASSIGN_OR_RETURN(std::unique_ptr<Job> job, jobs::MakeJob(spec.job, spec.params, spec.env));
  ReduceTaskResult result;
  for (auto& in : inputs) in = std::make_unique<CountingReader>(std::move(in), &result);
  MergingReader merger(std::move(inputs));
  const NextValueFn next = [&merger](std::string_view* v) { return merger.NextValue(v); };
  FnValues values(next);
  ChunkedOutput out(*job, write);
  for (;;) {
    std::string_view key;
    MR_ASSIGN_OR_RETURN(bool more, merger.NextKey(&key));
    if (!more) break;
    ++result.input_groups;
    job->Reduce(key, values, out);
    MR_RETURN_IF_ERROR(out.status());
  }
  job->FinishReduce(out);
  MR_RETURN_IF_ERROR(out.Flush());
  result.output_records = out.records();
  result.output_bytes = out.bytes();
  return result;
}

}  // namespace

Result<MapTaskResult> RunMapTask(const MapTaskSpec& spec, const jobs::LineReader::ReadFn& read) {
  try {
    return MapTask(spec, read);
  } catch (const std::exception& e) {
    std::remove(JoinPath(spec.work_dir, "map-output.txt.tmp").c_str());  // map-only's partial file
    return Status::Internal("map task of job '" + spec.job + "': " + e.what());
  }
}

Result<ReduceTaskResult> RunReduceTask(const ReduceTaskSpec& spec,
                                       std::vector<std::unique_ptr<SegmentReader>> inputs,
                                       const std::function<Status(std::string_view)>& write) {
  try {
    return ReduceTask(spec, std::move(inputs), write);
  } catch (const std::exception& e) {
    return Status::Internal("reduce task of job '" + spec.job + "': " + e.what());
  }
}

}  // namespace mr::worker

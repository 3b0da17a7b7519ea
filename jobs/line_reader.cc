#include "jobs/line_reader.h"

#include <algorithm>
#include <utility>

namespace mr::jobs {

LineReader::LineReader(ReadFn read, int64_t file_length, int64_t start, int64_t end, int lookahead,
                       int64_t buffer_bytes)
    : read_(std::move(read)),
      file_length_(file_length),
      start_(start),
      end_(end),
      buffer_bytes_(buffer_bytes),
      lookahead_left_(lookahead) {}

Result<bool> LineReader::Next(std::string_view* line, int64_t* offset, bool* in_split) {
  if (done_) return false;
  if (!started_) {
    started_ = true;
    if (start_ > 0) {
      // The line holding byte start-1 belongs to the previous split (it
      // started there); ours begin after its '\n'.
      MR_ASSIGN_OR_RETURN(int64_t newline, FindNewline(start_ - 1));
      next_line_ = newline + 1;
    }
  }
  if (next_line_ >= file_length_) {
    done_ = true;
    return false;
  }
  const bool inside = next_line_ < end_;
  if (!inside) {
    if (lookahead_left_ == 0) {
      done_ = true;
      return false;
    }
    --lookahead_left_;
  }
  MR_ASSIGN_OR_RETURN(int64_t newline, FindNewline(next_line_));
  *line = std::string_view(buf_).substr(next_line_ - buf_start_, newline - next_line_);
  *offset = next_line_;
  *in_split = inside;
  next_line_ = newline + 1;
  return true;
}

Result<int64_t> LineReader::FindNewline(int64_t from) {
  const int64_t buf_end = buf_start_ + static_cast<int64_t>(buf_.size());
  if (from >= buf_end) {  // nothing buffered is needed any more
    buf_.clear();
    buf_start_ = from;
  }
  size_t scanned = from - buf_start_;
  for (;;) {
    size_t pos = buf_.find('\n', scanned);
    if (pos != std::string::npos) return buf_start_ + static_cast<int64_t>(pos);
    const int64_t next = buf_start_ + static_cast<int64_t>(buf_.size());
    if (next >= file_length_) return file_length_;
    // Keep only the bytes from `from` on, then append one chunk.
    buf_.erase(0, from - buf_start_);
    buf_start_ = from;
    scanned = buf_.size();
    // Inside the split, read up to its end (one block, never a little of
    // the next); past it, in small steps: only the last line's tail (and
    // lookahead lines) is wanted there, and it may come over the network.
    int64_t n = std::min(buffer_bytes_, file_length_ - next);
    n = next < end_ ? std::min(n, end_ - next) : std::min(n, kPastEndStepBytes);
    chunk_.clear();
    MR_RETURN_IF_ERROR(read_(next, n, &chunk_));
    if (static_cast<int64_t>(chunk_.size()) != n) {
      return Status::IOError("short read: " + std::to_string(chunk_.size()) + " of " +
                             std::to_string(n) + " bytes at offset " + std::to_string(next));
    }
    buf_.append(chunk_);
  }
}

}  // namespace mr::jobs

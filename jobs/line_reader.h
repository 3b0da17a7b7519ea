// LineReader: the lines of one split of a file, by Hadoop's LineRecordReader
// rules (jobs/job.h, "Lines"). Used by map tasks and by mr-local.
//
// A line starts at offset o when o < file_length and (o == 0 or byte o-1 is
// '\n'); it runs up to the next '\n' (not included) or the end of the file.
// So "a\nb" has lines "a" and "b", "a\n" has one line, "\n\n" two empty
// lines and "" none. Bytes are bytes: a '\r' before '\n' stays at the end of
// the line (CRLF files keep their '\r's), and NUL or invalid UTF-8 are fine.
//
// The split [start, end) owns the lines that start in it. Every line of the
// file therefore belongs to exactly one split of any partition of
// [0, file_length) into splits. A split that does not start the file skips
// the bytes before its first line (it looks at byte start-1 to know whether
// a line starts exactly at `start`), and the last line is read past `end` to
// its finish. After the split's lines, up to `lookahead` further lines are
// returned with in_split == false (Permu's context).
//
// Reads go through `read` in chunks of buffer_bytes (plus more for lines
// longer than that): memory is one chunk plus the longest line.
//
// Thread-compatible.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

#include "common/status.h"

namespace mr::jobs {

class LineReader {
 public:
  // Sets *out to the n bytes of the file at `offset`. REQUIRES of the
  // caller (LineReader): offset + n <= file_length, so anything other than
  // exactly n bytes is an error.
  using ReadFn = std::function<Status(int64_t offset, int64_t n, std::string* out)>;

  static constexpr int64_t kDefaultBufferBytes = 1 << 20;
  // Bytes read at a time past the split's end (a DFS checksum chunk).
  static constexpr int64_t kPastEndStepBytes = 64 << 10;

  // REQUIRES: 0 <= start <= end, lookahead >= 0, buffer_bytes >= 1.
  // `end` may exceed file_length (the split is then cut at the file's end).
  LineReader(ReadFn read, int64_t file_length, int64_t start, int64_t end, int lookahead,
             int64_t buffer_bytes = kDefaultBufferBytes);

  // The next line: true with *line (valid until the next call), the offset
  // of its first byte, and whether it starts inside the split (false for
  // lookahead lines). False after the last one, and on every call after
  // that. IOError when `read` fails or returns the wrong number of bytes.
  Result<bool> Next(std::string_view* line, int64_t* offset, bool* in_split);

 private:
  // The offset of the first '\n' at or after `from`, or file_length_ when
  // there is none, with bytes [from, that offset) in buf_.
  // REQUIRES: from >= buf_start_.
  Result<int64_t> FindNewline(int64_t from);

  ReadFn read_;
  const int64_t file_length_;
  const int64_t start_;
  const int64_t end_;
  const int64_t buffer_bytes_;
  int lookahead_left_;

  bool started_ = false;
  bool done_ = false;
  int64_t next_line_ = 0;  // offset of the next line to return
  std::string buf_;        // file bytes [buf_start_, buf_start_ + buf_.size())
  int64_t buf_start_ = 0;
  std::string chunk_;  // scratch for read_
};

}  // namespace mr::jobs

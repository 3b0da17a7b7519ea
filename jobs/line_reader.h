// LineReader: the lines of one split of a file, by Hadoop's LineRecordReader
// rules (jobs/job.h, "Lines"). Used by map tasks and by mr-local.
//
// Lines end as Hadoop's LineReader.readDefaultLine ends them: at '\n', at
// "\r\n" and at a lone '\r' (one not followed by '\n'); the terminator is
// not part of the line. A line starts at offset 0 and right after each
// terminator, unless that is the end of the file. So "a\nb" has lines "a"
// and "b", "a\r\n" has one line "a", "a\rb" two, "\n\n" two empty lines,
// "a\r\r\n" "a" and "", and "" none. Every other byte (NUL, invalid UTF-8,
// '\r' only as said) is part of the line.
//
// The split [start, end) owns the lines that start in it. Every line of the
// file therefore belongs to exactly one split of any partition of
// [0, file_length) into splits. (Hadoop gives a line that starts exactly at
// a split boundary to the split before it; the set of lines read is the
// same.) A split that does not start the file skips the bytes before its
// first line: it reads forward from byte start-1 to the first terminator,
// but never past `end`, so a split inside a long line reads its own bytes
// (and one more) and owns nothing. A "\r\n" cut by the boundary ends one
// line, whose successor starts after the '\n'. The split's last line is read
// past `end` to its finish. After the split's lines, up to `lookahead`
// further lines are returned with in_split == false (Permu's context); a
// split that owns no line returns none.
//
// When the caller knows the byte at start-1 (the DFS records every block's
// byte before it: BlockRef.byte_before), set_byte_before() saves the read
// of it: the skip then starts at `start` and nothing before `start` is read.
// The lines returned are the same.
//
// Reads go through `read`: inside the split in chunks of buffer_bytes (never
// across `end`), past it in steps growing from kPastEndStepBytes (4 KiB) by
// doubling to buffer_bytes, each byte once. Over all the splits of a file
// the bytes read are at most about twice the file, however long its lines.
// Memory is one chunk plus the longest line.
//
// The bytes past `end` are the next block's, often on another worker and
// sometimes in another datacenter, and usually only the last line's tail is
// wanted: with lines of ~100 bytes one 4 KiB read finishes it (with Permu's
// lookahead too). A map's ReadFn passes each read to DfsClient::ReadBlock,
// which asks the worker for exactly those bytes (dn.ReadBlock serves any
// offset and length, docs/wire-format.md), so 4 KiB asked is 4 KiB plus
// framing on the socket, not a 64 KiB checksum chunk.
//
// A file of unknown length (a compressed file's decompressed bytes,
// jobs/decompressed_input.h) is read as one split: file_length and end are
// kUnknownLength, start is 0, and `read` may return fewer bytes than asked
// only at the end of the file, which the reader takes as its length.
//
// Thread-compatible.
#pragma once

#include <cstdint>
#include <limits>
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
  // file_length (and end) of a file whose length is found at its end.
  static constexpr int64_t kUnknownLength = std::numeric_limits<int64_t>::max();
  // The first read past the split's end: a few lines of ordinary text (a
  // map reads the rest of its last line from the next block, perhaps across
  // datacenters). Each further one doubles, up to buffer_bytes.
  static constexpr int64_t kPastEndStepBytes = 4 << 10;

  // REQUIRES: 0 <= start <= end, lookahead >= 0, buffer_bytes >= 1; start
  // == 0 when file_length is kUnknownLength.
  // `end` may exceed file_length (the split is then cut at the file's end).
  LineReader(ReadFn read, int64_t file_length, int64_t start, int64_t end, int lookahead,
             int64_t buffer_bytes = kDefaultBufferBytes);

  // The byte at start-1, when known. REQUIRES: before the first Next().
  void set_byte_before(char byte) {
    byte_before_ = byte;
    has_byte_before_ = true;
  }

  // The next line: true with *line (valid until the next call), the offset
  // of its first byte, and whether it starts inside the split (false for
  // lookahead lines). False after the last one, and on every call after
  // that. IOError when `read` fails or returns the wrong number of bytes
  // (more than asked, or fewer when the length is known); `read`'s own
  // error as it is.
  Result<bool> Next(std::string_view* line, int64_t* offset, bool* in_split);

  // Next for a map that needs words, not lines (jobs::MapKind): the next
  // *lines >= 1 lines of the split at once, as one view *text (valid until
  // the next call) from *offset, each line with its terminator (the file's
  // last line may have none). The same lines as calls of Next would give, in
  // as few calls as the buffer allows: Next's line, then every buffered line
  // that starts in the split, up to the last '\n' buffered. False after the
  // split's last line. REQUIRES: lookahead == 0; not mixed with Next.
  Result<bool> NextLines(std::string_view* text, int64_t* offset, int64_t* lines);

  // Where the line after the one Next last returned starts: that line's
  // offset plus its length and terminator (file_length when it had none).
  // Map tasks count a line's input bytes as next_offset() - offset (after
  // NextLines: the lines' bytes).
  int64_t next_offset() const { return next_line_; }

 private:
  // Sets next_line_ where the split's first line starts (start_ > 0).
  Status SkipPartialLine();
  // Scans bytes [from, limit) for the first terminator: *content_end is
  // where it starts (limit if there is none) and *next where the line after
  // it starts (limit if none; a '\r' at limit-1 is taken as a whole
  // terminator without looking at byte limit). Keeps bytes from `from` on
  // in buf_ when keep_line, else only what it has not scanned yet.
  // REQUIRES: from <= limit <= file_length_.
  Status FindLineEnd(int64_t from, int64_t limit, bool keep_line, int64_t* content_end,
                     int64_t* next);
  // Drops buffered bytes before keep_from and appends the next chunk.
  // REQUIRES: buf_start_ <= keep_from <= buffered end < file_length_.
  Status Extend(int64_t keep_from);
  // Where NextByte last found its byte (its `from` never decreases): byte
  // `at` is the first one at or after the last `from` when found; otherwise
  // there is none in [last from, at).
  struct Found {
    int64_t at = 0;
    bool found = false;
  };
  // The first `byte` at or after `from` among the buffered bytes, or the
  // buffered end when there is none. Remembers what it found, so a file
  // without '\r's (or '\n's) is searched for one once per buffer, not
  // once per line. REQUIRES: from >= buf_start_.
  int64_t NextByte(char byte, Found* last, int64_t from) const {
    if (last->found ? last->at >= from : last->at >= buf_end()) return last->at;  // remembered
    return SearchByte(byte, last, from);
  }
  // NextByte when it must look: memchr over the buffered bytes not yet seen.
  int64_t SearchByte(char byte, Found* last, int64_t from) const;
  int64_t buf_end() const { return buf_start_ + static_cast<int64_t>(buf_.size()); }

  ReadFn read_;
  int64_t file_length_;  // kUnknownLength until a short read finds the end
  const bool length_unknown_;
  const int64_t start_;
  const int64_t end_;  // min(end, file_length)
  const int64_t buffer_bytes_;
  int lookahead_left_;

  bool started_ = false;
  bool done_ = false;
  bool owns_a_line_ = false;  // a line in the split was returned
  bool has_byte_before_ = false;
  char byte_before_ = 0;      // the byte at start-1, when has_byte_before_
  int64_t next_line_ = 0;     // offset of the next line to return
  std::string buf_;           // file bytes [buf_start_, buf_end())
  int64_t buf_start_ = 0;
  int64_t past_end_step_ = kPastEndStepBytes;
  Found lf_;           // NextByte's memory for '\n'
  Found cr_;           // and for '\r'
  std::string chunk_;  // scratch for read_
};

}  // namespace mr::jobs

#include "jobs/line_reader.h"

#include <algorithm>
#include <cstring>
#include <utility>

#if defined(__SSE2__)
#include <emmintrin.h>
#endif

namespace mr::jobs {

LineReader::LineReader(ReadFn read, int64_t file_length, int64_t start, int64_t end, int lookahead,
                       int64_t buffer_bytes)
    : read_(std::move(read)),
      file_length_(file_length),
      length_unknown_(file_length == kUnknownLength),
      start_(start),
      end_(std::min(end, file_length)),
      buffer_bytes_(buffer_bytes),
      lookahead_left_(lookahead) {}

Result<bool> LineReader::Next(std::string_view* line, int64_t* offset, bool* in_split) {
  if (done_) return false;
  if (!started_) {
    started_ = true;
    next_line_ = start_;
    if (start_ >= end_) {  // an empty split, or one past the file's end
      done_ = true;
      return false;
    }
    if (start_ > 0) {
      // The line holding byte start-1 belongs to an earlier split; ours
      // begin after the first terminator from there on. None before `end`
      // (next_line_ >= end_) means the split owns no line: stop there.
      MR_RETURN_IF_ERROR(SkipPartialLine());
    }
  }
  if (next_line_ >= file_length_) {
    done_ = true;
    return false;
  }
  const bool inside = next_line_ < end_;
  if (!inside) {
    if (!owns_a_line_ || lookahead_left_ == 0) {
      done_ = true;
      return false;
    }
    --lookahead_left_;
  }
  int64_t content_end, next;
  MR_RETURN_IF_ERROR(
      FindLineEnd(next_line_, file_length_, /*keep_line=*/true, &content_end, &next));
  if (next_line_ >= file_length_) {  // a file of unknown length ended before this line
    done_ = true;
    return false;
  }
  *line = std::string_view(buf_).substr(next_line_ - buf_start_, content_end - next_line_);
  *offset = next_line_;
  *in_split = inside;
  owns_a_line_ = owns_a_line_ || inside;
  next_line_ = next;
  return true;
}

namespace {

// How many bytes of [p, p + n) equal `byte`. With SSE2, 16 at a time: each
// compare's 0xff bytes are subtracted (+1) from byte counters, which are
// summed (psadbw) before any can pass 255.
int64_t CountByte(const char* p, size_t n, char byte) {
  int64_t count = 0;
  size_t i = 0;
#if defined(__SSE2__)
  const __m128i b = _mm_set1_epi8(byte);
  while (i + 16 <= n) {
    __m128i counters = _mm_setzero_si128();
    for (int k = 0; k < 255 && i + 16 <= n; ++k, i += 16) {
      const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p + i));
      counters = _mm_sub_epi8(counters, _mm_cmpeq_epi8(v, b));
    }
    const __m128i sums = _mm_sad_epu8(counters, _mm_setzero_si128());
    count += _mm_cvtsi128_si32(sums) + _mm_extract_epi16(sums, 4);
  }
#endif
  for (; i < n; ++i) count += p[i] == byte;
  return count;
}

}  // namespace

Result<bool> LineReader::NextLines(std::string_view* text, int64_t* offset, int64_t* lines) {
  std::string_view line;
  bool in_split;
  MR_ASSIGN_OR_RETURN(bool more, Next(&line, offset, &in_split));
  if (!more) return false;
  *lines = 1;
  // The first line's bytes, terminator included, are buffered (FindLineEnd
  // looked at them). So are the lines after it up to the last '\n' buffered
  // before end_: each starts in the split and ends in that buffer. Their
  // terminators are the '\n's and the lone '\r's (a '\r' before the last
  // '\n' has its next byte buffered).
  const int64_t limit = std::min(buf_end(), end_);
  if (next_line_ < limit) {
    const char* from = buf_.data() + (next_line_ - buf_start_);
    const void* last = ::memrchr(from, '\n', static_cast<size_t>(limit - next_line_));
    if (last != nullptr) {
      const char* stop = static_cast<const char*>(last) + 1;
      *lines += CountByte(from, static_cast<size_t>(stop - from), '\n');
      for (const char* cr = from; (cr = static_cast<const char*>(
                                       std::memchr(cr, '\r', static_cast<size_t>(stop - cr)))) != nullptr;
           ++cr) {
        if (cr[1] != '\n') ++*lines;
      }
      next_line_ += stop - from;
    }
  }
  *text = std::string_view(buf_).substr(*offset - buf_start_, next_line_ - *offset);
  return true;
}

// The first step of a split after the file's start: sets next_line_ past
// the first terminator at or after byte start-1 (capped at end_). Knowing
// that byte, it reads from `start` on only: '\n' ends a line at start-1; a
// '\r' does too, with the '\n' at `start` if there is one; any other byte
// means the terminator is still ahead, which a scan from `start` finds.
Status LineReader::SkipPartialLine() {
  int64_t content_end;
  if (!has_byte_before_) {
    return FindLineEnd(start_ - 1, end_, /*keep_line=*/false, &content_end, &next_line_);
  }
  if (byte_before_ == '\n') {
    next_line_ = start_;
    return Status::OK();
  }
  if (byte_before_ != '\r') {
    return FindLineEnd(start_, end_, /*keep_line=*/false, &content_end, &next_line_);
  }
  buf_.clear();
  buf_start_ = start_;
  MR_RETURN_IF_ERROR(Extend(start_));  // start_ < end_ <= file_length_: at least one byte
  next_line_ = buf_[0] == '\n' ? start_ + 1 : start_;
  return Status::OK();
}

Status LineReader::FindLineEnd(int64_t from, int64_t limit, bool keep_line, int64_t* content_end,
                               int64_t* next) {
  if (from >= buf_end()) {  // nothing buffered is needed any more
    buf_.clear();
    buf_start_ = from;
  }
  int64_t pos = from;  // no terminator in [from, pos)
  for (;;) {
    limit = std::min(limit, file_length_);  // an unknown length may have been found
    const int64_t have = std::min(buf_end(), limit);
    if (pos < have) {
      const int64_t lf = std::min(NextByte('\n', &lf_, pos), have);
      const int64_t p = NextByte('\r', &cr_, pos);
      if (p < lf) {
        *content_end = p;
        if (p + 1 >= limit) {  // the file's last byte, or the skip's limit
          *next = limit;
          return Status::OK();
        }
        if (p + 1 < buf_end()) {
          *next = buf_[p + 1 - buf_start_] == '\n' ? p + 2 : p + 1;
          return Status::OK();
        }
        pos = p;  // '\r' is the last byte buffered: read the next one first
      } else if (lf < have) {
        *content_end = lf;
        *next = lf + 1;
        return Status::OK();
      } else {
        pos = have;
      }
    }
    if (pos >= limit) {
      *content_end = *next = limit;
      return Status::OK();
    }
    MR_RETURN_IF_ERROR(Extend(keep_line ? from : pos));
  }
}

Status LineReader::Extend(int64_t keep_from) {
  const int64_t next = buf_end();
  buf_.erase(0, keep_from - buf_start_);
  buf_start_ = keep_from;
  // Inside the split, read up to its end (one block, never a little of the
  // next); past it, in steps that start small (usually only the last line's
  // tail is wanted, and it may come over the network) and double, so a
  // line many blocks long takes few reads.
  int64_t n;
  if (next < end_) {
    n = std::min(buffer_bytes_, end_ - next);
  } else {
    n = std::min(buffer_bytes_, past_end_step_);
    past_end_step_ = std::min(2 * past_end_step_, std::max(buffer_bytes_, kPastEndStepBytes));
  }
  n = std::min(n, file_length_ - next);
  chunk_.clear();
  MR_RETURN_IF_ERROR(read_(next, n, &chunk_));
  if (length_unknown_ && static_cast<int64_t>(chunk_.size()) < n) {
    file_length_ = next + static_cast<int64_t>(chunk_.size());  // the end
  } else if (static_cast<int64_t>(chunk_.size()) != n) {
    return Status::IOError("short read: " + std::to_string(chunk_.size()) + " of " +
                           std::to_string(n) + " bytes at offset " + std::to_string(next));
  }
  buf_.append(chunk_);
  return Status::OK();
}

int64_t LineReader::SearchByte(char byte, Found* last, int64_t from) const {
  const int64_t search = last->found ? from : std::max(from, last->at);
  const int64_t end = buf_end();
  if (search < end) {
    const void* p = std::memchr(buf_.data() + (search - buf_start_), byte, end - search);
    if (p != nullptr) {
      *last = {buf_start_ + (static_cast<const char*>(p) - buf_.data()), true};
      return last->at;
    }
  }
  *last = {std::max(search, end), false};
  return last->at;
}

}  // namespace mr::jobs

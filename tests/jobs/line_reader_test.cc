#include "jobs/line_reader.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <vector>

namespace mr::jobs {
namespace {

struct Line {
  std::string text;
  int64_t offset = 0;
  bool in_split = true;
  bool operator==(const Line&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Line& l) {
  return os << "{" << testing::PrintToString(l.text) << " @" << l.offset
            << (l.in_split ? "" : " lookahead") << "}";
}

// The lines of `data` by the definition in line_reader.h, computed the
// obvious way, byte by byte: '\n', "\r\n" and a lone '\r' end a line and
// are not part of it; a final terminator ends the last line.
std::vector<Line> ExpectedLines(const std::string& data) {
  std::vector<Line> lines;
  Line line;
  for (size_t i = 0; i < data.size(); ++i) {
    const char c = data[i];
    if (c != '\n' && c != '\r') {
      line.text.push_back(c);
      continue;
    }
    if (c == '\r' && i + 1 < data.size() && data[i + 1] == '\n') ++i;
    lines.push_back(line);
    line = {"", static_cast<int64_t>(i) + 1, true};
  }
  if (line.offset < static_cast<int64_t>(data.size())) lines.push_back(line);
  return lines;
}

// A ReadFn over `data` that also checks the reader's side of the contract.
LineReader::ReadFn ReadFrom(const std::string& data) {
  return [&data](int64_t offset, int64_t n, std::string* out) {
    EXPECT_GE(offset, 0);
    EXPECT_GE(n, 1);
    EXPECT_LE(offset + n, static_cast<int64_t>(data.size())) << "read past the end of the file";
    *out = data.substr(offset, n);
    return Status::OK();
  };
}

std::vector<Line> ReadSplit(const std::string& data, int64_t start, int64_t end, int lookahead,
                            int64_t buffer_bytes) {
  LineReader reader(ReadFrom(data), data.size(), start, end, lookahead, buffer_bytes);
  std::vector<Line> lines;
  std::string_view text;
  Line line;
  for (;;) {
    Result<bool> more = reader.Next(&text, &line.offset, &line.in_split);
    EXPECT_TRUE(more.ok()) << more.status().ToString();
    if (!more.ok() || !*more) break;
    line.text = std::string(text);
    lines.push_back(line);
  }
  // Once finished, a reader stays finished.
  Result<bool> again = reader.Next(&text, &line.offset, &line.in_split);
  EXPECT_TRUE(again.ok() && !*again);
  return lines;
}

// Inputs with every shape the rules care about: empty lines (also first and
// last), a final line with and without a terminator, "\r\n", lone '\r's
// (also last, and "\r\r\n", "\n\r"), long lines.
std::vector<std::string> Inputs() {
  std::vector<std::string> inputs = {
      "",
      "\n",
      "\n\n",
      "a",
      "a\n",
      "ab\ncd",
      "ab\ncd\n",
      "\nab\n\ncd",
      "x\r\ny\r\n",
      "\r\n\r\n",
      "\r",
      "\r\r",
      "a\rb",
      "a\r",
      "a\r\r\nb",
      "\n\r\n\r",
      "ab\r\ncd",
      std::string(40, 'L') + "\nz",
      std::string(40, 'L') + "\r\nz\r",
  };
  std::mt19937_64 rng(42);
  for (int i = 0; i < 40; ++i) {
    std::string data;
    const int lines = rng() % 12;
    for (int l = 0; l < lines; ++l) {
      const int kind = rng() % 6;
      const size_t len = kind == 0 ? 0 : kind == 1 ? 20 + rng() % 30 : rng() % 6;
      for (size_t c = 0; c < len; ++c) data.push_back("ab \t"[rng() % 4]);
      if (l + 1 < lines || rng() % 2) {
        static const char* const kEnds[] = {"\n", "\r\n", "\r"};
        data += kEnds[rng() % 3];
      }
    }
    inputs.push_back(data);
  }
  return inputs;
}

TEST(LineReaderTest, EverySplittingReadsEveryLineOnce) {
  // Whatever the split size and where the split grid starts, the splits
  // together must return each line of the file exactly once, in order, at
  // its offset: the property map tasks rely on. Tiny buffers force lines to
  // straddle refills.
  for (const std::string& data : Inputs()) {
    SCOPED_TRACE(testing::PrintToString(data));
    const std::vector<Line> expected = ExpectedLines(data);
    const int64_t len = data.size();
    for (int64_t buffer : {int64_t{1}, int64_t{3}, LineReader::kDefaultBufferBytes}) {
      for (int64_t size = 1; size <= std::max<int64_t>(len, 1); ++size) {
        for (int64_t align = 0; align < size; ++align) {
          // Split boundaries at align, align + size, ...; the first split
          // is [0, align) when align > 0.
          std::vector<int64_t> bounds = {0};
          for (int64_t b = align; b < len; b += size) {
            if (b > 0) bounds.push_back(b);
          }
          bounds.push_back(len);
          std::vector<Line> got;
          for (size_t s = 0; s + 1 < bounds.size(); ++s) {
            for (const Line& l : ReadSplit(data, bounds[s], bounds[s + 1], 0, buffer)) {
              EXPECT_TRUE(l.in_split);
              got.push_back(l);
            }
          }
          ASSERT_EQ(got, expected) << "size " << size << " align " << align << " buffer " << buffer;
        }
      }
    }
  }
}

// The DFS records each block's byte before it (BlockRef.byte_before); a
// map that is given it must return exactly the same lines as one that
// reads that byte, at every split of every input, and read nothing before
// its split's start.
TEST(LineReaderTest, AKnownByteBeforeGivesTheSameLinesAndReadsNothingBeforeTheStart) {
  for (const std::string& data : Inputs()) {
    SCOPED_TRACE(testing::PrintToString(data));
    const int64_t len = data.size();
    for (int64_t buffer : {int64_t{1}, int64_t{3}, LineReader::kDefaultBufferBytes}) {
      for (int64_t start = 1; start < len; ++start) {
        for (int64_t end = start + 1; end <= len; ++end) {
          const std::vector<Line> want = ReadSplit(data, start, end, 1, buffer);
          int64_t lowest = len;
          LineReader::ReadFn read = [&](int64_t offset, int64_t n, std::string* out) {
            lowest = std::min(lowest, offset);
            EXPECT_LE(offset + n, len);
            *out = data.substr(offset, n);
            return Status::OK();
          };
          LineReader reader(read, len, start, end, 1, buffer);
          reader.set_byte_before(data[start - 1]);
          std::vector<Line> got;
          std::string_view text;
          Line line;
          for (;;) {
            Result<bool> more = reader.Next(&text, &line.offset, &line.in_split);
            ASSERT_TRUE(more.ok()) << more.status().ToString();
            if (!*more) break;
            line.text = std::string(text);
            got.push_back(line);
          }
          ASSERT_EQ(got, want) << "split [" << start << ", " << end << ") buffer " << buffer;
          EXPECT_GE(lowest, start)
              << "split [" << start << ", " << end << ") read before its start";
        }
      }
    }
  }
}

TEST(LineReaderTest, LookaheadLinesAreTheNextLines) {
  // After its own lines a split must return the first `k` lines that start
  // at or after its end, marked in_split == false (Permu reads its triples'
  // tails from them), and nothing else. A split that owns no line gets no
  // lookahead either (there is nothing for it to complete).
  for (const std::string& data : Inputs()) {
    SCOPED_TRACE(testing::PrintToString(data));
    const std::vector<Line> all = ExpectedLines(data);
    const int64_t len = data.size();
    for (int k : {1, 2, 5}) {
      for (int64_t start = 0; start < len; ++start) {
        for (int64_t end = start + 1; end <= len; ++end) {
          std::vector<Line> expected;
          for (const Line& l : all) {
            if (l.offset >= start && l.offset < end) expected.push_back(l);
          }
          int extra = 0;
          for (Line l : all) {
            if (!expected.empty() && l.offset >= end && extra < k) {
              l.in_split = false;
              expected.push_back(l);
              ++extra;
            }
          }
          ASSERT_EQ(ReadSplit(data, start, end, k, 2), expected)
              << "split [" << start << ", " << end << ") lookahead " << k;
        }
      }
    }
  }
}

TEST(LineReaderTest, LinesLongerThanBufferAndSplit) {
  // A line much longer than both the read buffer and the split belongs
  // whole to the split it starts in; the splits it covers return nothing.
  const std::string big(100000, 'x');
  const std::string data = "a\n" + big + "\nb";
  EXPECT_EQ(ReadSplit(data, 0, 5, 0, 4096), (std::vector<Line>{{"a", 0, true}, {big, 2, true}}));
  EXPECT_TRUE(ReadSplit(data, 5, 50000, 0, 4096).empty());
  EXPECT_EQ(ReadSplit(data, 50000, data.size(), 0, 4096),
            (std::vector<Line>{{"b", static_cast<int64_t>(big.size()) + 3, true}}));
  // A split that owns no line has no lookahead lines either.
  EXPECT_TRUE(ReadSplit(data, 5, 50000, 1, 4096).empty());
}

TEST(LineReaderTest, LinesEndAsHadoopsDo) {
  // '\n', "\r\n" and a lone '\r' end a line and are not part of it
  // (Hadoop's LineReader.readDefaultLine); other bytes, NUL included, are.
  EXPECT_EQ(ReadSplit("a\r\nb\r\n", 0, 6, 0, 1024),
            (std::vector<Line>{{"a", 0, true}, {"b", 3, true}}));
  EXPECT_EQ(ReadSplit("a\rb\nc", 0, 5, 0, 1024),
            (std::vector<Line>{{"a", 0, true}, {"b", 2, true}, {"c", 4, true}}));
  EXPECT_EQ(ReadSplit("a\r\r\nb\n\rc\r", 0, 100, 0, 1024),
            (std::vector<Line>{
                {"a", 0, true}, {"", 2, true}, {"b", 4, true}, {"", 6, true}, {"c", 7, true}}));
  EXPECT_EQ(ReadSplit(std::string("x\0y\tz \r\n", 7), 0, 7, 0, 1024),
            (std::vector<Line>{{std::string("x\0y\tz ", 6), 0, true}}));
}

TEST(LineReaderTest, FileWithoutAFinalTerminator) {
  // The last line counts without a terminator, and a final terminator
  // does not make an empty last line.
  EXPECT_EQ(ReadSplit("a\r\nbc", 0, 6, 0, 1024),
            (std::vector<Line>{{"a", 0, true}, {"bc", 3, true}}));
  EXPECT_EQ(ReadSplit("a\r\nbc\r", 0, 7, 0, 1024),
            (std::vector<Line>{{"a", 0, true}, {"bc", 3, true}}));
  EXPECT_EQ(ReadSplit("a\r\nbc", 2, 6, 0, 1024), (std::vector<Line>{{"bc", 3, true}}));
}

TEST(LineReaderTest, CrLfStraddlingABufferBoundary) {
  // The read buffer ends between '\r' and '\n': the reader must look at the
  // next byte before deciding, so "\r\n" stays one terminator (Hadoop's
  // prevCharCR), and a '\r' then something else stays a lone '\r'.
  const std::string crlf = "ab\r\ncd\r\n";
  const std::string cr = "ab\rcd\r\n";
  for (int64_t buffer : {1, 2, 3, 4, 5}) {
    SCOPED_TRACE(buffer);
    EXPECT_EQ(ReadSplit(crlf, 0, crlf.size(), 0, buffer),
              (std::vector<Line>{{"ab", 0, true}, {"cd", 4, true}}));
    EXPECT_EQ(ReadSplit(cr, 0, cr.size(), 0, buffer),
              (std::vector<Line>{{"ab", 0, true}, {"cd", 3, true}}));
  }
}

TEST(LineReaderTest, CrLfStraddlingASplitBoundary) {
  // The split boundary falls between '\r' and '\n' (offset 3 of
  // "ab\r\ncd"): the line after the "\r\n" starts at 4, in the second
  // split; neither split returns an empty line at 3. With a lone '\r' at
  // the end of the first split, the next line starts exactly at the
  // boundary and is the second split's.
  EXPECT_EQ(ReadSplit("ab\r\ncd", 0, 3, 0, 1024), (std::vector<Line>{{"ab", 0, true}}));
  EXPECT_EQ(ReadSplit("ab\r\ncd", 3, 6, 0, 1024), (std::vector<Line>{{"cd", 4, true}}));
  EXPECT_EQ(ReadSplit("ab\rcd", 0, 3, 0, 1024), (std::vector<Line>{{"ab", 0, true}}));
  EXPECT_EQ(ReadSplit("ab\rcd", 3, 5, 0, 1024), (std::vector<Line>{{"cd", 3, true}}));
  // The split ends right after the "\r\n": the next line is the next split's.
  EXPECT_EQ(ReadSplit("ab\r\ncd", 0, 4, 1, 1024),
            (std::vector<Line>{{"ab", 0, true}, {"cd", 4, false}}));
  EXPECT_EQ(ReadSplit("ab\r\ncd", 4, 6, 0, 1024), (std::vector<Line>{{"cd", 4, true}}));
}

TEST(LineReaderTest, NextOffsetIsPastTheTerminator) {
  // next_offset(): where the next line starts, so a line's bytes with its
  // terminator are next_offset() - offset (map tasks count input by it).
  const std::string data = "a\r\nbb\rc\nd";
  LineReader reader(ReadFrom(data), data.size(), 0, data.size(), 0);
  std::string_view line;
  int64_t offset;
  bool in_split;
  std::vector<int64_t> ends;
  while (*reader.Next(&line, &offset, &in_split)) ends.push_back(reader.next_offset());
  EXPECT_EQ(ends, (std::vector<int64_t>{3, 6, 8, 9}));
}

// The lines of a split as NextLines gives them, each as the bytes it
// covers (line and terminator) and its offset; also how many calls it took.
struct Block {
  std::string bytes;  // the lines of all calls, concatenated
  std::vector<int64_t> offsets;
  int64_t lines = 0;
  int calls = 0;
};
Block ReadBlocks(const std::string& data, int64_t start, int64_t end, int64_t buffer_bytes,
                 int byte_before) {
  LineReader reader(ReadFrom(data), data.size(), start, end, 0, buffer_bytes);
  if (byte_before >= 0) reader.set_byte_before(static_cast<char>(byte_before));
  Block b;
  std::string_view text;
  int64_t offset, lines;
  for (;;) {
    Result<bool> more = reader.NextLines(&text, &offset, &lines);
    EXPECT_TRUE(more.ok()) << more.status().ToString();
    if (!more.ok() || !*more) break;
    EXPECT_GE(lines, 1);
    EXPECT_EQ(reader.next_offset() - offset, static_cast<int64_t>(text.size()));
    EXPECT_EQ(text, std::string_view(data).substr(offset, text.size()));
    b.bytes += text;
    b.offsets.push_back(offset);
    b.lines += lines;
    ++b.calls;
  }
  return b;
}

TEST(LineReaderTest, NextLinesGivesNextsLinesInBlocks) {
  // For every split of every input, with and without the byte before it,
  // NextLines covers exactly the bytes of the lines Next returns (each with
  // its terminator), counts them, and starts each block where Next's line
  // starts. Map tasks count records_in and input bytes by it.
  for (const std::string& data : Inputs()) {
    SCOPED_TRACE(testing::PrintToString(data));
    const int64_t len = data.size();
    for (int64_t buffer : {int64_t{1}, int64_t{3}, int64_t{7}, LineReader::kDefaultBufferBytes}) {
      for (int64_t size = 1; size <= std::max<int64_t>(len, 1); size += 2) {
        for (int64_t start = 0; start < len; start += size) {
          const int64_t end = start + size;
          // Next's lines, each with its terminator: [offset, next_offset()).
          LineReader reader(ReadFrom(data), len, start, end, 0, buffer);
          std::string bytes;
          std::vector<int64_t> offsets;
          std::string_view t;
          int64_t o;
          bool in;
          while (*reader.Next(&t, &o, &in)) {
            bytes += data.substr(o, reader.next_offset() - o);
            offsets.push_back(o);
          }
          for (int byte_before : {-1, start > 0 ? static_cast<unsigned char>(data[start - 1]) : -1}) {
            const Block got = ReadBlocks(data, start, end, buffer, byte_before);
            ASSERT_EQ(got.bytes, bytes) << "split [" << start << ", " << end << ") buffer " << buffer;
            ASSERT_EQ(got.lines, static_cast<int64_t>(offsets.size()));
            for (int64_t at : got.offsets) {  // each block starts where a line does
              ASSERT_NE(std::find(offsets.begin(), offsets.end(), at), offsets.end()) << at;
            }
          }
        }
      }
    }
  }
}

TEST(LineReaderTest, NextLinesTakesEveryBufferedLineAtOnce) {
  // The buffered lines up to the last '\n' come in one call, "\r\n" and a
  // lone '\r' ending lines among them.
  const std::string lf = "ab\ncd\n\nef\ng";
  Block b = ReadBlocks(lf, 0, lf.size(), LineReader::kDefaultBufferBytes, -1);
  EXPECT_EQ(b.calls, 2);  // "ab\ncd\n\nef\n", then the last line (no terminator)
  EXPECT_EQ(b.lines, 5);
  EXPECT_EQ(b.offsets, (std::vector<int64_t>{0, 10}));
  const std::string cr = "ab\r\ncd\ref\n";
  b = ReadBlocks(cr, 0, cr.size(), LineReader::kDefaultBufferBytes, -1);
  EXPECT_EQ(b.calls, 1);
  EXPECT_EQ(b.lines, 3);
  const std::string crs = "a\r\rb\r\n\r\nc\rd";
  b = ReadBlocks(crs, 0, crs.size(), LineReader::kDefaultBufferBytes, -1);
  EXPECT_EQ(b.calls, 3);  // up to the last '\n'; then "c" and "d", one call each
  EXPECT_EQ(b.lines, 6);  // "a" "" "b" "" "c" "d"
  // The split's end bounds a block: "cd" starts at 3, in the next split.
  b = ReadBlocks(lf, 0, 3, LineReader::kDefaultBufferBytes, -1);
  EXPECT_EQ(b.bytes, "ab\n");
  EXPECT_EQ(b.lines, 1);
}

TEST(LineReaderTest, SplitPastTheEndIsClipped) {
  // end beyond the file and start at or beyond it are not errors.
  EXPECT_EQ(ReadSplit("a\nb", 0, 100, 2, 1024),
            (std::vector<Line>{{"a", 0, true}, {"b", 2, true}}));
  EXPECT_TRUE(ReadSplit("a\nb", 3, 10, 2, 1024).empty());
  EXPECT_TRUE(ReadSplit("a\nb", 50, 60, 2, 1024).empty());
}

TEST(LineReaderTest, ReadErrorsAreReturned) {
  // A failing or short read must surface as IOError, never as a silently
  // shorter line.
  const std::string data = "hello\nworld\n";
  std::string_view line;
  int64_t offset;
  bool in_split;

  LineReader failing([](int64_t, int64_t, std::string*) { return Status::IOError("disk gone"); },
                     data.size(), 0, data.size(), 0);
  Result<bool> r = failing.Next(&line, &offset, &in_split);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsIOError());
  EXPECT_EQ(r.status().message(), "disk gone");

  LineReader short_read(
      [&](int64_t off, int64_t n, std::string* out) {
        *out = data.substr(off, n - 1);
        return Status::OK();
      },
      data.size(), 0, data.size(), 0);
  r = short_read.Next(&line, &offset, &in_split);
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsIOError()) << r.status().ToString();
}

TEST(LineReaderTest, ReadsInBufferSizedChunks) {
  // A split of a big file must not read the whole file: only its own bytes,
  // rounded up to a buffer, plus the end of its last line.
  const std::string data = std::string(1000, 'a') + "\n" + std::string(1000, 'b') + "\n";
  int64_t bytes_read = 0;
  LineReader reader(
      [&](int64_t offset, int64_t n, std::string* out) {
        bytes_read += n;
        *out = data.substr(offset, n);
        return Status::OK();
      },
      data.size(), 0, 10, 0, 100);
  std::string_view line;
  int64_t offset;
  bool in_split;
  ASSERT_TRUE(*reader.Next(&line, &offset, &in_split));
  EXPECT_EQ(line.size(), 1000u);
  ASSERT_FALSE(*reader.Next(&line, &offset, &in_split));
  EXPECT_LE(bytes_read, 1100);
}

}  // namespace
}  // namespace mr::jobs

namespace mr::jobs {
namespace {

TEST(LineReaderTest, StopsItsReadsAtTheSplitEndAndReadsLittlePastIt) {
  // A 1 MiB buffer over a split of 256 KiB: reads stay inside the split (a
  // block) until its end, then go on in kPastEndStepBytes steps to finish
  // the last line, instead of fetching a whole buffer of the next block.
  std::string data;
  while (data.size() < (2 << 20)) data += std::string(99, 'x') + "\n";
  std::vector<std::pair<int64_t, int64_t>> reads;
  const int64_t end = 256 << 10;
  LineReader reader(
      [&](int64_t offset, int64_t n, std::string* out) {
        reads.emplace_back(offset, n);
        *out = data.substr(offset, n);
        return Status::OK();
      },
      data.size(), 0, end, 0);
  std::string_view line;
  int64_t offset;
  bool in_split;
  while (*reader.Next(&line, &offset, &in_split)) {
  }
  int64_t past_end = 0;
  for (const auto& [off, n] : reads) {
    EXPECT_TRUE(off + n <= end || off >= end) << "a read straddles the split end at " << off;
    if (off >= end) past_end += n;
  }
  EXPECT_LE(past_end, LineReader::kPastEndStepBytes);
}

// Issue 12, point 6: a split's last line is usually short, and the bytes
// after the split's end may come from another datacenter. With ~100-byte
// lines the reader reads at most 4 KiB past the end (it used to read a
// whole 64 KiB checksum chunk), with and without lookahead (Permu), from
// any split of many.
TEST(LineReaderTest, ReadsOnlyAFewKiBPastTheEndForShortLines) {
  std::string data;
  while (data.size() < (4 << 20)) data += std::string(97, 'y') + "\r\n";
  const int64_t split = 1 << 20;
  for (int lookahead : {0, 2}) {
    for (int64_t start = 0; start + split < static_cast<int64_t>(data.size()); start += split) {
      SCOPED_TRACE(testing::Message() << "lookahead " << lookahead << " split at " << start);
      int64_t past_end = 0;
      LineReader reader(
          [&](int64_t offset, int64_t n, std::string* out) {
            if (offset >= start + split) past_end += n;
            *out = data.substr(offset, n);
            return Status::OK();
          },
          data.size(), start, start + split, lookahead);
      std::string_view line;
      int64_t offset;
      bool in_split;
      int lines = 0;
      while (*reader.Next(&line, &offset, &in_split)) ++lines;
      EXPECT_GT(lines, 0);
      EXPECT_GT(past_end, 0);  // the last line crosses the end: something is read
      EXPECT_LE(past_end, 4096);
    }
  }
}

// A file that is one long line cut into many splits, as a cluster's blocks
// cut it: the bytes all the splits' readers read together.
int64_t BytesReadOverAllSplits(const std::string& data, int64_t split, int lookahead,
                               int64_t buffer_bytes, std::vector<Line>* lines) {
  int64_t total = 0;
  for (int64_t start = 0; start < static_cast<int64_t>(data.size()); start += split) {
    LineReader reader(
        [&](int64_t offset, int64_t n, std::string* out) {
          total += n;
          *out = data.substr(offset, n);
          return Status::OK();
        },
        data.size(), start, start + split, lookahead, buffer_bytes);
    std::string_view text;
    Line line;
    while (*reader.Next(&text, &line.offset, &line.in_split)) {
      line.text = std::string(text.substr(0, 8));  // enough to tell lines apart
      lines->push_back(line);
    }
  }
  return total;
}

TEST(LineReaderTest, ALineOverManySplitsIsReadInLinearBytes) {
  // 4 MB on one line (then a short one) in 64 KiB splits: the split that
  // owns the line reads on to its end, and each other split reads only its
  // own bytes (and one before) to learn that no line starts in it, instead
  // of scanning forward to the line's end (quadratic: ~30x the file here).
  // Also with lookahead (Permu), which a split with no line of its own does
  // not need.
  const int64_t kLong = 4 << 20, kSplit = 64 << 10;
  const std::string data = std::string(kLong, 'x') + "\r\nend\r\n";
  for (int lookahead : {0, 2}) {
    for (int64_t buffer : {int64_t{4096}, LineReader::kDefaultBufferBytes}) {
      SCOPED_TRACE(testing::Message() << "lookahead " << lookahead << " buffer " << buffer);
      std::vector<Line> lines;
      const int64_t total = BytesReadOverAllSplits(data, kSplit, lookahead, buffer, &lines);
      // Every line once, in order; the first split's lookahead is "end".
      std::vector<Line> want = {{"xxxxxxxx", 0, true}, {"end", kLong + 2, true}};
      if (lookahead > 0) want.insert(want.begin() + 1, {"end", kLong + 2, false});
      EXPECT_EQ(lines, want);
      // The owner reads the file once; the others their splits, plus a byte.
      const int64_t splits = (static_cast<int64_t>(data.size()) + kSplit - 1) / kSplit;
      EXPECT_LE(total, 2 * static_cast<int64_t>(data.size()) + splits) << "read " << total;
    }
  }
}

TEST(LineReaderTest, AnUnknownLengthIsFoundAtTheEnd) {
  // A compressed file's decompressed bytes: one split of kUnknownLength,
  // whose read returns fewer bytes than asked only at the end. The lines
  // are the file's, whatever the buffer (a '\r' last in a buffer, the end
  // found by a read of 0 bytes or of a few).
  for (const std::string& data : Inputs()) {
    for (int64_t buffer : {int64_t{1}, int64_t{3}, LineReader::kDefaultBufferBytes}) {
      SCOPED_TRACE(testing::Message() << testing::PrintToString(data) << " buffer " << buffer);
      int64_t next = 0;
      LineReader::ReadFn read = [&](int64_t offset, int64_t n, std::string* out) {
        EXPECT_EQ(offset, next) << "reads are in order";
        *out = offset < static_cast<int64_t>(data.size()) ? data.substr(offset, n) : "";
        next += static_cast<int64_t>(out->size());
        return Status::OK();
      };
      LineReader reader(read, LineReader::kUnknownLength, 0, LineReader::kUnknownLength, 0, buffer);
      std::vector<Line> lines;
      std::string_view text;
      Line line;
      for (;;) {
        Result<bool> more = reader.Next(&text, &line.offset, &line.in_split);
        ASSERT_TRUE(more.ok()) << more.status().ToString();
        if (!*more) break;
        line.text = std::string(text);
        lines.push_back(line);
      }
      EXPECT_EQ(lines, ExpectedLines(data));
    }
  }
}

}  // namespace
}  // namespace mr::jobs

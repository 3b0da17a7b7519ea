// How a cluster's map tasks cut their splits into lines, end to end on local
// clusters of real processes: a CRLF Project Gutenberg book (from
// ../shared/data, when present) sorted exactly as `sort` sorts its lines
// once "\r\n" and lone '\r' end them like '\n' (Hadoop's rule), with a
// "\r\n" cut by a block boundary; and a line twenty blocks long read in
// bytes linear in its length, not once per block it covers.
#include <fstream>

#include "tests/integration/job_fixture.h"

namespace mr::testing {
namespace {

using nlohmann::json;

class JobLinesTest : public JobTest {};

constexpr int64_t kChunk = 64 << 10;  // block sizes are multiples of this

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

// The lines of `files`, each ended by '\n', where '\n', "\r\n" and a lone
// '\r' end a line (perl reads records up to '\n', so a "\r\n" is never cut
// in two), sorted bytewise: an oracle independent of mr's line reader.
std::string SortedLines(const std::string& file) {
  CommandResult r = Shell(R"sh(perl -pe 's/\r\n?/\n/g; $_ .= "\n" unless /\n\z/' )sh" +
                          Quote(file) + " | LC_ALL=C sort");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  return r.out;
}

TEST_F(JobLinesTest, SortOfACrlfBookIsItsLinesSorted) {
  const std::string data = SharedDataDir();
  if (data.empty()) GTEST_SKIP() << "../shared/data is not present: no Project Gutenberg book";
  // The first book (by name) and block size (a multiple of 64 KiB) that put
  // a block boundary between a '\r' and its '\n'.
  std::vector<std::string> books;
  for (const auto& e : std::filesystem::directory_iterator(data + "/books")) {
    if (e.path().extension() == ".txt") books.push_back(e.path().string());
  }
  std::sort(books.begin(), books.end());
  std::string book;
  int64_t block = 0;
  for (const std::string& b : books) {
    const std::string text = ReadAll(b);
    for (int64_t at = kChunk; at + 1 < static_cast<int64_t>(text.size()) && block == 0;
         at += kChunk) {
      if (text[at - 1] == '\r' && text[at] == '\n') block = at;
    }
    if (block > 0) {
      book = b;
      break;
    }
  }
  if (book.empty())
    GTEST_SKIP() << "no book in " << data << "/books has a CRLF at a 64 KiB multiple";
  SCOPED_TRACE(book + ", blocks of " + std::to_string(block) + " bytes");

  LocalCluster c(3, 2, "--replication 1 --heartbeat-ms 100");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  CommandResult put = c.Mrctl("dfs put --block-size " + std::to_string(block) + " " + Quote(book) +
                              " /real/book.txt");
  ASSERT_EQ(put.exit_code, 0) << put.err;
  json r = RunJob(c, "sort", "/real/book.txt", "/out/sorted", 3, "");
  ASSERT_EQ(r["state"], "succeeded") << r.dump(2);
  EXPECT_GE(r["maps_total"].get<int>(), 2);

  const std::string got = Cat(c, "/out/sorted");
  const std::string want = SortedLines(book);
  ASSERT_NE(ReadAll(book).find("\r\n"), std::string::npos) << "not a CRLF book: a vacuous test";
  EXPECT_EQ(got.find('\r'), std::string::npos) << "a '\\r' was left in a record";
  EXPECT_EQ(got.size(), want.size());
  EXPECT_TRUE(got == want) << "Sort's output differs from perl | sort";
  // mr-local cuts the book at the same offsets and agrees.
  EXPECT_TRUE(got == Oracle("sort", book, 3, "", block));
  // mrctl's sample for Sort's split points cuts lines the same way: no
  // point keeps a '\r' (each is hex of a line, joined by ',').
  const std::string points = r["params"]["split_points"].get<std::string>();
  ASSERT_FALSE(points.empty()) << r.dump(2);
  for (size_t i = 0; i + 1 < points.size(); i += 2) {
    if (points[i] == ',') ++i;
    EXPECT_NE(points.substr(i, 2), "0d") << "a split point holds a CR (0d): " << points;
  }
}

TEST_F(JobLinesTest, ALineTwentyBlocksLongIsReadInLinearBytes) {
  // One 20 MiB line in 1 MiB blocks, then a short line. The map that owns
  // the long line reads it to its end; each of the other 20 maps must read
  // only its own block (and a byte before it) to learn that no line starts
  // there. Scanning forward to the line's end instead reads ~10x the file.
  LocalCluster c(3, 1, "--block-size 1048576 --replication 1 --heartbeat-ms 100");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  const std::string path = work_ + "/long.txt";
  const int64_t kLong = 20 << 20;
  {
    std::ofstream f(path, std::ios::binary);
    std::string line = "needle1 ";
    while (static_cast<int64_t>(line.size()) < kLong / 2) line += "haystack ";
    line += "needle2 ";
    while (static_cast<int64_t>(line.size()) < kLong - 8) line += "haystack ";
    line.resize(kLong - 8, ' ');
    line += "needle3 ";
    f << line << "\r\nneedle4\r\n";
  }
  const int64_t size = static_cast<int64_t>(std::filesystem::file_size(path));
  Put(c, path, "/in/long.txt");
  json r = RunJob(c, "grep", "/in/long.txt", "/out/long", 1, "pattern=needle[0-9]");
  ASSERT_EQ(r["state"], "succeeded") << r.dump(2);
  EXPECT_EQ(r["maps_total"].get<int>(), 21);
  EXPECT_EQ(Cat(c, "/out/long"), "needle1\t1\nneedle2\t1\nneedle3\t1\nneedle4\t1\n");

  const json& in = r["map_input_bytes"];
  const int64_t read =
      in["local"].get<int64_t>() + in["same_dc"].get<int64_t>() + in["other_dc"].get<int64_t>();
  std::printf("[          ] %lld-byte file, 1 MiB blocks: maps read %lld bytes (%.2fx)\n",
              static_cast<long long>(size), static_cast<long long>(read),
              static_cast<double>(read) / static_cast<double>(size));
  EXPECT_GE(read, size);
  EXPECT_LE(read, 5 * size / 2) << "maps re-read the long line";
}

}  // namespace
}  // namespace mr::testing

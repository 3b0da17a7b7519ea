// RunLocal, the oracle, checked against independent computations: for each
// job a shell pipeline (coreutils, grep, mawk) computes the same answer from
// the job's definition, and the outputs must match byte for byte (after
// sorting lines where the part files define no order). Splits are small, so
// lines and Permu's triples cross split boundaries, and 3 reducers check
// that each key lands in exactly one part file. The same runs repeat on the
// real data in ../shared/data when it is there.
#include "jobs/local_runner.h"

#include <gtest/gtest.h>
#include <stdlib.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>
#include <vector>

namespace mr::jobs {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteFile(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary);
  out << data;
  ASSERT_TRUE(out.good()) << path;
}

// Runs `script` with bash -o pipefail and returns its stdout. Every command
// runs with LC_ALL=C: bytewise sort order, [:space:] = " \t\n\v\f\r".
std::string Shell(const std::string& dir, const std::string& script) {
  const std::string path = dir + "/oracle.sh";
  WriteFile(path, "export LC_ALL=C\n" + script + "\n");
  FILE* pipe = popen(("bash -o pipefail '" + path + "'").c_str(), "r");
  EXPECT_NE(pipe, nullptr);
  if (pipe == nullptr) return "";
  std::string out;
  char buf[65536];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) out.append(buf, n);
  const int status = pclose(pipe);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "failed: " << script;
  return out;
}

// "'a' 'b'": paths for a shell command line.
std::string Quoted(const std::vector<std::string>& paths) {
  std::string s;
  for (const std::string& p : paths) s += " '" + p + "'";
  return s;
}

// The lines of `text`, sorted bytewise.
std::vector<std::string> SortedLines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::sort(lines.begin(), lines.end());
  return lines;
}

// Equality without printing megabytes: sizes and the first differing line.
testing::AssertionResult SameLines(const std::vector<std::string>& got,
                                   const std::vector<std::string>& want) {
  const size_t n = std::min(got.size(), want.size());
  for (size_t i = 0; i < n; ++i) {
    if (got[i] != want[i]) {
      return testing::AssertionFailure()
             << "line " << i << ": got " << testing::PrintToString(got[i].substr(0, 200))
             << ", want " << testing::PrintToString(want[i].substr(0, 200));
    }
  }
  if (got.size() != want.size()) {
    return testing::AssertionFailure()
           << got.size() << " lines, want " << want.size()
           << (got.size() > n ? ", extra: " : ", missing: ")
           << testing::PrintToString((got.size() > n ? got : want)[n].substr(0, 200));
  }
  return testing::AssertionSuccess() << got.size() << " lines";
}

testing::AssertionResult SameBytes(const std::string& got, const std::string& want) {
  if (got == want) return testing::AssertionSuccess();
  std::vector<std::string> g, w;
  std::istringstream gi(got), wi(want);
  for (std::string l; std::getline(gi, l);) g.push_back(l);
  for (std::string l; std::getline(wi, l);) w.push_back(l);
  testing::AssertionResult r = SameLines(g, w);
  if (r) return testing::AssertionFailure() << "same lines, different bytes";
  return r;
}

// ---------------------------------------------------------- the oracles
// Each turns the job's definition (jobs/<job>.cc) into a pipeline.

// The files' lines, each ended by '\n': a line ends at '\n', "\r\n" or a
// lone '\r' (as in Hadoop), and a file's last line may have no terminator.
// perl reads records up to '\n', so a "\r\n" is never cut in two.
// `args`: the quoted file names.
std::string LinesScript(const std::string& args) {
  return R"sh(perl -pe 's/\r\n?/\n/g; $_ .= "\n" unless /\n\z/' )sh" + args;
}

// uniq -c's "   N line" → "line\tN".
constexpr char kCountToTab[] = R"sh( | sort | uniq -c | sed -E 's/^ *([0-9]+) (.*)$/\2\t\1/')sh";

// Words: runs of bytes outside [:space:], one per line, file by file.
std::string WordsScript(const std::vector<std::string>& files) {
  return "for f in" + Quoted(files) + R"sh(; do tr -s '[:space:]' '\n' < "$f"; echo; done)sh" +
         " | grep -av '^$'";
}

std::string WordCountScript(const std::vector<std::string>& files) {
  return WordsScript(files) + kCountToTab;
}

std::string GrepScript(const std::vector<std::string>& files, const std::string& ere) {
  return "grep -haoE '" + ere + "'" + Quoted(files) + kCountToTab;
}

std::string SortScript(const std::vector<std::string>& files) {
  return LinesScript(Quoted(files)) + " | sort";
}

// Sequences, per line (LinesScript): mawk splits fields on spaces once
// \t \f \v are spaces too.
std::string SequenceCountScript(const std::vector<std::string>& files) {
  return "for f in" + Quoted(files) + "; do " + LinesScript("\"$f\"") +
         R"sh( | tr '\t\f\v' '   ' | )sh" +
         R"sh(awk '{ for (i = 1; i + 2 <= NF; i++) print $i " " $(i + 1) " " $(i + 2) }'; done)sh" +
         kCountToTab;
}

// A header ('>') or an empty line ends the record.
std::string PermuScript(const std::vector<std::string>& files) {
  return "for f in" + Quoted(files) + "; do " + LinesScript("\"$f\"") +
         R"sh( | awk '/^>/ || $0 == "" { n = 0; next } )sh" +
         R"sh({ if (n >= 2) print a b $0; a = b; b = $0; n++ }'; done)sh" + kCountToTab;
}

// (word, file) pairs, unique and sorted, folded into "word\tf1,f2". The
// `""` concatenations force string comparison (mawk compares "1" and "1.0"
// as numbers otherwise).
std::string InvertedIndexScript(const std::vector<std::string>& files) {
  return "for f in" + Quoted(files) + R"sh(; do tr '\t\r\f\v' '    ' < "$f" | )sh" +
         R"sh(awk -v name="$(basename "$f")" '{ for (i = 1; i <= NF; i++) print $i "\t" name }'; )sh" +
         "done | sort -u | " +
         R"sh(awk -F '\t' '($1 "") != (w "") { if (NR > 1) print w "\t" l; w = $1; l = $2; next })sh" +
         R"sh( { l = l "," $2 } END { if (NR > 0) print w "\t" l }')sh";
}

// ---------------------------------------------------------- generated data

// English-like lines over a small vocabulary (so words, sequences and grep
// matches repeat), with every separator the jobs care about: \t, \v, \f,
// runs of spaces, CRLF and lone CR endings, UTF-8 no-break spaces (not separators),
// empty lines, a few lines longer than a split, words awk could mistake for
// numbers, and no final newline.
std::string GenerateText(uint64_t seed, int lines) {
  static const std::vector<std::string> kWords = {
      "the", "The", "a",   "of",  "sing", "singing", "thing",      "ring,", "going.",     "Ring",
      "1",   "01",  "1.0", "1e0", "café", "naïve",   "x\xC2\xA0y", "--",    "\"quoted\"", "ing"};
  static const std::vector<std::string> kSeparators = {" ",  " ",  " ",  " ",   "  ",
                                                       "\t", "\v", "\f", " \t "};
  std::mt19937_64 rng(seed);
  std::string text;
  for (int l = 0; l < lines; ++l) {
    const uint64_t kind = rng() % 20;
    int words = kind == 0 ? 0 : kind == 1 ? 400 + rng() % 400 : 1 + rng() % 14;
    if (rng() % 10 == 0) text += kSeparators[rng() % kSeparators.size()];  // leading space
    for (int w = 0; w < words; ++w) {
      if (w > 0) text += kSeparators[rng() % kSeparators.size()];
      text += kWords[rng() % kWords.size()];
    }
    if (l + 1 < lines) {
      const uint64_t end = rng() % 8;
      text += end < 2 ? "\r\n" : end == 2 ? "\r" : "\n";
    }
  }
  return text;
}

// FASTA with short sequence lines (1-3 bases) so triples repeat, several
// records, the odd empty line, some CRLF endings, and no final newline.
std::string GenerateFasta(uint64_t seed, int lines) {
  std::mt19937_64 rng(seed);
  std::string text;
  for (int l = 0; l < lines; ++l) {
    const uint64_t kind = rng() % 60;
    if (kind == 0 || l == 0) {
      text += ">record " + std::to_string(l) + " Escherichia coli";
    } else if (kind != 1) {
      for (int n = 1 + rng() % 3; n > 0; --n) text += "ACGT"[rng() % 4];
    }
    if (l + 1 < lines) text += rng() % 5 == 0 ? "\r\n" : "\n";
  }
  return text;
}

class LocalRunnerTest : public testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/local_runner_test.XXXXXX";
    ASSERT_NE(mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }

  // Writes `data` into dir_/name and returns the path.
  std::string Input(const std::string& name, const std::string& data) {
    const std::string path = dir_ + "/" + name;
    fs::create_directories(fs::path(path).parent_path());
    WriteFile(path, data);
    return path;
  }

  // Runs the job and returns its part files concatenated in order, checking
  // that there is one per reducer.
  std::string Run(const std::string& job, const std::vector<std::string>& inputs, int reducers,
                  int64_t split_bytes, const Params& params = {}) {
    const std::string out = dir_ + "/out" + std::to_string(runs_++);
    Status s = RunLocal(job, inputs, out, {reducers, split_bytes, params});
    EXPECT_TRUE(s.ok()) << s.ToString();
    std::vector<std::string> parts;
    for (const auto& entry : fs::directory_iterator(out)) {
      parts.push_back(entry.path().filename().string());
    }
    std::sort(parts.begin(), parts.end());
    std::string all;
    for (size_t i = 0; i < parts.size(); ++i) {
      char expected[32];
      std::snprintf(expected, sizeof(expected), reducers > 0 ? "part-%05zu" : "part-m-%05zu", i);
      EXPECT_EQ(parts[i], expected);
      all += ReadFile(out + "/" + parts[i]);
    }
    if (reducers > 0) {
      EXPECT_EQ(parts.size(), static_cast<size_t>(reducers));
    }
    return all;
  }

  std::string Oracle(const std::string& script) { return Shell(dir_, script); }

  // The job with 1 and 3 reducers against the script's output, as sorted
  // lines.
  void ExpectMatches(const std::string& job, const std::vector<std::string>& inputs,
                     const std::vector<std::string>& files, const std::string& script,
                     int64_t split_bytes, const Params& params = {}) {
    const std::vector<std::string> want = SortedLines(Oracle(script));
    EXPECT_GT(want.size(), 0u) << "the oracle found nothing: a vacuous test";
    for (int reducers : {1, 3}) {
      SCOPED_TRACE(job + " reducers=" + std::to_string(reducers));
      EXPECT_TRUE(SameLines(SortedLines(Run(job, inputs, reducers, split_bytes, params)), want));
    }
  }

  std::string dir_;
  int runs_ = 0;
};

constexpr int64_t kSmallSplit = 1000;

TEST_F(LocalRunnerTest, WordCountMatchesTrSortUniq) {
  const std::vector<std::string> files = {Input("a.txt", GenerateText(1, 1500)),
                                          Input("b.txt", GenerateText(2, 300))};
  ExpectMatches("wordcount", files, files, WordCountScript(files), kSmallSplit);
  // Without the combiner the answer is the same.
  ExpectMatches("wordcount", files, files, WordCountScript(files), kSmallSplit,
                {{"combiner", "false"}});
}

// A job that ships jobs/oracles/NAME.sh (the convention of tests/grade.sh
// and docs/writing-a-job.md, "Its oracle") is checked against it here, with
// its defaults and with combiner=false when it has that param: a student's
// job and oracle run in ./tests/run.sh with no test edits.
TEST_F(LocalRunnerTest, EveryShippedOracleMatches) {
  const char* src = std::getenv("MR_SOURCE_DIR");
  ASSERT_NE(src, nullptr) << "MR_SOURCE_DIR is not set (ctest sets it)";
  const std::vector<std::string> files = {Input("o1.txt", GenerateText(40, 1500)),
                                          Input("o2.txt", GenerateText(41, 300))};
  int shipped = 0;
  for (const JobInfo* info : RegisteredJobs()) {
    const std::string oracle = std::string(src) + "/jobs/oracles/" + info->name + ".sh";
    if (!fs::exists(oracle)) continue;
    ++shipped;
    ExpectMatches(info->name, files, files, "bash '" + oracle + "'" + Quoted(files), kSmallSplit);
    for (const ParamSpec& p : info->params) {
      if (p.name != "combiner") continue;
      ExpectMatches(info->name, files, files, "bash '" + oracle + "'" + Quoted(files), kSmallSplit,
                    {{"combiner", "false"}});
    }
  }
  EXPECT_GE(shipped, 1) << "jobs/oracles/wordcount.sh, the convention's example, is missing";
}

TEST_F(LocalRunnerTest, GrepMatchesGrepO) {
  // [A-Za-z]*ing means the same in RE2 and POSIX ERE (one greedy run: the
  // leftmost match is also the longest).
  const std::vector<std::string> files = {Input("a.txt", GenerateText(3, 1500))};
  ExpectMatches("grep", files, files, GrepScript(files, "[A-Za-z]*ing"), kSmallSplit,
                {{"pattern", "[A-Za-z]*ing"}});
}

TEST_F(LocalRunnerTest, GrepOfALiteralMatchesGrepO) {
  // Plain literals take Grep's memmem path (jobs/grep.cc); grep -o counts
  // the same non-overlapping matches.
  const std::vector<std::string> files = {Input("a.txt", GenerateText(3, 1500))};
  for (const char* literal : {"the", "in", "ing t"}) {
    ExpectMatches("grep", files, files, GrepScript(files, literal), kSmallSplit,
                  {{"pattern", literal}});
  }
}

TEST_F(LocalRunnerTest, SortMatchesSortByteForByte) {
  // No re-sorting here: part files in order must be exactly `sort`'s
  // output of the lines, including duplicates and empty lines; "\r\n" and
  // lone '\r' end lines like '\n'.
  const std::vector<std::string> files = {Input("a.txt", GenerateText(4, 1500)),
                                          Input("b.txt", GenerateText(5, 500))};
  const std::string want = Oracle(SortScript(files));
  for (int reducers : {1, 3, 7}) {
    SCOPED_TRACE(reducers);
    EXPECT_TRUE(SameBytes(Run("sort", files, reducers, kSmallSplit), want));
  }
}

TEST_F(LocalRunnerTest, SortSpreadsLinesOverReducers) {
  // The sampled split points should give every reducer a share.
  const std::string file = Input("a.txt", GenerateText(6, 3000));
  const std::string out = dir_ + "/spread";
  ASSERT_TRUE(RunLocal("sort", {file}, out, {4, 4096, {}}).ok());
  for (int r = 0; r < 4; ++r) {
    const auto bytes = fs::file_size(out + "/part-0000" + std::to_string(r));
    EXPECT_GT(bytes, fs::file_size(file) / 16) << "reducer " << r;
  }
}

TEST_F(LocalRunnerTest, PermuMatchesAwk) {
  // Lines of 1-3 bases in 1000-byte splits: many triples start in one split
  // and end in the next.
  const std::vector<std::string> files = {Input("a.fasta", GenerateFasta(7, 6000)),
                                          Input("b.fasta", GenerateFasta(8, 500))};
  ExpectMatches("permu", files, files, PermuScript(files), kSmallSplit);
  ExpectMatches("permu", files, files, PermuScript(files), kSmallSplit, {{"combiner", "true"}});
}

TEST_F(LocalRunnerTest, SequenceCountMatchesAwk) {
  const std::vector<std::string> files = {Input("a.txt", GenerateText(9, 1500))};
  ExpectMatches("sequencecount", files, files, SequenceCountScript(files), kSmallSplit);
}

TEST_F(LocalRunnerTest, InvertedIndexOverADirectoryMatchesAwk) {
  // A directory input means its visible files: ".hidden" and "_SUCCESS" are
  // not input, so the oracle does not see them either.
  std::vector<std::string> files;
  for (int i = 0; i < 4; ++i) {
    files.push_back(Input("in/doc" + std::to_string(i) + ".txt", GenerateText(10 + i, 200 * i)));
  }
  Input("in/.hidden", "secret words\n");
  Input("in/_SUCCESS", "marker\n");
  ExpectMatches("invertedindex", {dir_ + "/in"}, files, InvertedIndexScript(files), kSmallSplit);
  ExpectMatches("invertedindex", {dir_ + "/in"}, files, InvertedIndexScript(files), kSmallSplit,
                {{"combiner", "false"}});
}

TEST_F(LocalRunnerTest, MapOnlyWritesEachMapTasksOutputInOrder) {
  // reducers == 0: no sort, no combiner, one part-m file per split, in
  // input order, so the concatenation is the map output in file order.
  const std::string text = GenerateText(14, 400);
  const std::string file = Input("a.txt", text);
  const std::string want = Oracle(WordsScript({file}) + R"( | sed 's/$/\t1/')");
  const std::string out = dir_ + "/maponly";
  ASSERT_TRUE(RunLocal("wordcount", {file}, out, {0, kSmallSplit, {}}).ok());
  size_t parts = 0;
  std::string all;
  for (;; ++parts) {
    char name[32];
    std::snprintf(name, sizeof(name), "/part-m-%05zu", parts);
    if (!fs::exists(out + name)) break;
    all += ReadFile(out + name);
  }
  EXPECT_EQ(parts, (text.size() + kSmallSplit - 1) / kSmallSplit);
  EXPECT_TRUE(SameBytes(all, want));
  // Sort map-only is the identity on lines (each then ends in '\n').
  EXPECT_TRUE(SameBytes(Run("sort", {file}, 0, 777), Oracle(LinesScript(Quoted({file})))));
}

TEST_F(LocalRunnerTest, EmptyInputGivesEmptyParts) {
  // An empty file has no splits: every reducer still writes its (empty)
  // part file, and a map-only job writes none.
  const std::string empty = Input("empty.txt", "");
  fs::create_directories(dir_ + "/emptydir");
  for (const char* job : {"wordcount", "sort", "permu"}) {
    EXPECT_EQ(Run(job, {empty}, 3, kSmallSplit), "");
    EXPECT_EQ(Run(job, {dir_ + "/emptydir"}, 2, kSmallSplit), "");
    EXPECT_EQ(Run(job, {empty}, 0, kSmallSplit), "");
  }
}

TEST_F(LocalRunnerTest, LineLongerThanManySplits) {
  // The 20000-byte line belongs to the first split; the 19 splits it covers
  // must produce nothing, and the lines after it must not be lost.
  const std::string big(20000, 'q');
  const std::string file = Input("long.txt", "b a\n" + big + " z\nc\n" + big + "\n");
  EXPECT_TRUE(
      SameBytes(Run("sort", {file}, 3, kSmallSplit), "b a\nc\n" + big + "\n" + big + " z\n"));
  EXPECT_EQ(SortedLines(Run("wordcount", {file}, 2, kSmallSplit)),
            SortedLines("a\t1\nb\t1\nc\t1\nz\t1\n" + big + "\t2\n"));
}

TEST_F(LocalRunnerTest, Errors) {
  const std::string file = Input("a.txt", "x\n");
  Status s = RunLocal("wordcount", {dir_ + "/missing.txt"}, dir_ + "/o1", {});
  EXPECT_TRUE(s.IsNotFound()) << s.ToString();
  EXPECT_NE(s.message().find(dir_ + "/missing.txt"), std::string::npos) << s.message();

  fs::create_directories(dir_ + "/exists");
  s = RunLocal("wordcount", {file}, dir_ + "/exists", {});
  EXPECT_TRUE(s.IsAlreadyExists()) << s.ToString();

  s = RunLocal("nosuchjob", {file}, dir_ + "/o2", {});
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  s = RunLocal("grep", {file}, dir_ + "/o3", {});
  EXPECT_EQ(s.message(), "job 'grep': parameter 'pattern' is required");
  s = RunLocal("wordcount", {file}, dir_ + "/o4", {.reducers = -1, .params = {}});
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  s = RunLocal("wordcount", {file}, dir_ + "/o5", {.split_bytes = 0, .params = {}});
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  // A failed run leaves no output directory behind when it fails early.
  EXPECT_FALSE(fs::exists(dir_ + "/o2"));
}

// ---------------------------------------------------------- real data

// $MR_SOURCE_DIR/../shared/data. Without MR_SOURCE_DIR the source tree is
// found from this file's path (ctest does not always pass the variable on).
std::string DataDir() {
  if (const char* source = std::getenv("MR_SOURCE_DIR")) {
    return std::string(source) + "/../shared/data";
  }
  const std::string self = __FILE__;  // <source>/tests/jobs/local_runner_test.cc
  return fs::path(self).parent_path().parent_path().parent_path().string() + "/../shared/data";
}

// A few books: small ones, and one with a BOM and CRLFs like all of them.
std::vector<std::string> Books() {
  std::vector<std::string> books;
  for (const char* name : {"carroll_alices_adventures_in_wonderland.txt",
                           "dickens_a_christmas_carol.txt", "austen_persuasion.txt"}) {
    const std::string path = DataDir() + "/books/" + name;
    if (fs::exists(path)) books.push_back(path);
  }
  return books;
}

constexpr int64_t kRealSplit = 64 << 10;

TEST_F(LocalRunnerTest, RealBooksWordCountGrepSequenceCount) {
  const std::vector<std::string> books = Books();
  if (books.size() < 3) GTEST_SKIP() << "no books in " << DataDir();
  ExpectMatches("wordcount", books, books, WordCountScript(books), kRealSplit);
  ExpectMatches("grep", books, books, GrepScript(books, "[A-Z][a-z]*ing"), kRealSplit,
                {{"pattern", "[A-Z][a-z]*ing"}});
  ExpectMatches("sequencecount", books, books, SequenceCountScript(books), kRealSplit);
}

TEST_F(LocalRunnerTest, RealBooksSortAndInvertedIndex) {
  const std::vector<std::string> books = Books();
  if (books.size() < 3) GTEST_SKIP() << "no books in " << DataDir();
  EXPECT_TRUE(SameBytes(Run("sort", books, 3, kRealSplit), Oracle(SortScript(books))));
  ExpectMatches("invertedindex", books, books, InvertedIndexScript(books), kRealSplit);
}

TEST_F(LocalRunnerTest, RealDnaPermu) {
  std::vector<std::string> fasta;
  const std::string dna = DataDir() + "/dna";
  if (fs::is_directory(dna)) {
    for (const auto& e : fs::directory_iterator(dna)) {
      if (e.path().extension() == ".fasta") fasta.push_back(e.path().string());
    }
  }
  if (fasta.empty()) GTEST_SKIP() << "no FASTA in " << dna;
  std::sort(fasta.begin(), fasta.end());
  ExpectMatches("permu", fasta, fasta, PermuScript(fasta), 1 << 20);
}

TEST_F(LocalRunnerTest, RealWikipediaGrepTags) {
  std::vector<std::string> xml;
  const std::string wiki = DataDir() + "/wikipedia";
  if (fs::is_directory(wiki)) {
    for (const auto& e : fs::directory_iterator(wiki)) {
      if (e.path().extension() == ".xml") xml.push_back(e.path().string());
    }
  }
  if (xml.empty()) GTEST_SKIP() << "no XML in " << wiki;
  std::sort(xml.begin(), xml.end());
  ExpectMatches("grep", xml, xml, GrepScript(xml, "</?[a-z]+>"), 256 << 10,
                {{"pattern", "</?[a-z]+>"}});
}

}  // namespace
}  // namespace mr::jobs

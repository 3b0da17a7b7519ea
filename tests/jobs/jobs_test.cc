// Each built-in job's Map, Reduce and Partition on small inputs computed by
// hand, and the registry's lookups and errors.
#include <gtest/gtest.h>
#include <xxhash.h>

#include <algorithm>
#include <memory>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "jobs/job.h"
#include "jobs/job_util.h"

namespace mr::jobs {
namespace {

using Pairs = std::vector<std::pair<std::string, std::string>>;

class CollectEmitter : public Emitter {
 public:
  void Emit(std::string_view key, std::string_view value) override {
    pairs.emplace_back(key, value);
  }
  Pairs pairs;
};

class VectorValues : public ValueStream {
 public:
  explicit VectorValues(std::vector<std::string> values) : values_(std::move(values)) {}
  bool Next(std::string_view* value) override {
    if (next_ == values_.size()) return false;
    *value = values_[next_++];
    return true;
  }

 private:
  std::vector<std::string> values_;
  size_t next_ = 0;
};

std::unique_ptr<Job> Make(std::string_view name, const Params& params = {}) {
  Result<std::unique_ptr<Job>> job = MakeJob(name, params);
  EXPECT_TRUE(job.ok()) << job.status().ToString();
  return job.ok() ? std::move(job).value() : nullptr;
}

// Map over `lines` (all in the split, offsets made up), then FinishMap.
Pairs MapLines(Job& job, const std::vector<std::string>& lines, std::string_view file = "f") {
  CollectEmitter out;
  int64_t offset = 0;
  for (const std::string& line : lines) {
    job.Map(line, LineInfo{file, offset, true}, out);
    offset += line.size() + 1;
  }
  job.FinishMap(out);
  return out.pairs;
}

Pairs ReduceOne(Job& job, std::string_view key, std::vector<std::string> values) {
  CollectEmitter out;
  VectorValues stream(std::move(values));
  job.Reduce(key, stream, out);
  return out.pairs;
}

std::vector<std::string> Keys(const Pairs& pairs) {
  std::vector<std::string> keys;
  for (const auto& [k, v] : pairs) keys.push_back(k);
  return keys;
}

using Strings = std::vector<std::string>;

// ------------------------------------------------------------------ registry

TEST(JobRegistryTest, ListsTheJobsSortedByNameWithTheBuiltinsAmongThem) {
  // `mrctl jobs` and error messages show this list; its order must be stable.
  // A student's job added to jobs/registry.cc joins the list: only the
  // built-ins are required to be there.
  std::vector<std::string> names;
  for (const JobInfo* info : RegisteredJobs()) names.push_back(info->name);
  EXPECT_TRUE(std::is_sorted(names.begin(), names.end()));
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end()) << "a name twice";
  for (const char* builtin : {"grep", "invertedindex", "permu", "sequencecount", "sort", "wordcount"}) {
    EXPECT_NE(std::find(names.begin(), names.end(), builtin), names.end()) << builtin;
  }
  for (const JobInfo* info : RegisteredJobs()) {
    EXPECT_EQ(FindJob(info->name), info);
    EXPECT_FALSE(info->description.empty());
    // The master keys its filtering-percentage table by this hash (JoSS Fig. 4).
    EXPECT_EQ(info->code_hash.size(), 16u) << info->name;
    EXPECT_EQ(info->code_hash.find_first_not_of("0123456789abcdef"), std::string::npos);
  }
  EXPECT_EQ(FindJob("nope"), nullptr);
}

TEST(JobRegistryTest, CodeHashesDifferBetweenJobs) {
  // Two jobs sharing a hash would share FP history.
  std::vector<std::string> hashes;
  for (const JobInfo* info : RegisteredJobs()) hashes.push_back(info->code_hash);
  std::sort(hashes.begin(), hashes.end());
  EXPECT_EQ(std::unique(hashes.begin(), hashes.end()), hashes.end());
}

TEST(JobRegistryTest, UnknownJobListsTheValidOnes) {
  // A typo must tell the user what exists.
  Result<std::unique_ptr<Job>> job = MakeJob("wordcont", {});
  ASSERT_FALSE(job.ok());
  EXPECT_TRUE(job.status().IsInvalidArgument());
  // Every registered job, in registry order (a student's too).
  std::string names;
  for (const JobInfo* info : RegisteredJobs()) names += (names.empty() ? "" : ", ") + info->name;
  EXPECT_EQ(job.status().message(), "unknown job 'wordcont' (jobs: " + names + ")");
}

TEST(JobRegistryTest, UnknownParameterListsTheJobsParameters) {
  Result<std::unique_ptr<Job>> job = MakeJob("grep", {{"pattern", "a"}, {"patern", "a"}});
  ASSERT_FALSE(job.ok());
  EXPECT_EQ(job.status().message(), "job 'grep': unknown parameter 'patern' (parameters: pattern)");
}

TEST(JobRegistryTest, RequiredParameterMustBeGiven) {
  // Grep without a pattern has nothing to do; say so before any task runs.
  for (const Params& params : {Params{}, Params{{"pattern", ""}}}) {
    Result<std::unique_ptr<Job>> job = MakeJob("grep", params);
    ASSERT_FALSE(job.ok());
    EXPECT_TRUE(job.status().IsInvalidArgument());
    EXPECT_EQ(job.status().message(), "job 'grep': parameter 'pattern' is required");
  }
}

TEST(JobRegistryTest, ResolveParamsFillsDefaults) {
  Result<Params> p = ResolveParams(*FindJob("wordcount"), {});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p, (Params{{"combiner", "true"}}));
  p = ResolveParams(*FindJob("permu"), {{"combiner", "true"}});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(*p, (Params{{"combiner", "true"}}));
}

TEST(JobRegistryTest, BadBooleanIsRejectedByConfigure) {
  Result<std::unique_ptr<Job>> job = MakeJob("wordcount", {{"combiner", "yes"}});
  ASSERT_FALSE(job.ok());
  EXPECT_TRUE(job.status().IsInvalidArgument());
  EXPECT_EQ(job.status().message(),
            "job 'wordcount': parameter 'combiner' must be true or false, not 'yes'");
}

// ------------------------------------------------------------------ defaults

TEST(JobDefaultsTest, PartitionIsXxh3ModReducers) {
  // Every worker must send a key to the same reducer: the hash is fixed.
  auto job = Make("wordcount");
  for (std::string key :
       {std::string(), std::string("a"), std::string("hello"), std::string("\xff\x00z", 3)}) {
    for (int r : {1, 2, 7, 1000}) {
      EXPECT_EQ(job->Partition(key, r), static_cast<int>(XXH3_64bits(key.data(), key.size()) % r));
    }
  }
}

TEST(JobDefaultsTest, WriteOutputIsKeyTabValueNewline) {
  std::string out = "x";
  Make("wordcount")->WriteOutput("k", "v", &out);
  EXPECT_EQ(out, "xk\tv\n");
}

TEST(JobDefaultsTest, CombinerKindIsSumCountsExactlyForTheCountingJobs) {
  // A job that declares kSumCounts must combine exactly as SumCounts does:
  // non-counts add nothing, the sum wraps, the result is std::to_string.
  const std::vector<std::string> values = {
      "1", "12", "x", "", "+3", "9223372036854775807", "1", "-5", "007", "99999999999999999999"};
  const Pairs want = {{"k", "-9223372036854775793"}};  // INT64_MAX + 16, wrapped
  for (const auto& [name, params] :
       std::vector<std::pair<std::string, Params>>{{"wordcount", {}},
                                                   {"grep", {{"pattern", "a"}}},
                                                   {"sequencecount", {}},
                                                   {"permu", {{"combiner", "true"}}}}) {
    auto job = Make(name, params);
    ASSERT_TRUE(job->has_combiner()) << name;
    EXPECT_EQ(job->combiner_kind(), CombinerKind::kSumCounts) << name;
    CollectEmitter out;
    VectorValues stream(values);
    job->Combine("k", stream, out);
    EXPECT_EQ(out.pairs, want) << name;
  }
  EXPECT_EQ(Make("sort")->combiner_kind(), CombinerKind::kGeneric);
  EXPECT_EQ(Make("invertedindex")->combiner_kind(), CombinerKind::kGeneric);
}

// ----------------------------------------------------------------- WordCount

TEST(WordCountTest, SplitsOnExactlyTheAsciiWhitespace) {
  // \v and \f separate as the C locale's isspace says; a UTF-8 no-break
  // space (C2 A0) and other bytes do not; no case folding.
  auto job = Make("wordcount");
  Pairs pairs = MapLines(*job, {" a\tb\vc\fd\re  f ", "x\xC2\xA0y The the, the", ""});
  EXPECT_EQ(Keys(pairs),
            (Strings{"a", "b", "c", "d", "e", "f", "x\xC2\xA0y", "The", "the,", "the"}));
  for (const auto& [k, v] : pairs) EXPECT_EQ(v, "1");
}

// ForEachWord (64 bytes at a time with SSE2) splits exactly as the byte loop
// does: random lines of 0..300 bytes drawn from every separator, the bytes
// next to them (0x08, 0x0E, 0x1F, 0x21), NUL, 0x7F and bytes >= 0x80, with
// runs of words and of separators long enough to cross 64-byte chunks.
TEST(WordCountTest, WordSplitterAgreesWithTheByteLoop) {
  const std::string alphabet("\t\n\v\f\r \x08\x0E\x1F\x21\0\x7F\x80\xA0\xFFab", 17);
  std::mt19937_64 rng(7);
  int lines = 0;
  for (; lines < 20000; ++lines) {
    std::string line;
    const size_t n = rng() % 301;
    const bool runs = rng() % 4 == 0;  // long words or long gaps
    while (line.size() < n) {
      const char c = alphabet[rng() % alphabet.size()];
      line.append(runs ? 1 + rng() % 90 : 1, c);
    }
    line.resize(n);
    std::vector<std::string_view> want, got;
    ForEachWordScalar(line, [&](std::string_view w) { want.push_back(w); });
    ForEachWord(line, [&](std::string_view w) { got.push_back(w); });
    ASSERT_EQ(got, want) << "line " << lines << " of " << n << " bytes";
  }
  // A word that fills a chunk, then one that ends with the line.
  const std::string line = std::string(64, 'a') + " " + std::string(63, 'b');
  std::vector<std::string> words;
  ForEachWord(line, [&](std::string_view w) { words.emplace_back(w); });
  EXPECT_EQ(words, (std::vector<std::string>{std::string(64, 'a'), std::string(63, 'b')}));
}

TEST(WordCountTest, ReduceSumsCounts) {
  // The combiner's partial sums arrive as values too.
  auto job = Make("wordcount");
  EXPECT_EQ(ReduceOne(*job, "w", {"1", "12", "1"}), (Pairs{{"w", "14"}}));
}

TEST(WordCountTest, CombinerParameter) {
  EXPECT_TRUE(Make("wordcount")->has_combiner());
  EXPECT_FALSE(Make("wordcount", {{"combiner", "false"}})->has_combiner());
}

// ---------------------------------------------------------------------- Grep

TEST(GrepTest, CountsEveryNonOverlappingMatch) {
  auto job = Make("grep", {{"pattern", "o+"}});
  EXPECT_EQ(MapLines(*job, {"foo boo", "xo"}), (Pairs{{"oo", "1"}, {"oo", "1"}, {"o", "1"}}));
  job = Make("grep", {{"pattern", "aba"}});
  EXPECT_EQ(Keys(MapLines(*job, {"ababa abababa"})), (Strings{"aba", "aba", "aba"}));
}

TEST(GrepTest, EmptyMatchesAreSkipped) {
  // "a*" matches the empty string everywhere; only non-empty runs count,
  // and skipping an empty match must not lose the run right after it.
  auto job = Make("grep", {{"pattern", "a*"}});
  EXPECT_EQ(Keys(MapLines(*job, {"baaab", "", "a", "bab"})), (Strings{"aaa", "a", "a"}));
}

TEST(GrepTest, AnchorsKeepTheLineContext) {
  // After the first match the search continues in the same line: ^ must not
  // match again there.
  auto job = Make("grep", {{"pattern", "^a"}});
  EXPECT_EQ(Keys(MapLines(*job, {"aaa"})), (Strings{"a"}));
}

TEST(GrepTest, LiteralPatternsMatchAsTheRegexDoes) {
  // A plain literal is searched for without RE2 (jobs/grep.cc); the same
  // pattern wrapped in a group goes through RE2. Both must emit the same.
  const std::vector<std::string> lines = {
      "the cat and the hat", "thethe", "tthe th", "", "th", "the\xff\xfethe\xC3\xA9the",
      "aaaaa", "a b  a b", "THE The the", std::string("x\0the", 5), "ends with the"};
  for (const char* literal : {"the", "aa", "a b", "e", "hat!", "x@y#z"}) {
    auto fast = Make("grep", {{"pattern", literal}});
    auto re = Make("grep", {{"pattern", std::string("(?:") + literal + ")"}});
    EXPECT_EQ(MapLines(*fast, lines), MapLines(*re, lines)) << literal;
  }
  // Metacharacters still mean what RE2 says.
  auto dot = Make("grep", {{"pattern", "a.b"}});
  EXPECT_EQ(Keys(MapLines(*dot, {"axb a.b"})), (Strings{"axb", "a.b"}));
}

// Grep's literal over a block of text (MapLines) emits one ("literal", "1")
// per non-overlapping match, leftmost first: the count a std::string::find
// loop that resumes after each match gives. Random text from a small
// alphabet, long enough for many 16-byte chunks; needles that overlap
// themselves ("aa", "aba") and longer than 3 bytes (checked between).
TEST(GrepTest, LiteralCountIsAFindLoopsCount) {
  std::mt19937_64 rng(4);
  for (const char* literal : {"a", "aa", "aaa", "aba", "the", "ab", "abaab", "thethe", "a ba", "b a b a b"}) {
    auto job = Make("grep", {{"pattern", literal}});
    for (int round = 0; round < 40; ++round) {
      std::string text(rng() % 3000, '\0');
      for (char& c : text) c = "abthe "[rng() % (round % 2 ? 6 : 3)];
      const std::string needle = literal;
      size_t want = 0;
      for (size_t at = text.find(needle); at != std::string::npos; at = text.find(needle, at + needle.size())) {
        ++want;
      }
      CollectEmitter out;
      job->MapLines(text, LineInfo{"f", 0, true}, out);
      ASSERT_EQ(out.pairs.size(), want) << literal << " in " << text;
      for (const auto& [key, value] : out.pairs) ASSERT_TRUE(key == needle && value == "1");
    }
  }
}

// A job that lets the map task pass many lines at once (MapKind other than
// kLines) must emit from MapLines exactly what Map emits line by line:
// random lines (words, separators, bytes >= 0x80, runs long enough to cross
// 16- and 64-byte chunks) joined by random terminators.
TEST(MapKindTest, MapLinesEmitsWhatMapEmitsLineByLine) {
  const std::string alphabet("the cat\t\v\f\x80\xff" "aT", 14);
  std::mt19937_64 rng(29);
  const std::vector<std::pair<std::string, Params>> jobs = {
      {"wordcount", {}},
      {"grep", {{"pattern", "the"}}},
      {"grep", {{"pattern", "e"}}},
      {"grep", {{"pattern", "tt"}}},
      {"grep", {{"pattern", "the cat the"}}},
      {"grep", {{"pattern", "aaaaaaaaaaaaaaaaaaaa"}}}};
  for (const auto& [name, params] : jobs) {
    SCOPED_TRACE(name + " " + (params.empty() ? "" : params.begin()->second));
    for (int round = 0; round < 300; ++round) {
      std::vector<std::string> lines;
      std::string text;
      const int n = rng() % 12;
      for (int l = 0; l < n; ++l) {
        std::string line;
        const size_t len = rng() % (rng() % 4 == 0 ? 200 : 40);
        while (line.size() < len) line.append(rng() % 5 == 0 ? 1 + rng() % 30 : 1, alphabet[rng() % alphabet.size()]);
        line.resize(len);
        lines.push_back(line);
        static const char* const kEnds[] = {"\n", "\r\n", "\r"};
        text += line + (l + 1 < n || rng() % 2 ? kEnds[rng() % 3] : "");
      }
      auto by_line = Make(name, params);
      auto by_block = Make(name, params);
      ASSERT_NE(by_block->map_kind(), MapKind::kLines);
      CollectEmitter out;
      by_block->MapLines(text, LineInfo{"f", 0, true}, out);
      by_block->FinishMap(out);
      ASSERT_EQ(out.pairs, MapLines(*by_line, lines)) << testing::PrintToString(text);
    }
  }
}

TEST(MapKindTest, OnlyJobsThatIgnoreLineEndsTakeBlocks) {
  EXPECT_EQ(Make("wordcount")->map_kind(), MapKind::kCountWords);
  EXPECT_EQ(Make("grep", {{"pattern", "the"}})->map_kind(), MapKind::kLineBlocks);
  // A regular expression may see the line's ends (^, $, \s): line by line.
  EXPECT_EQ(Make("grep", {{"pattern", "(?:the)"}})->map_kind(), MapKind::kLines);
  EXPECT_EQ(Make("grep", {{"pattern", "^the"}})->map_kind(), MapKind::kLines);
  for (const char* name : {"sort", "invertedindex", "sequencecount"}) {
    EXPECT_EQ(Make(name)->map_kind(), MapKind::kLines) << name;
  }
}

TEST(GrepTest, BadRegexIsInvalidArgumentWithRe2sMessage) {
  Result<std::unique_ptr<Job>> job = MakeJob("grep", {{"pattern", "(a"}});
  ASSERT_FALSE(job.ok());
  EXPECT_TRUE(job.status().IsInvalidArgument());
  EXPECT_EQ(job.status().message(), "job 'grep': parameter 'pattern': missing ): (a");
}

TEST(GrepTest, ConfigureWithoutResolvedParamsIsAnErrorNotAThrow) {
  // A host that skips ResolveParams() must get a Status, never an exception.
  std::unique_ptr<Job> job = FindJob("grep")->make();
  Status s = job->Configure({});
  EXPECT_TRUE(s.IsInvalidArgument()) << s.ToString();
  EXPECT_TRUE(FindJob("sort")->make()->Configure({}).ok());
}

TEST(GrepTest, ReduceSumsAndCombinerIsOn) {
  auto job = Make("grep", {{"pattern", "x"}});
  EXPECT_TRUE(job->has_combiner());
  EXPECT_EQ(ReduceOne(*job, "x", {"2", "3"}), (Pairs{{"x", "5"}}));
}

// ---------------------------------------------------------------------- Sort

TEST(SortTest, MapKeepsLinesAndReduceKeepsDuplicates) {
  auto job = Make("sort");
  EXPECT_EQ(MapLines(*job, {"b", "", "a\tc"}), (Pairs{{"b", ""}, {"", ""}, {"a\tc", ""}}));
  EXPECT_EQ(ReduceOne(*job, "x", {"", "", ""}), (Pairs{{"x", ""}, {"x", ""}, {"x", ""}}));
  std::string out;
  job->WriteOutput("line", "", &out);
  EXPECT_EQ(out, "line\n");
}

TEST(SortTest, PlanPicksQuantilesAndPartitionIsMonotone) {
  // The part files are only one sorted file if partition numbers never go
  // down as keys go up, and the split points should spread keys evenly.
  std::mt19937_64 rng(7);
  std::vector<std::string> keys;
  for (int i = 0; i < 3000; ++i) {
    std::string k;
    for (int n = 1 + rng() % 6; n > 0; --n) k.push_back(static_cast<char>(rng() % 256));
    keys.push_back(k);
  }
  for (int reducers : {1, 2, 3, 8}) {
    SCOPED_TRACE(reducers);
    Params params;
    ASSERT_TRUE(Make("sort")->Plan(keys, reducers, &params).ok());
    if (reducers == 1) {
      EXPECT_EQ(params["split_points"], "");  // one part file needs no points
    }
    auto job = Make("sort", params);
    ASSERT_NE(job, nullptr);
    std::vector<std::string> sorted = keys;
    std::sort(sorted.begin(), sorted.end());
    std::vector<int> count(reducers);
    int last = 0;
    for (const std::string& k : sorted) {
      const int p = job->Partition(k, reducers);
      ASSERT_GE(p, last) << testing::PrintToString(k);
      ASSERT_LT(p, reducers);
      last = p;
      ++count[p];
    }
    for (int c : count) EXPECT_NEAR(c, 3000.0 / reducers, 3000.0 / reducers / 4);
  }
}

TEST(SortTest, PlanBalancesBytesNotLines) {
  // Text: many empty lines (sorting first) and long ones. Equal line counts
  // would give reducer 0 the empty lines and a few long ones, a small share
  // of the bytes; the points must split the output bytes evenly.
  std::mt19937_64 rng(15);
  std::vector<std::string> lines;
  for (int i = 0; i < 4000; ++i) {
    std::string line;
    if (rng() % 3 != 0) {  // two thirds are lines of 40..80 letters
      for (int n = 40 + rng() % 41; n > 0; --n) line.push_back(static_cast<char>('a' + rng() % 26));
    }
    lines.push_back(line);
  }
  for (int reducers : {2, 3}) {
    SCOPED_TRACE(reducers);
    Params params;
    ASSERT_TRUE(Make("sort")->Plan(lines, reducers, &params).ok());
    auto job = Make("sort", params);
    ASSERT_NE(job, nullptr);
    std::vector<double> bytes(reducers);
    double total = 0;
    for (const std::string& l : lines) {
      bytes[job->Partition(l, reducers)] += l.size() + 1;
      total += l.size() + 1;
    }
    for (double b : bytes) EXPECT_NEAR(b / total, 1.0 / reducers, 0.02);
  }
}

TEST(SortTest, SplitPointsSurviveArbitraryBytes) {
  // Lines may hold ',', '\t', '\r' and bytes >= 0x80: the encoding must
  // carry them to every task.
  // Sorted, the sample is "\t,", "0\t1", "a,\r", "\xffz", "\xff\xfe"; with
  // 5 reducers the points are the last four.
  const std::vector<std::string> sample = {"a,\r", "\xff\xfe", "0\t1", "\t,", "\xffz"};
  Params params;
  ASSERT_TRUE(Make("sort")->Plan(sample, 5, &params).ok());
  auto job = Make("sort", params);
  ASSERT_NE(job, nullptr);
  EXPECT_EQ(job->Partition("", 5), 0);
  EXPECT_EQ(job->Partition("\t,", 5), 0);
  EXPECT_EQ(job->Partition("0\t1", 5), 1);  // equal to a point: above it (upper_bound)
  EXPECT_EQ(job->Partition("a,", 5), 1);
  EXPECT_EQ(job->Partition("a,\r", 5), 2);
  EXPECT_EQ(job->Partition("\xffz", 5), 3);
  EXPECT_EQ(job->Partition("\xff\xfe", 5), 4);
  EXPECT_EQ(job->Partition("\xff\xff", 5), 4);
}

TEST(SortTest, BadSplitPointsAreRejected) {
  for (std::string bad : {"6", "zz", "6A", "62,61", "61,61", "61,,62", "61,", ","}) {
    Result<std::unique_ptr<Job>> job = MakeJob("sort", {{"split_points", bad}});
    EXPECT_FALSE(job.ok()) << bad;
  }
}

// --------------------------------------------------------------------- Permu

TEST(PermuTest, TriplesStayInsideARecord) {
  // A header ends the record: no triple spans ">r2", and a record of two
  // lines has none. Headers themselves are never part of a key.
  auto job = Make("permu");
  EXPECT_EQ(
      Keys(MapLines(*job, {">r1", "A", "C", "G", "T", ">r2", "AA", "CC", ">r3", "G", "T", "TT"})),
      (Strings{"ACG", "CGT", "GTTT"}));
}

TEST(PermuTest, EmptyLineEndsTheRecord) {
  auto job = Make("permu");
  EXPECT_EQ(Keys(MapLines(*job, {"A", "C", "", "G", "T", "A"})), (Strings{"GTA"}));
}

TEST(PermuTest, TriplesAcrossASplitBoundaryBelongToTheFirstLine) {
  // Split 1 holds A C and sees G T as lookahead; split 2 holds G T A. Each
  // triple must come out of exactly one split: the one its first line is in.
  EXPECT_EQ(Make("permu")->lookahead_lines(), 2);
  auto split1 = Make("permu");
  CollectEmitter out1;
  split1->Map("A", {"f", 0, true}, out1);
  split1->Map("C", {"f", 2, true}, out1);
  split1->Map("G", {"f", 4, false}, out1);
  split1->Map("T", {"f", 6, false}, out1);
  EXPECT_EQ(Keys(out1.pairs), (Strings{"ACG", "CGT"}));

  auto split2 = Make("permu");
  EXPECT_EQ(Keys(MapLines(*split2, {"G", "T", "A"})), (Strings{"GTA"}));
}

TEST(PermuTest, HeaderInLookaheadEndsTheRecord) {
  auto job = Make("permu");
  CollectEmitter out;
  job->Map("A", {"f", 0, true}, out);
  job->Map("C", {"f", 2, true}, out);
  job->Map(">next", {"f", 4, false}, out);
  job->Map("G", {"f", 10, false}, out);
  EXPECT_TRUE(out.pairs.empty());
}

TEST(PermuTest, ReduceSumsAndCombinerIsOffByDefault) {
  EXPECT_FALSE(Make("permu")->has_combiner());
  EXPECT_TRUE(Make("permu", {{"combiner", "true"}})->has_combiner());
  EXPECT_EQ(ReduceOne(*Make("permu"), "ACG", {"1", "1"}), (Pairs{{"ACG", "2"}}));
}

// ------------------------------------------------------------- SequenceCount

TEST(SequenceCountTest, ThreeConsecutiveWordsWithinALine) {
  // Sequences never cross lines; any whitespace between words becomes one
  // space in the key.
  auto job = Make("sequencecount");
  EXPECT_EQ(Keys(MapLines(*job, {"a b\tc  d", "e f", "g h i"})),
            (Strings{"a b c", "b c d", "g h i"}));
  EXPECT_TRUE(job->has_combiner());
  EXPECT_EQ(ReduceOne(*job, "a b c", {"3", "1"}), (Pairs{{"a b c", "4"}}));
}

// ------------------------------------------------------------- InvertedIndex

TEST(InvertedIndexTest, MapEmitsTheFilesBaseName) {
  auto job = Make("invertedindex");
  EXPECT_EQ(MapLines(*job, {"to be"}, "/in/books/hamlet.txt"),
            (Pairs{{"to", "hamlet.txt"}, {"be", "hamlet.txt"}}));
  EXPECT_EQ(MapLines(*job, {"x"}, "plain"), (Pairs{{"x", "plain"}}));
}

TEST(InvertedIndexTest, ReduceMergesListsSortedAndUnique) {
  // Values are single names from Map or lists from the combiner; both merge.
  auto job = Make("invertedindex");
  EXPECT_TRUE(job->has_combiner());
  EXPECT_EQ(ReduceOne(*job, "w", {"b.txt", "a.txt,c.txt", "b.txt", "a.txt"}),
            (Pairs{{"w", "a.txt,b.txt,c.txt"}}));
  EXPECT_EQ(ReduceOne(*job, "w", {"Z", "a"}), (Pairs{{"w", "Z,a"}}));  // bytewise
}

}  // namespace
}  // namespace mr::jobs

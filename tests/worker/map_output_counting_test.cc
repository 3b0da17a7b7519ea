// MapOutputBuffer with sum_counts (worker/map_aggregate.h): counting in a
// hash table writes exactly what the generic sort-and-combine path writes,
// spills and merges, wraps like jobs::SumCounts, falls back when a value is
// not a count. The table alone: map_aggregate_test.cc.
#include <charconv>
#include <cstdint>
#include <cstring>
#include <map>
#include <random>
#include <string>
#include <vector>

#include "tests/worker/map_output_fixture.h"

namespace mr::worker {
namespace {

using namespace map_output_testing;

// --- Counting: sum_counts (map_aggregate.h) ----------------------------------

// Sums counts as jobs::SumCounts does, the contract of sum_counts: a value
// that is not a decimal int64 adds nothing; the sum wraps modulo 2^64.
int64_t SumOfCounts(int64_t sum, std::string_view v) {
  int64_t n = 0;
  auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
  if (ec != std::errc() || end != v.data() + v.size()) return sum;
  return static_cast<int64_t>(static_cast<uint64_t>(sum) + static_cast<uint64_t>(n));
}

CombineFn DecimalSumCombiner() {
  return [](std::string_view key, const NextValueFn& next, const EmitFn& emit) {
    int64_t sum = 0;
    std::string_view v;
    while (next(&v)) sum = SumOfCounts(sum, v);
    emit(key, std::to_string(sum));
  };
}

// A partition function of the key alone.
int PartitionOfKey(std::string_view key, int partitions) {
  return static_cast<int>(std::hash<std::string_view>()(key) % partitions);
}

// WordCount-like records: a skewed draw from `vocabulary` keys of every
// length class the table treats apart (empty, up to 8, 9 to 16 and over 16
// bytes, with NULs and bytes >= 0x80), mostly "1" with other counts between.
Records CountRecords(uint64_t seed, int n, int vocabulary) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> keys = {"", std::string("\0", 1), "a", std::string("a\0", 2)};
  while (static_cast<int>(keys.size()) < vocabulary) {
    std::string k(rng() % 40, '\0');
    for (char& c : k) c = "abcd\0\xF0"[rng() % 6];
    keys.push_back(std::move(k));
  }
  static const char* const kOther[] = {"0", "7", "-3", "12", "007", "1000000", "-0"};
  Records records;
  for (int i = 0; i < n; ++i) {
    const uint64_t a = rng() % keys.size(), b = rng() % keys.size();
    records.emplace_back(keys[std::min(a, b) * std::min(a, b) / keys.size()],
                         rng() % 10 ? "1" : kOther[rng() % 7]);
  }
  return records;
}

// What a buffer made of some records: its index and the output file.
struct Outcome {
  MapOutputIndex index;
  std::string bytes;
};

// How a test hands records to the buffer.
enum class Feed {
  kPartitioned,  // Add(PartitionOfKey(key), key, value)
  kKeyed,        // Add(key, value): options.partition decides
  kTryCount,     // TryCount(key, value, &status), else Add(key, value), as a map task does
};

class CountingTest : public MapOutputTest {
 protected:
  // Adds `records` as `feed` says and finishes; the buffer sums counts when
  // `sum_counts`.
  Outcome Run(const Records& records, int partitions, int64_t buffer, bool sum_counts, Feed feed) {
    MapOutputOptions o = Options(partitions, buffer);
    o.combiner = DecimalSumCombiner();
    o.sum_counts = sum_counts;
    o.partition = [partitions](std::string_view k) { return PartitionOfKey(k, partitions); };
    auto b = NewBuffer(o);
    if (!b) return {};
    for (const auto& [k, v] : records) {
      Status s;
      if (feed == Feed::kPartitioned) {
        s = b->Add(PartitionOfKey(k, partitions), k, v);
      } else if (feed == Feed::kKeyed || !b->TryCount(k, v, &s)) {
        s = b->Add(k, v);
      }
      if (!s.ok()) ADD_FAILURE() << s.ToString();
    }
    auto index = b->Finish(out_path());
    EXPECT_TRUE(index.ok()) << index.status().ToString();
    EXPECT_TRUE(fs::is_empty(spill_dir())) << "run files left behind";
    if (!index.ok()) return {};
    Outcome out{*index, ReadFile(out_path())};
    // The sums, read back, are what SumCounts makes of each key's values.
    std::vector<std::map<std::string, int64_t>> want(partitions);
    for (const auto& [k, v] : records) {
      int64_t& sum = want[PartitionOfKey(k, partitions)][k];
      sum = SumOfCounts(sum, v);
    }
    std::vector<Records> got = ReadOutput(*index);
    for (int p = 0; p < partitions; ++p) {
      Records expected;
      for (const auto& [k, sum] : want[p]) expected.emplace_back(k, std::to_string(sum));
      EXPECT_EQ(got[p], expected) << "partition " << p;
    }
    fs::remove(out_path());
    return out;
  }

  // Counting and the generic path give the same file and statistics.
  void ExpectSameAsGeneric(const Records& records, int partitions, int64_t buffer,
                           Feed feed = Feed::kPartitioned) {
    SCOPED_TRACE(std::to_string(partitions) + " partitions, " + std::to_string(buffer) +
                 "-byte buffer, feed " + std::to_string(static_cast<int>(feed)));
    const Outcome generic = Run(records, partitions, buffer, false, Feed::kPartitioned);
    const Outcome counted = Run(records, partitions, buffer, true, feed);
    EXPECT_TRUE(counted.bytes == generic.bytes) << "output files differ";
    EXPECT_EQ(counted.index.raw_bytes_in, generic.index.raw_bytes_in);
    EXPECT_EQ(counted.index.records_in, generic.index.records_in);
    EXPECT_EQ(counted.index.records_in, static_cast<int64_t>(records.size()));
    ASSERT_EQ(counted.index.segments.size(), generic.index.segments.size());
    for (size_t p = 0; p < counted.index.segments.size(); ++p) {
      EXPECT_EQ(counted.index.segments[p].raw_bytes, generic.index.segments[p].raw_bytes);
      EXPECT_EQ(counted.index.segments[p].records, generic.index.segments[p].records);
      EXPECT_EQ(counted.index.segments[p].compressed_bytes,
                generic.index.segments[p].compressed_bytes);
    }
  }
};

TEST_F(CountingTest, WritesWhatTheCombinerWouldOnGeneratedData) {
  const Records records = CountRecords(42, 30000, 3000);
  for (int partitions : {1, 7, 64}) {
    ExpectSameAsGeneric(records, partitions, 1 << 20);  // one pass, no run files
    // Many spills, merged (fewer with 64 partitions: each spill writes 64 frames).
    ExpectSameAsGeneric(records, partitions, partitions < 64 ? 8 << 10 : 128 << 10);
  }
  for (Feed feed : {Feed::kKeyed, Feed::kTryCount}) {
    ExpectSameAsGeneric(records, 5, 1 << 20, feed);
    ExpectSameAsGeneric(records, 5, 8 << 10, feed);
  }

  // A table of 3000 distinct keys fits where 30000 records do not.
  EXPECT_GT(Run(records, 7, 1 << 20, false, Feed::kPartitioned).index.spills, 1);
  EXPECT_EQ(Run(records, 7, 1 << 20, true, Feed::kPartitioned).index.spills, 1);
  EXPECT_GT(Run(records, 7, 8 << 10, true, Feed::kKeyed).index.spills, 10);
  EXPECT_GT(Run(records, 7, 8 << 10, true, Feed::kTryCount).index.spills, 10);
}

// TryCount takes one-digit counts while the buffer counts, and declines
// (changing nothing) otherwise: other values, after a value that is not a
// count stopped the counting, after Finish. (Its output and statistics equal
// Add's: Feed::kTryCount in the tests above and below.)
TEST_F(CountingTest, TryCountTakesOneDigitCountsWhileTheBufferCounts) {
  MapOutputOptions o = Options(1, 1 << 20);
  o.combiner = DecimalSumCombiner();
  o.sum_counts = true;
  o.partition = [](std::string_view) { return 0; };
  auto b = NewBuffer(o);
  ASSERT_TRUE(b);
  Status s;
  EXPECT_TRUE(b->TryCount("a", "1", &s));  // a new key: counted through the table
  EXPECT_TRUE(s.ok());
  EXPECT_TRUE(b->TryCount("a", "1", &s));  // an increment
  EXPECT_FALSE(b->TryCount("a", "12", &s));  // not one digit: Add's
  ASSERT_TRUE(b->Add("a", "12").ok());
  ASSERT_TRUE(b->Add("b", "x").ok());  // stops counting
  EXPECT_FALSE(b->TryCount("a", "1", &s));
  ASSERT_TRUE(b->Finish(out_path()).ok());
  EXPECT_FALSE(b->TryCount("a", "1", &s));  // finished
}

// Counting: a key counts once when it enters the table, as the combiner
// will emit it once — so without a spill the estimate is the output's size
// up to the counts' digits, and increments cost nothing.
TEST_F(CountingTest, PartitionProgressCountsEachKeyOnceWhileCounting) {
  MapOutputOptions o = Options(2, 1 << 20);
  o.combiner = DecimalSumCombiner();
  o.sum_counts = true;
  o.partition = [](std::string_view k) { return PartitionOfKey(k, 2); };
  auto b = NewBuffer(o);
  ASSERT_TRUE(b);
  for (int round = 0; round < 50; ++round) {
    for (const char* k : {"alpha", "beta", "gamma"}) ASSERT_TRUE(b->Add(k, "1").ok());
  }
  std::vector<int64_t> want(2, 0);
  for (const char* k : {"alpha", "beta", "gamma"}) {
    want[static_cast<size_t>(PartitionOfKey(k, 2))] += static_cast<int64_t>(std::strlen(k)) + 1;
  }
  EXPECT_EQ(b->partition_bytes_so_far(), want);
  auto index = b->Finish(out_path());
  ASSERT_TRUE(index.ok()) << index.status().ToString();
  for (size_t p = 0; p < 2; ++p) {
    // The output holds "50" where the estimate counted "1": one digit more per key.
    EXPECT_EQ(index->segments[p].raw_bytes, want[p] + index->segments[p].records);
  }
}

TEST_F(CountingTest, ManyDistinctKeysSpillAndMerge) {
  // Mostly distinct keys through a small table: every run is full of keys
  // the next run has again, some.
  Records records;
  std::mt19937_64 rng(9);
  for (int i = 0; i < 100000; ++i) records.emplace_back("k" + std::to_string(rng() % 50000), "1");
  ExpectSameAsGeneric(records, 3, 16 << 10);
}

TEST_F(CountingTest, HugeCountsWrapAsSumCountsDoes) {
  const std::string max = std::to_string(INT64_MAX), min = std::to_string(INT64_MIN);
  const Records records = {{"big", "4611686018427387904"},  // 2^62
                           {"big", "4611686018427387903"},
                           {"wrap", max},
                           {"wrap", "1"},
                           {"wrap", max},
                           {"low", min},
                           {"low", "-1"},
                           {"exact", max},
                           {"exact", "0"}};
  for (int64_t buffer : {int64_t{1} << 20, int64_t{64}}) {
    ExpectSameAsGeneric(records, 1, buffer);
    MapOutputOptions o = Options(1, buffer);
    o.combiner = DecimalSumCombiner();
    o.sum_counts = true;
    auto b = NewBuffer(o);
    ASSERT_TRUE(b);
    for (const auto& [k, v] : records) ASSERT_TRUE(b->Add(0, k, v).ok());
    auto index = b->Finish(out_path());
    ASSERT_TRUE(index.ok()) << index.status().ToString();
    EXPECT_EQ(ReadOutput(*index)[0], (Records{{"big", max},
                                              {"exact", max},
                                              {"low", max},       // MIN - 1 wraps to MAX
                                              {"wrap", "-1"}}));  // 2 MAX + 1 = 2^64 - 1
  }
}

TEST_F(CountingTest, ValueThatIsNotACountFallsBackToSortingRecords) {
  // The combiner sums them (adding nothing for the non-counts), so the
  // output is the generic path's.
  Records records = CountRecords(7, 20000, 500);
  records.insert(records.begin() + 5000, {{"a", "x"}, {"b", ""}, {"c", "+1"}, {"a", "1.5"}});
  records.insert(records.begin() + 12000, {{"only-bad", "99999999999999999999"}});
  for (int64_t buffer : {int64_t{1} << 20, int64_t{4} << 10}) {
    for (Feed feed : {Feed::kPartitioned, Feed::kKeyed, Feed::kTryCount}) {
      ExpectSameAsGeneric(records, 3, buffer, feed);
    }
  }
  // One run of counts, then the records: two spills, merged.
  EXPECT_EQ(Run(records, 3, 1 << 20, true, Feed::kPartitioned).index.spills, 2);
  // A non-count first: nothing to spill, the generic path all along.
  records.insert(records.begin(), {"first", "one"});
  EXPECT_EQ(Run(records, 3, 1 << 20, true, Feed::kKeyed).index.spills, 1);
}

TEST_F(CountingTest, EmptyKeysAndNoRecords) {
  ExpectSameAsGeneric({{"", "1"}, {"", "2"}, {std::string("\0", 1), "1"}, {"", "-3"}}, 4, 1 << 20);
  const Outcome none = Run({}, 4, 1 << 20, true, Feed::kKeyed);
  EXPECT_EQ(none.index.spills, 0);
  EXPECT_EQ(none.index.segments.size(), 4u);
  EXPECT_EQ(none.bytes, "");
}

TEST_F(CountingTest, BadUseIsAStatus) {
  MapOutputOptions o = Options(3, 1 << 20);
  o.sum_counts = true;  // without a combiner to merge runs
  EXPECT_TRUE(MapOutputBuffer::Create(o).status().IsInvalidArgument());

  o.combiner = DecimalSumCombiner();
  auto no_partition = NewBuffer(o);
  ASSERT_TRUE(no_partition);
  EXPECT_TRUE(no_partition->Add("k", "1").IsFailedPrecondition());

  o.partition = [](std::string_view k) { return k == "bad" ? 3 : 0; };
  auto b = NewBuffer(o);
  ASSERT_TRUE(b);
  EXPECT_TRUE(b->Add("k", "1").ok());
  Status s = b->Add("bad", "1");
  EXPECT_EQ(s.code(), Status::Code::kInternal) << s.ToString();
  EXPECT_NE(s.message().find("gave 3 for 3 partitions"), std::string::npos) << s.ToString();
  s = b->Add("bad", "not a count");
  EXPECT_EQ(s.code(), Status::Code::kInternal) << s.ToString();

  o.partition = [](std::string_view) -> int { throw std::runtime_error("no partition"); };
  auto throwing = NewBuffer(o);
  ASSERT_TRUE(throwing);
  s = throwing->Add("k", "1");
  EXPECT_EQ(s.code(), Status::Code::kInternal) << s.ToString();
  EXPECT_NE(s.message().find("no partition"), std::string::npos);
  EXPECT_FALSE(throwing->Finish(out_path()).ok());  // a throw fails the buffer
}

}  // namespace
}  // namespace mr::worker

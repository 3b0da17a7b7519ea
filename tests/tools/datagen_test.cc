#include "common/datagen.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <sstream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "dfs/input_type.h"

namespace mr::tools {
namespace {

constexpr GenKind kAllKinds[] = {GenKind::kText, GenKind::kWeb, GenKind::kDna};

std::string Gen(GenKind kind, int64_t bytes, uint64_t seed) {
  std::ostringstream out;
  Status s = Generate(kind, bytes, seed, out);
  EXPECT_TRUE(s.ok()) << s.ToString();
  return out.str();
}

// 64-bit FNV-1a: a stable digest to pin the generators' output across versions.
uint64_t Fnv1a(const std::string& s) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char c : s) {
    h ^= c;
    h *= 0x100000001b3ull;
  }
  return h;
}

std::vector<std::string_view> Lines(std::string_view s) {
  std::vector<std::string_view> lines;
  while (!s.empty()) {
    size_t nl = s.find('\n');
    if (nl == std::string_view::npos) nl = s.size() - 1;  // not reached: output ends in '\n'
    lines.push_back(s.substr(0, nl));
    s.remove_prefix(nl + 1);
  }
  return lines;
}

TEST(DatagenTest, ParsesKindNames) {
  EXPECT_EQ(*ParseGenKind("text"), GenKind::kText);
  EXPECT_EQ(*ParseGenKind("web"), GenKind::kWeb);
  EXPECT_EQ(*ParseGenKind("dna"), GenKind::kDna);
  EXPECT_TRUE(ParseGenKind("html").status().IsInvalidArgument());
  EXPECT_TRUE(ParseGenKind("").status().IsInvalidArgument());
  EXPECT_TRUE(ParseGenKind("Text").status().IsInvalidArgument());
}

TEST(DatagenTest, WritesExactlyTheSizeAskedEndingInNewline) {
  for (GenKind kind : kAllKinds) {
    for (int64_t bytes : {1, 2, 100, 4097, 65536, 1000003}) {
      std::string out = Gen(kind, bytes, 7);
      ASSERT_EQ(static_cast<int64_t>(out.size()), bytes) << static_cast<int>(kind);
      EXPECT_EQ(out.back(), '\n') << static_cast<int>(kind) << " " << bytes;
    }
  }
}

TEST(DatagenTest, ZeroBytesWritesNothingAndNegativeIsRejected) {
  for (GenKind kind : kAllKinds) {
    std::ostringstream out;
    EXPECT_TRUE(Generate(kind, 0, 1, out).ok());
    EXPECT_TRUE(out.str().empty());
    EXPECT_TRUE(Generate(kind, -1, 1, out).IsInvalidArgument());
  }
}

TEST(DatagenTest, FailedStreamIsIOError) {
  std::ostream broken(nullptr);  // badbit set: every write fails
  EXPECT_TRUE(Generate(GenKind::kText, 1000, 1, broken).IsIOError());
}

TEST(DatagenTest, SameSeedSameBytesOtherSeedOtherBytes) {
  for (GenKind kind : kAllKinds) {
    EXPECT_EQ(Gen(kind, 300000, 11), Gen(kind, 300000, 11));
    EXPECT_NE(Gen(kind, 300000, 11), Gen(kind, 300000, 12));
  }
}

// Pins the exact output across versions, compilers and machines (checked with
// GCC 12 and Clang 14, -O0 and -O2). If this fails, the generated data changed
// and every recorded benchmark input with it: update only on purpose.
TEST(DatagenTest, GoldenDigests) {
  EXPECT_EQ(Fnv1a(Gen(GenKind::kText, 100000, 42)), 0xcc246cb45eb44786ull);
  EXPECT_EQ(Fnv1a(Gen(GenKind::kWeb, 100000, 42)), 0xb0203ab4c24e4e3eull);
  EXPECT_EQ(Fnv1a(Gen(GenKind::kDna, 100000, 42)), 0xe0e6873c6f8360f8ull);
}

TEST(DatagenTest, EachKindIsClassifiedAsItsOwnType) {
  using dfs::InputType;
  const std::pair<GenKind, InputType> cases[] = {{GenKind::kText, InputType::kText},
                                                 {GenKind::kWeb, InputType::kWeb},
                                                 {GenKind::kDna, InputType::kDna}};
  for (auto [kind, type] : cases) {
    for (uint64_t seed : {1, 2, 3}) {
      std::string out = Gen(kind, 1 << 20, seed);
      EXPECT_EQ(dfs::ClassifyInput(std::string_view(out).substr(0, dfs::kClassifySampleBytes)),
                type);
    }
  }
}

TEST(DatagenTest, TextHasZipfHeadAndLongTail) {
  std::string text = Gen(GenKind::kText, 1 << 20, 5);
  std::unordered_map<std::string, int64_t> counts;
  int64_t total = 0;
  std::string word;
  for (char c : text + " ") {
    if (std::isalpha(static_cast<unsigned char>(c))) {
      word += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    } else if (!word.empty()) {
      ++counts[word];
      ++total;
      word.clear();
    }
  }
  int64_t top = 0;
  for (const auto& [w, n] : counts) top = std::max(top, n);
  EXPECT_GE(top * 100, total * 3);
  EXPECT_LE(top * 100, total * 15);
  EXPECT_GE(counts.size(), 2000u);
  EXPECT_EQ(counts["the"], top);  // the vocabulary is ordered by frequency
}

TEST(DatagenTest, TextLooksLikeProse) {
  std::string text = Gen(GenKind::kText, 200000, 9);
  std::vector<std::string_view> lines = Lines(text);
  int blank = 0;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].empty()) {
      ++blank;
      ASSERT_LT(i + 1, lines.size());
      EXPECT_TRUE(std::isupper(static_cast<unsigned char>(lines[i + 1][0])));  // a new sentence
      continue;
    }
    EXPECT_LE(lines[i].size(), 100u);
    if (i + 1 < lines.size() && !lines[i + 1].empty()) {
      EXPECT_GE(lines[i].size(), 40u) << lines[i];  // filled up to the wrap column
    }
  }
  EXPECT_GT(blank, static_cast<int>(lines.size()) / 12);  // paragraphs of a few lines
  EXPECT_LT(blank, static_cast<int>(lines.size()) / 3);
  EXPECT_TRUE(std::isupper(static_cast<unsigned char>(text[0])));
  for (char c : {'.', ',', '!', '?'}) EXPECT_NE(text.find(c), std::string::npos) << c;
}

TEST(DatagenTest, DnaIsFastaWithLinesOf60To80Bases) {
  for (int64_t bytes : {int64_t{1000003}, int64_t{100000}, int64_t{5000}}) {
    std::string dna = Gen(GenKind::kDna, bytes, 3);
    std::vector<std::string_view> lines = Lines(dna);
    ASSERT_EQ(lines[0], ">seq_1 synthetic genome fragment 3");
    int headers = 0;
    for (size_t i = 0; i < lines.size(); ++i) {
      std::string_view line = lines[i];
      if (line[0] == '>') {
        ++headers;
        EXPECT_LT(i + 1, lines.size());  // a record is never empty
        continue;
      }
      EXPECT_EQ(line.find_first_not_of("ACGTN"), std::string_view::npos) << line;
      EXPECT_LE(line.size(), 80u);
      if (i + 1 < lines.size()) {
        EXPECT_GE(line.size(), 60u);  // only the very last may be short
      }
      EXPECT_FALSE(line.empty());
    }
    EXPECT_GE(headers * 700, static_cast<int>(lines.size()) - headers);  // records ≤ 600 lines
  }
  std::string big = Gen(GenKind::kDna, 1000003, 3);
  EXPECT_NE(big.find('N'), std::string::npos);                // rare N runs exist
  EXPECT_LT(std::count(big.begin(), big.end(), 'N'), 10000);  // but are rare
}

TEST(DatagenTest, WebIsAWellFormedMediawikiDump) {
  for (int64_t bytes : {int64_t{1000003}, int64_t{65536}, int64_t{9000}}) {
    std::string web = Gen(GenKind::kWeb, bytes, 4);
    EXPECT_EQ(web.rfind("<mediawiki ", 0), 0u);
    EXPECT_EQ(web.substr(web.size() - 13), "</mediawiki>\n");
    size_t open = 0, close = 0;
    for (size_t at = 0; (at = web.find("<page>", at)) != std::string::npos; ++at) ++open;
    for (size_t at = 0; (at = web.find("</page>", at)) != std::string::npos; ++at) ++close;
    EXPECT_EQ(open, close);
    EXPECT_EQ(web.find('<', web.find("<text") + 1), web.find("</text>"));  // wiki text escaped
  }
  std::string web = Gen(GenKind::kWeb, 1000003, 4);
  for (const char* markup :
       {"<title>", "<ns>0</ns>", "<revision>", "<timestamp>", "<text xml:space=\"preserve\">", "[[",
        "]]", "{{", "}}", "'''", "== ", "&lt;ref&gt;", "&lt;/ref&gt;", "&quot;", "[[Category:"}) {
    EXPECT_NE(web.find(markup), std::string::npos) << markup;
  }
}

}  // namespace
}  // namespace mr::tools

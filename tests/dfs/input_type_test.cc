#include "dfs/input_type.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace mr::dfs {
namespace {

namespace fs = std::filesystem;

TEST(InputTypeTest, Names) {
  EXPECT_STREQ(InputTypeName(InputType::kText), "text");
  EXPECT_STREQ(InputTypeName(InputType::kWeb), "web");
  EXPECT_STREQ(InputTypeName(InputType::kDna), "dna");
}

TEST(InputTypeTest, EmptyAndBlankAreText) {
  EXPECT_EQ(ClassifyInput(""), InputType::kText);
  EXPECT_EQ(ClassifyInput("\n\n  \r\n"), InputType::kText);
  EXPECT_EQ(ClassifyInput("\xEF\xBB\xBF"), InputType::kText);
}

TEST(InputTypeTest, Fasta) {
  EXPECT_EQ(ClassifyInput(">chr1 test\nACGTACGTNNACGT\nGGCCTTAA\n"), InputType::kDna);
  // Lowercase (soft-masked) bases, IUPAC codes, CRLF, leading blank lines, a BOM.
  EXPECT_EQ(ClassifyInput("\xEF\xBB\xBF\r\n\r\n>x\r\nacgtnnRYKM\r\nacgt-acgt*\r\n"),
            InputType::kDna);
  // Several records, blank lines between them.
  EXPECT_EQ(ClassifyInput(">a\nACGT\nACGT\n\n>b\nTTGA\n"), InputType::kDna);
  // A sample cut mid-line: the fragment ("AC") is not judged.
  EXPECT_EQ(ClassifyInput(">a\nACGTACGT\nAC"), InputType::kDna);
  // A sample that is a header and one unterminated line is still judged.
  EXPECT_EQ(ClassifyInput(">a\nACGT"), InputType::kDna);
}

TEST(InputTypeTest, NotFasta) {
  // A header alone has no sequence lines.
  EXPECT_EQ(ClassifyInput(">just a quote\n"), InputType::kText);
  // An e-mail style quote: '>' but prose after it.
  EXPECT_EQ(ClassifyInput("> he wrote this\nand then I replied\nwith more words\n"),
            InputType::kText);
  // One bad line in ten is allowed (90%), two are not.
  std::string nine = ">s\n";
  for (int i = 0; i < 9; ++i) nine += "ACGTACGT\n";
  EXPECT_EQ(ClassifyInput(nine + "hello world\n"), InputType::kDna);
  EXPECT_EQ(ClassifyInput(nine + "hello world\nagain here\n"), InputType::kText);
  // Sequence lines but no header first: not FASTA.
  EXPECT_EQ(ClassifyInput("ACGTACGT\nACGTACGT\n"), InputType::kText);
}

TEST(InputTypeTest, XmlWithBomIsWeb) {
  EXPECT_EQ(ClassifyInput("\xEF\xBB\xBF<?xml version=\"1.0\"?>\n<root>\n  plain text\n"),
            InputType::kWeb);
  // A start tag that spans lines still counts for the leading '<' rule.
  EXPECT_EQ(ClassifyInput("<mediawiki xmlns=\"x\"\n version=\"0.10\">\ntext\n"), InputType::kWeb);
}

TEST(InputTypeTest, HtmlIsWeb) {
  EXPECT_EQ(ClassifyInput("<!DOCTYPE html>\n<html><head><title>T</title></head>\n"
                          "<body><p>Hello, world.</p></body></html>\n"),
            InputType::kWeb);
  // Not starting with '<' but tags on most lines (an HTML fragment after prose).
  EXPECT_EQ(ClassifyInput("Saved page\n<div class=\"a\">x</div>\n<p>y</p>\n<br/>\n"),
            InputType::kWeb);
}

TEST(InputTypeTest, ProseMentioningAngleBracketsIsText) {
  EXPECT_EQ(ClassifyInput("We know that a < b and b > c.\nSo a < c follows.\n"
                          "Nothing here is markup.\n"),
            InputType::kText);
  // A '<' start that never closes a tag is not markup either.
  EXPECT_EQ(ClassifyInput("<- this arrow points left\nand more prose\n"), InputType::kText);
  // One tag-like line in ten (10% < 20%) stays text.
  std::string text;
  for (int i = 0; i < 9; ++i) text += "An ordinary line of prose.\n";
  EXPECT_EQ(ClassifyInput(text + "Write <b>bold</b> like this.\n"), InputType::kText);
  // Two in ten (20%) is web.
  EXPECT_EQ(ClassifyInput(text.substr(0, text.size() / 9 * 8) +
                          "Write <b>bold</b> like this.\n<i>and this</i>\n"),
            InputType::kWeb);
}

TEST(InputTypeTest, PlainTextIsText) {
  EXPECT_EQ(ClassifyInput("It was the best of times, it was the worst of times.\r\n"),
            InputType::kText);
  EXPECT_EQ(ClassifyInput("CAT GAG TAG\n"), InputType::kText);  // no '>' header
}

// The real data sets, when present next to the repository (../shared/data).
class InputTypeRealDataTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* env = std::getenv("MR_SOURCE_DIR");
    fs::path source = env != nullptr ? fs::path(env)
                                     : fs::path(__FILE__).parent_path().parent_path().parent_path();
    data_ = source / ".." / "shared" / "data";
    if (!fs::is_directory(data_)) GTEST_SKIP() << "no data folder at " << data_;
  }

  std::vector<fs::path> Files(const std::string& dir, const std::string& ext) const {
    std::vector<fs::path> files;
    if (!fs::is_directory(data_ / dir)) return files;
    for (const auto& entry : fs::directory_iterator(data_ / dir)) {
      if (entry.path().extension() == ext) files.push_back(entry.path());
    }
    std::sort(files.begin(), files.end());
    return files;
  }

  static std::string Head(const fs::path& path) {
    std::ifstream in(path, std::ios::binary);
    std::string buf(kClassifySampleBytes, '\0');
    in.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    buf.resize(static_cast<size_t>(in.gcount()));
    return buf;
  }

  fs::path data_;
};

TEST_F(InputTypeRealDataTest, WikipediaIsWeb) {
  auto files = Files("wikipedia", ".xml");
  if (files.empty()) GTEST_SKIP() << "no wikipedia/*.xml";
  for (const auto& f : files) EXPECT_EQ(ClassifyInput(Head(f)), InputType::kWeb) << f;
}

TEST_F(InputTypeRealDataTest, BooksAreText) {
  auto files = Files("books", ".txt");
  if (files.empty()) GTEST_SKIP() << "no books/*.txt";
  for (const auto& f : files) EXPECT_EQ(ClassifyInput(Head(f)), InputType::kText) << f;
  EXPECT_EQ(files.size(), 33u);
}

TEST_F(InputTypeRealDataTest, GenomeIsDna) {
  auto files = Files("dna", ".fasta");
  if (files.empty()) GTEST_SKIP() << "no dna/*.fasta";
  for (const auto& f : files) EXPECT_EQ(ClassifyInput(Head(f)), InputType::kDna) << f;
}

}  // namespace
}  // namespace mr::dfs

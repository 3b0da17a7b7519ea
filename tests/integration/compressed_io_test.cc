// Compressed input and output on a local cluster of real processes
// (docs/jobs.md, "Compressed input and output"): .gz, .zst and .bz2 inputs
// larger than a block are one map each and give what `zcat FILE | shell
// pipeline` gives (WordCount, Grep, Sort); --output-compression writes part
// files zcat and zstdcat read; a corrupt file fails the job at once in one
// line naming the file and the compressed offset; a bad flag value is one
// line. With ../shared/data present, a real book (gzip) and genome (zstd)
// too, compressed into the scratch directory.
#include <fstream>

#include "tests/integration/job_fixture.h"

namespace mr::testing {
namespace {

using nlohmann::json;

class CompressedIoTest : public JobTest {
 protected:
  // `cmd` run by the shell; its stdout. The test fails if it fails.
  static std::string Sh(const std::string& cmd) {
    CommandResult r = Shell("bash -o pipefail -c " + Quote(cmd));
    EXPECT_EQ(r.exit_code, 0) << cmd << ": " << r.err;
    return r.out;
  }

  // WordCount's output by the shell, sorted: words are runs of bytes other
  // than space, \t, \n, \r, \f and \v (jobs/job_util.h).
  static std::string WordCounts(const std::string& decompress) {
    return Sh(decompress + " | LC_ALL=C tr ' \\t\\r\\f\\v' '\\n\\n\\n\\n\\n' | grep -v '^$' | LC_ALL=C sort | "
              "LC_ALL=C uniq -c | LC_ALL=C awk '{print $2 \"\\t\" $1}' | LC_ALL=C sort");
  }
  // Grep's output by the shell, sorted: each match and its count.
  static std::string GrepCounts(const std::string& decompress, const std::string& pattern) {
    return Sh(decompress + " | LC_ALL=C grep -oE " + Quote(pattern) + " | LC_ALL=C sort | LC_ALL=C uniq -c | "
              "LC_ALL=C awk '{print $2 \"\\t\" $1}' | LC_ALL=C sort");
  }
  static std::string Sorted(const std::string& text) {
    const std::string tmp = "/tmp/compressed-io-sorted-" + std::to_string(::getpid());
    std::ofstream(tmp, std::ios::binary) << text;
    std::string out = Sh("LC_ALL=C sort " + Quote(tmp));
    std::filesystem::remove(tmp);
    return out;
  }
  // The job's part files through `decompress` (e.g. "zcat"), in order.
  std::string CatParts(const LocalCluster& c, const std::string& dir, const std::string& decompress) {
    std::string all;
    for (const std::string& part : ListParts(c, dir)) {
      all += Sh(Mrctl() + " --config " + Quote(c.config()) + " dfs cat " + Quote(dir + "/" + part) + " | " + decompress);
    }
    return all;
  }
  void PutBlocks(const LocalCluster& c, const std::string& local, const std::string& dfs) {
    CommandResult r = c.Mrctl("dfs put --block-size 65536 " + Quote(local) + " " + Quote(dfs));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
};

TEST_F(CompressedIoTest, CompressedInputsAreOneMapAndMatchZcat) {
  LocalCluster c(3, 2, "--replication 2 --heartbeat-ms 100");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  // Two gzip members, two zstd frames, one bzip2 stream: each file spans
  // several 64 KiB blocks.
  const std::string text = Generate("text", "600K", 11);
  const std::string a = work_ + "/a", b = work_ + "/b";
  Sh("head -c 250000 " + Quote(text) + " > " + Quote(a) + " && tail -c +250001 " + Quote(text) + " > " + Quote(b));
  const std::string gz = work_ + "/text.gz", zst = work_ + "/text.zst", bz2 = work_ + "/text.bz2";
  Sh("gzip -c " + Quote(a) + " > " + Quote(gz) + " && gzip -c " + Quote(b) + " >> " + Quote(gz));
  Sh("zstd -qc " + Quote(a) + " > " + Quote(zst) + " && zstd -qc " + Quote(b) + " >> " + Quote(zst));
  Sh("bzip2 -c " + Quote(text) + " > " + Quote(bz2));
  ASSERT_GT(std::filesystem::file_size(gz), 65536u) << "one block: a vacuous test";
  PutBlocks(c, gz, "/in/text.gz");
  PutBlocks(c, zst, "/in/text.zst");
  PutBlocks(c, bz2, "/in/text.bz2");

  // WordCount over gzip: one map, said in one line; zcat | pipeline's counts.
  CommandResult run = c.Mrctl("job run wordcount -i /in/text.gz -o /out/wc -r 2 --wait --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.err.find("compressed input, not split (one map per file): /in/text.gz\n"), std::string::npos)
      << run.err;
  json r = json::parse(run.out);
  EXPECT_EQ(r["maps_total"], 1);
  EXPECT_EQ(r["input_bytes"], static_cast<int64_t>(std::filesystem::file_size(gz)));
  const std::string want_words = WordCounts("zcat " + Quote(gz));
  EXPECT_TRUE(Sorted(Cat(c, "/out/wc")) == want_words) << "WordCount over .gz differs from zcat | pipeline";
  EXPECT_TRUE(Cat(c, "/out/wc") == Oracle("wordcount", gz, 2, "", 65536)) << "differs from mr-local";

  // Grep over zstd frames.
  const std::string pattern = "[a-z]*or[a-z]*";
  r = RunJob(c, "grep", "/in/text.zst", "/out/grep", 2, "pattern=" + pattern);
  ASSERT_EQ(r["state"], "succeeded") << r.dump(2);
  EXPECT_EQ(r["maps_total"], 1);
  EXPECT_TRUE(Sorted(Cat(c, "/out/grep")) == GrepCounts("zstdcat " + Quote(zst), pattern))
      << "Grep over .zst differs from zstdcat | grep -o";

  // Sort over bzip2, its output written as zstd part files.
  run = c.Mrctl("job run sort -i /in/text.bz2 -o /out/sort -r 2 --output-compression zstd --wait --json");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  r = json::parse(run.out);
  EXPECT_EQ(r["output_compression"], "zstd");
  EXPECT_EQ(ListParts(c, "/out/sort"), (std::vector<std::string>{"part-00000.zst", "part-00001.zst"}));
  EXPECT_TRUE(CatParts(c, "/out/sort", "zstdcat") == Sh("bzcat " + Quote(bz2) + " | LC_ALL=C sort"))
      << "Sort over .bz2 differs from bzcat | sort";

  // WordCount written as gzip: zcat of the parts is the plain run's output.
  run = c.Mrctl("job run wordcount -i /in/text.zst -o /out/wcz -r 2 --output-compression gzip --wait");
  ASSERT_EQ(run.exit_code, 0) << run.err;
  EXPECT_NE(run.out.find("output /out/wcz (gzip)"), std::string::npos) << run.out;
  EXPECT_EQ(ListParts(c, "/out/wcz"), (std::vector<std::string>{"part-00000.gz", "part-00001.gz"}));
  EXPECT_TRUE(CatParts(c, "/out/wcz", "zcat") == Cat(c, "/out/wc"));

  // A bad value: one line listing the valid ones, nothing submitted.
  CommandResult bad = c.Mrctl("job run wordcount -i /in/text.gz -o /out/bad --output-compression lz4");
  EXPECT_EQ(bad.exit_code, 2);
  EXPECT_EQ(bad.err, "mrctl: output compression must be one of none, gzip, zstd, not 'lz4'\n");

  // A corrupt member: the job fails at its first attempt, in one line
  // naming the file and the compressed offset; the workers live on.
  const std::string corrupt = work_ + "/bad.gz";
  Sh("cp " + Quote(gz) + " " + Quote(corrupt) + " && printf 'XXXXXXXXXXXXXXXX' | dd of=" + Quote(corrupt) +
     " bs=1 seek=100000 conv=notrunc status=none");
  PutBlocks(c, corrupt, "/in/bad.gz");
  r = RunJob(c, "wordcount", "/in/bad.gz", "/out/corrupt", 2, "");
  EXPECT_EQ(r["state"], "failed") << r.dump(2);
  const std::string error = r["error"];
  EXPECT_NE(error.find("/in/bad.gz: corrupt gzip data at compressed byte "), std::string::npos) << error;
  EXPECT_EQ(error.find('\n'), std::string::npos) << error;
  EXPECT_EQ(r["failed_attempts"], 0) << "retried: " << r.dump(2);
  EXPECT_EQ(c.LiveWorkers(), 3);
}

TEST_F(CompressedIoTest, RealBookAndGenomeMatchTheShell) {
  const std::string data = SharedDataDir();
  if (data.empty()) GTEST_SKIP() << "../shared/data is not present";
  const std::string book = data + "/books/austen_pride_and_prejudice.txt";
  const std::string genome = data + "/dna/ecoli_k12_mg1655.fasta";
  if (!std::filesystem::exists(book) || !std::filesystem::exists(genome)) GTEST_SKIP() << "no book or genome";
  const std::string gz = work_ + "/book.txt.gz", zst = work_ + "/genome.fa.zst";
  Sh("gzip -c " + Quote(book) + " > " + Quote(gz));
  Sh("zstd -qc " + Quote(genome) + " > " + Quote(zst));
  LocalCluster c(2, 1, "--replication 1 --heartbeat-ms 100");
  ASSERT_EQ(c.up().exit_code, 0) << c.up().err;
  PutBlocks(c, gz, "/real/book.txt.gz");
  PutBlocks(c, zst, "/real/genome.fa.zst");
  // A CRLF book: WordCount's separators include '\r'.
  json r = RunJob(c, "wordcount", "/real/book.txt.gz", "/out/book", 2, "");
  ASSERT_EQ(r["state"], "succeeded") << r.dump(2);
  EXPECT_TRUE(Sorted(Cat(c, "/out/book")) == WordCounts("zcat " + Quote(gz))) << "book: differs from zcat";
  r = RunJob(c, "grep", "/real/genome.fa.zst", "/out/genome", 1, "pattern=GATTACA|TATA[AT]A[AT]");
  ASSERT_EQ(r["state"], "succeeded") << r.dump(2);
  EXPECT_TRUE(Sorted(Cat(c, "/out/genome")) == GrepCounts("zstdcat " + Quote(zst), "GATTACA|TATA[AT]A[AT]"))
      << "genome: differs from zstdcat | grep -o";
}

}  // namespace
}  // namespace mr::testing

// The decoders and encoders of jobs/codec.h, through DecompressedInput (the
// map's reader), against the command-line tools gzip, zstd and bzip2: data
// they compressed decodes to what they were given, and what our encoders
// write they decompress.
#include "jobs/codec.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>
#include <string>

#include "jobs/decompressed_input.h"

namespace mr::jobs {
namespace {

namespace fs = std::filesystem;

class CodecTest : public testing::Test {
 protected:
  void SetUp() override {
    char tmpl[] = "/tmp/codec_test.XXXXXX";
    ASSERT_NE(::mkdtemp(tmpl), nullptr);
    dir_ = tmpl;
  }
  void TearDown() override { fs::remove_all(dir_); }

  std::string Path(const std::string& name) const { return dir_ + "/" + name; }

  static void Write(const std::string& path, const std::string& data) {
    std::ofstream(path, std::ios::binary) << data;
  }
  static std::string Slurp(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream s;
    s << in.rdbuf();
    return s.str();
  }

  // `data` compressed by the command-line tool of `codec`.
  std::string ToolCompress(Codec codec, const std::string& data) {
    const std::string in = Path("tool-in");
    Write(in, data);
    const char* tool = codec == Codec::kGzip ? "gzip" : codec == Codec::kZstd ? "zstd -q" : "bzip2";
    const std::string cmd = std::string(tool) + " -c < " + in + " > " + Path("tool-out");
    EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
    return Slurp(Path("tool-out"));
  }

  // `compressed` decoded as a map reads it: reads of `read_bytes` through a
  // DecompressedInput fed `chunk_bytes` at a time.
  static Status Decode(Codec codec, const std::string& compressed, std::string* out,
                       int64_t chunk_bytes = 7, int64_t read_bytes = 5, bool* corrupt = nullptr) {
    LineReader::ReadFn raw = [&compressed](int64_t offset, int64_t n, std::string* chunk) {
      *chunk = compressed.substr(static_cast<size_t>(offset), static_cast<size_t>(n));
      return Status::OK();
    };
    DecompressedInput input(codec, "/in/f", static_cast<int64_t>(compressed.size()), raw, chunk_bytes);
    out->clear();
    std::string piece;
    Status s;
    for (;;) {
      s = input.Read(static_cast<int64_t>(out->size()), read_bytes, &piece);
      if (!s.ok()) break;
      out->append(piece);
      if (static_cast<int64_t>(piece.size()) < read_bytes) break;
    }
    if (corrupt != nullptr) *corrupt = input.corrupt();
    return s;
  }

  std::string dir_;
};

std::string Text(size_t bytes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s;
  while (s.size() < bytes) {
    s += "word" + std::to_string(rng() % 1000);
    s += rng() % 8 == 0 ? "\n" : " ";
  }
  return s;
}

constexpr Codec kAll[] = {Codec::kGzip, Codec::kZstd, Codec::kBzip2};

TEST_F(CodecTest, ConcatenatedUnitsDecodeFullyAsTheToolsDo) {
  // gzip members, zstd frames, bzip2 streams one after another (cat a.gz
  // b.gz, pbzip2): all of them, in order, as zcat prints them.
  const std::string a = Text(20000, 1), b = Text(5000, 2), c = "last line without newline";
  for (Codec codec : kAll) {
    SCOPED_TRACE(CodecName(codec));
    const std::string packed = ToolCompress(codec, a) + ToolCompress(codec, b) + ToolCompress(codec, c);
    for (int64_t chunk : {int64_t{1}, int64_t{7}, int64_t{1} << 20}) {
      std::string out;
      ASSERT_TRUE(Decode(codec, packed, &out, chunk, 4096).ok());
      EXPECT_EQ(out, a + b + c) << "chunk " << chunk;
    }
  }
}

TEST_F(CodecTest, AnEmptyFileIsAnEmptyStream) {
  for (Codec codec : kAll) {
    std::string out = "x";
    EXPECT_TRUE(Decode(codec, "", &out).ok()) << CodecName(codec);
    EXPECT_EQ(out, "");
    // And a compressed empty text: no bytes either.
    EXPECT_TRUE(Decode(codec, ToolCompress(codec, ""), &out).ok()) << CodecName(codec);
    EXPECT_EQ(out, "");
  }
}

TEST_F(CodecTest, ATruncatedStreamNamesTheFileAndWhereItEnds) {
  const std::string text = Text(30000, 3);
  for (Codec codec : kAll) {
    SCOPED_TRACE(CodecName(codec));
    const std::string whole = ToolCompress(codec, text) + ToolCompress(codec, "more\n");
    for (size_t cut : {whole.size() - 1, whole.size() - 10, whole.size() / 2, size_t{3}}) {
      std::string out;
      bool corrupt = false;
      Status s = Decode(codec, whole.substr(0, cut), &out, 7, 5, &corrupt);
      ASSERT_TRUE(s.IsCorruption()) << cut << ": " << s.ToString();
      EXPECT_TRUE(corrupt);
      EXPECT_NE(s.message().find("/in/f: "), std::string::npos) << s.message();
      // Either the end is reached inside a unit, or what is there is
      // already invalid (a cut inside bzip2's last block can be).
      const bool truncated = s.message().find("truncated") != std::string::npos;
      if (truncated) {
        EXPECT_NE(s.message().find("compressed byte " + std::to_string(cut) + " inside"), std::string::npos)
            << s.message();
      }
      EXPECT_TRUE(truncated || s.message().find("corrupt") != std::string::npos) << s.message();
    }
  }
}

TEST_F(CodecTest, ACorruptMemberNamesTheFileAndTheOffset) {
  // The second unit's middle is overwritten: the first unit's bytes come
  // out, then an error at a compressed offset inside the damage or after
  // it (the checksum at the unit's end), never before it.
  const std::string first = Text(10000, 4), second = Text(50000, 5);
  for (Codec codec : kAll) {
    SCOPED_TRACE(CodecName(codec));
    const std::string one = ToolCompress(codec, first);
    std::string packed = one + ToolCompress(codec, second);
    const size_t damage = one.size() + (packed.size() - one.size()) / 2;
    for (size_t i = damage; i < damage + 16; ++i) packed[i] = static_cast<char>(packed[i] ^ 0x5a);
    // Read in small chunks, and in the worker's 1 MiB (the whole file).
    for (int64_t chunk : {int64_t{4096}, DecompressedInput::kDefaultChunkBytes}) {
      std::string out;
      bool corrupt = false;
      Status s = Decode(codec, packed, &out, chunk, 4096, &corrupt);
      ASSERT_TRUE(s.IsCorruption()) << s.ToString();
      EXPECT_TRUE(corrupt);
      const std::string& m = s.message();
      EXPECT_EQ(m.rfind("/in/f: corrupt " + std::string(CodecName(codec)) + " data at compressed byte ", 0), 0u) << m;
      const size_t at = std::stoul(m.substr(m.find("byte ") + 5));
      EXPECT_GE(at, damage) << "chunk " << chunk << ": " << m;
      EXPECT_LE(at, packed.size()) << m;
    }
  }
}

TEST_F(CodecTest, GarbageAfterTheLastUnitIsCorrupt) {
  for (Codec codec : kAll) {
    std::string out;
    bool corrupt = false;
    Status s = Decode(codec, ToolCompress(codec, "a\n") + "not compressed\n", &out, 7, 5, &corrupt);
    EXPECT_TRUE(s.IsCorruption()) << CodecName(codec) << ": " << s.ToString();
    EXPECT_TRUE(corrupt);
  }
}

TEST_F(CodecTest, AReadErrorIsPassedOnAndIsNotCorruption) {
  LineReader::ReadFn raw = [](int64_t, int64_t, std::string*) { return Status::IOError("disk gone"); };
  DecompressedInput input(Codec::kGzip, "/in/f", 100, raw);
  std::string out;
  Status s = input.Read(0, 10, &out);
  EXPECT_TRUE(s.IsIOError()) << s.ToString();
  EXPECT_FALSE(input.corrupt());
}

TEST_F(CodecTest, CompressedFilesAreReadByTheTools) {
  // --output-compression's part files: zcat and zstdcat give the text back.
  const std::string text = Text(200000, 6);
  Write(Path("part"), text);
  for (Codec codec : {Codec::kGzip, Codec::kZstd}) {
    SCOPED_TRACE(CodecName(codec));
    const std::string packed = Path("part") + CodecSuffix(codec);
    ASSERT_TRUE(CompressFile(codec, Path("part"), packed).ok());
    const std::string cmd = std::string(codec == Codec::kGzip ? "gzip -dc " : "zstd -qdc ") + packed +
                            " > " + Path("back");
    ASSERT_EQ(std::system(cmd.c_str()), 0) << cmd;
    EXPECT_EQ(Slurp(Path("back")), text);
  }
  Write(Path("empty"), "");
  ASSERT_TRUE(CompressFile(Codec::kGzip, Path("empty"), Path("empty.gz")).ok());
  ASSERT_EQ(std::system(("gzip -dc " + Path("empty.gz") + " > " + Path("back")).c_str()), 0);
  EXPECT_EQ(Slurp(Path("back")), "");
}

TEST_F(CodecTest, APrefixDecodesToTheFirstBytes) {
  // Sort's sample reads a compressed file's first 64 KiB: what they decode
  // to is the text's start, cut where the bytes end or the limit is.
  const std::string text = Text(300000, 7);
  for (Codec codec : kAll) {
    SCOPED_TRACE(CodecName(codec));
    const std::string packed = ToolCompress(codec, text);
    const std::string head = DecodePrefix(codec, std::string_view(packed).substr(0, packed.size() / 2), 1 << 20);
    EXPECT_EQ(head, text.substr(0, head.size()));
    if (codec != Codec::kBzip2) EXPECT_GT(head.size(), 0u);  // bzip2 emits whole 900 kB blocks
    EXPECT_EQ(DecodePrefix(codec, packed, 1000), text.substr(0, 1000));
  }
}

TEST(CodecNamesTest, SuffixesAndOutputCompressionValues) {
  EXPECT_EQ(CodecOfPath("/logs/a.gz"), Codec::kGzip);
  EXPECT_EQ(CodecOfPath("/logs/a.zst"), Codec::kZstd);
  EXPECT_EQ(CodecOfPath("/logs/a.bz2"), Codec::kBzip2);
  EXPECT_EQ(CodecOfPath("/logs/a.gzip"), Codec::kNone);
  EXPECT_EQ(CodecOfPath("/logs/gz"), Codec::kNone);
  EXPECT_EQ(*ParseOutputCompression(""), Codec::kNone);
  EXPECT_EQ(*ParseOutputCompression("none"), Codec::kNone);
  EXPECT_EQ(*ParseOutputCompression("gzip"), Codec::kGzip);
  EXPECT_EQ(*ParseOutputCompression("zstd"), Codec::kZstd);
  Result<Codec> bad = ParseOutputCompression("bzip2");
  ASSERT_FALSE(bad.ok());
  EXPECT_EQ(bad.status().message(), "output compression must be one of none, gzip, zstd, not 'bzip2'");
}

}  // namespace
}  // namespace mr::jobs

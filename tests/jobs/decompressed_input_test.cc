// DecompressedInput's decode thread (jobs/decompressed_input.h): any read
// size gives the stream's bytes, whole-piece reads included; an error met
// on the decode thread reaches the map's line reader as the one line it
// always was, after every line decoded before it; and a reader destroyed
// early stops and joins the thread, also while it is inside a raw read.
// (The codecs against the command-line tools: codec_test.cc.)
#include "jobs/decompressed_input.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <optional>
#include <random>
#include <string>
#include <thread>

#include "jobs/codec.h"
#include "jobs/line_reader.h"

namespace mr::jobs {
namespace {

// Lines of numbered words, `bytes` long (about), ending in '\n'.
std::string Lines(size_t bytes, uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::string s;
  while (s.size() < bytes) s += "w" + std::to_string(rng() % 5000) + (rng() % 6 == 0 ? "\n" : " ");
  return s + "\n";
}

std::string Compress(Codec codec, const std::string& text) {
  std::unique_ptr<Encoder> encoder = Encoder::Make(codec);
  std::string out;
  EXPECT_TRUE(encoder->Write(text, &out).ok());
  EXPECT_TRUE(encoder->Finish(&out).ok());
  return out;
}

// A ReadFn over `bytes`.
LineReader::ReadFn Over(const std::string& bytes) {
  return [&bytes](int64_t offset, int64_t n, std::string* out) {
    *out = bytes.substr(static_cast<size_t>(offset), static_cast<size_t>(n));
    return Status::OK();
  };
}

// All of `input`, read `n` bytes at a time; the first error instead.
Result<std::string> ReadAll(DecompressedInput& input, int64_t n) {
  std::string all, piece;
  do {
    MR_RETURN_IF_ERROR(input.Read(static_cast<int64_t>(all.size()), n, &piece));
    all += piece;
  } while (static_cast<int64_t>(piece.size()) == n);
  return all;
}

// A map's reader of `input`.
LineReader ReaderOf(DecompressedInput& input) {
  return LineReader(input.AsReadFn(), LineReader::kUnknownLength, 0, LineReader::kUnknownLength, 0);
}

// The lines a map would see, each with its '\n', until the end or an error.
Status ReadLines(LineReader& reader, std::string* lines) {
  std::string_view line;
  int64_t offset;
  bool in_split;
  for (;;) {
    MR_ASSIGN_OR_RETURN(bool more, reader.Next(&line, &offset, &in_split));
    if (!more) return Status::OK();
    lines->append(line).push_back('\n');
  }
}

TEST(DecompressedInputTest, AnyReadSizeGivesTheStreamsBytes) {
  // Two units, several pieces each. A read of exactly the piece size (the
  // first read's, as LineReader makes them) takes the piece whole; smaller
  // and larger ones copy from one or several pieces.
  const std::string a = Lines(1500000, 1), b = Lines(1700000, 2);
  for (Codec codec : {Codec::kGzip, Codec::kZstd}) {
    const std::string packed = Compress(codec, a) + Compress(codec, b);
    for (int64_t n : {DecompressedInput::kMinPieceBytes, int64_t{1} << 20, int64_t{1000}, int64_t{3} << 20}) {
      DecompressedInput input(codec, "/in/f", static_cast<int64_t>(packed.size()), Over(packed), 64 << 10);
      Result<std::string> all = ReadAll(input, n);
      ASSERT_TRUE(all.ok()) << all.status().ToString();
      EXPECT_TRUE(*all == a + b) << CodecName(codec) << ", reads of " << n << ": " << all->size() << " bytes";
      EXPECT_EQ(input.compressed_read(), static_cast<int64_t>(packed.size()));
    }
  }
}

TEST(DecompressedInputTest, ACorruptFrameReachesTheMapAsOneLineAfterTheGoodLines) {
  // The second frame's middle is damaged, past several pieces of the
  // first: the line reader gives the lines of every piece before the one
  // that holds the damage, then the error the decode thread met, naming the
  // file and an offset at or after the damage (read in the worker's 1 MiB
  // chunks: libzstd does not say where in a chunk it failed).
  const std::string good = Lines(2500000, 3), bad = Lines(400000, 4);
  const std::string first = Compress(Codec::kZstd, good);
  std::string packed = first + Compress(Codec::kZstd, bad);
  const size_t damage = first.size() + (packed.size() - first.size()) / 2;
  for (size_t i = damage; i < damage + 16; ++i) packed[i] = static_cast<char>(packed[i] ^ 0x5a);
  DecompressedInput input(Codec::kZstd, "/in/f.zst", static_cast<int64_t>(packed.size()), Over(packed));
  LineReader reader = ReaderOf(input);
  std::string lines;
  Status s = ReadLines(reader, &lines);
  ASSERT_TRUE(s.IsCorruption()) << s.ToString();
  EXPECT_TRUE(input.corrupt());
  const std::string& m = s.message();
  EXPECT_EQ(m.rfind("/in/f.zst: corrupt zstd data at compressed byte ", 0), 0u) << m;
  EXPECT_EQ(m.find('\n'), std::string::npos) << m;
  const size_t at = std::stoul(m.substr(m.find("byte ") + 5));
  EXPECT_GE(at, damage) << m;
  EXPECT_LE(at, damage + 2 * DecompressedInput::kMinPieceBytes) << m;
  EXPECT_GE(lines.size() + LineReader::kDefaultBufferBytes, good.size());  // all but the last piece's
  EXPECT_TRUE((good + bad).compare(0, lines.size(), lines) == 0);
  // The map asking again gets the same error.
  std::string more;
  EXPECT_EQ(ReadLines(reader, &more).ToString(), s.ToString());
  EXPECT_EQ(more, "");
}

TEST(DecompressedInputTest, AReadErrorOnTheDecodeThreadComesAfterTheBytesBeforeIt) {
  const std::string text = Lines(3000000, 5);
  const std::string packed = Compress(Codec::kGzip, text);
  const int64_t fail_at = static_cast<int64_t>(packed.size()) / 2;
  LineReader::ReadFn raw = [&packed, fail_at](int64_t offset, int64_t n, std::string* out) {
    if (offset >= fail_at) return Status::IOError("block 1 of /in/f.gz: no replica");
    *out = packed.substr(static_cast<size_t>(offset), static_cast<size_t>(n));
    return Status::OK();
  };
  DecompressedInput input(Codec::kGzip, "/in/f.gz", static_cast<int64_t>(packed.size()), raw, 4096);
  LineReader reader = ReaderOf(input);
  std::string lines;
  Status s = ReadLines(reader, &lines);
  EXPECT_EQ(s.ToString(), Status::IOError("block 1 of /in/f.gz: no replica").ToString());
  EXPECT_FALSE(input.corrupt());
  EXPECT_GE(lines.size() + 100, size_t{1} << 20);  // the piece decoded from the first half, less a line
  EXPECT_TRUE(text.compare(0, lines.size(), lines) == 0);
}

TEST(DecompressedInputTest, DestroyedEarlyItStopsAndJoinsTheDecodeThread) {
  // Random bytes: zstd stores them, so every piece takes many raw reads.
  std::string noise(4 << 20, '\0');
  std::mt19937_64 rng(6);
  for (char& c : noise) c = static_cast<char>(rng());
  const std::string packed = Compress(Codec::kZstd, noise);
  const auto length = static_cast<int64_t>(packed.size());

  std::atomic<int> calls = 0;
  {  // Never read: no thread, no raw read.
    DecompressedInput input(Codec::kZstd, "/in/f", length, [&](int64_t, int64_t, std::string*) {
      ++calls;
      return Status::OK();
    });
  }
  EXPECT_EQ(calls, 0);

  {  // One piece read; the thread fills the pieces ahead and waits for room.
    DecompressedInput input(Codec::kZstd, "/in/f", length, Over(packed), 4096);
    std::string piece;
    ASSERT_TRUE(input.Read(0, 1000, &piece).ok());
    EXPECT_EQ(piece, noise.substr(0, 1000));
  }  // a thread still waiting would hang here; one not joined would terminate

  // Stopped inside a raw read (the third piece's, while the reader holds the
  // first): the destructor waits for that read to return.
  const int64_t gate = 2 * DecompressedInput::kMinPieceBytes;
  std::atomic<bool> inside = false, open = false, returned = false;
  std::optional<DecompressedInput> input;
  input.emplace(Codec::kZstd, "/in/f", length, [&](int64_t offset, int64_t n, std::string* out) {
    if (offset >= gate) {
      inside = true;
      while (!open) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      returned = true;
    }
    *out = packed.substr(static_cast<size_t>(offset), static_cast<size_t>(n));
    return Status::OK();
  }, 4096);
  std::string piece;
  ASSERT_TRUE(input->Read(0, DecompressedInput::kMinPieceBytes, &piece).ok());
  for (int i = 0; i < 10000 && !inside; ++i) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  ASSERT_TRUE(inside);
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    open = true;
  });
  input.reset();
  EXPECT_TRUE(returned);
  opener.join();
}

}  // namespace
}  // namespace mr::jobs

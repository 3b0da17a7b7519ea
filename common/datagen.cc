// Deterministic data generators (see datagen.h).
//
// Layout: datagen_internal.h has Sink (exact-size buffered output), ZipfAlias
// (integer alias table) and Vocabulary (the fixed word list); here are the
// text and dna generators, in datagen_web.cc the web one.
//
// Determinism: all randomness is std::mt19937_64's raw output reduced with
// integer arithmetic; the vocabulary and the Zipf table are built with
// integers only. The bytes therefore do not depend on the platform, compiler
// or floating point. Keep it so: never draw twice within one call's arguments
// (their order is unspecified and differs between GCC and Clang). Changing any
// constant or the order of draws changes the output; the golden digests in
// tests/tools/datagen_test.cc catch that.
//
// Ends of files: text is cut wherever `bytes` falls (then '\n'). dna shapes
// its tail so the file ends on a complete sequence line (the last one may be
// shorter than 60 bases). web ends with a complete, well-formed document when
// `bytes` >= 642 (the <mediawiki> head and foot): the last page's wiki text
// is cut, or extended by more sections, so that "</text>…</page>\n
// </mediawiki>\n" lands exactly on `bytes` (if not even a page head fits,
// whitespace pads before </mediawiki>); below 642 bytes the XML is just cut.
#include "common/datagen.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "common/datagen_internal.h"

namespace mr::tools {
namespace datagen {
namespace {

// ---------------------------------------------------------------------------
// text: paragraphs of wrapped lines, a blank line between paragraphs.
void GenerateText(Sink& sink, Rng& rng) {
  const Vocabulary& vocab = Vocabulary::Get();
  Draw32 draw(rng);
  char* p = sink.cursor();
  for (;;) {
    uint64_t r = rng();
    const uint32_t width = 60 + r % 41;           // wrap column
    const uint32_t min_lines = 3 + (r / 41) % 4;  // ends at the first sentence end after
    uint32_t lines = 1, col = 0;
    do {
      r = rng();
      const uint32_t words = 5 + r % 21;
      const uint32_t mark = (r / 21) % 16;
      for (uint32_t i = 0; i < words; ++i) {
        const uint32_t w = draw();
        const uint32_t rank = vocab.Zipf(w);
        const uint32_t len = static_cast<uint32_t>(vocab.Word(rank).size());
        if (col > 0 && col + 1 + len + 1 > width) {
          *p++ = '\n';
          ++lines;
          col = 0;
        } else if (col > 0) {
          *p++ = ' ';
          ++col;
        }
        p = vocab.PutWord(p, rank, i == 0);
        col += len;
        if (i + 1 < words && ZipfAlias::SpareBits(w) == 0) {
          *p++ = ',';
          ++col;
        }
      }
      *p++ = mark < 14 ? '.' : mark < 15 ? '!' : '?';
      ++col;
      if (!sink.Commit(p)) return;
      p = sink.cursor();
    } while (lines < min_lines);
    *p++ = '\n';
    *p++ = '\n';
  }
}

// ---------------------------------------------------------------------------
// dna: FASTA records of a few hundred sequence lines.
constexpr std::array<std::array<char, 4>, 256> MakeQuads() {
  std::array<std::array<char, 4>, 256> quads{};
  for (int i = 0; i < 256; ++i) {
    for (int k = 0; k < 4; ++k) quads[i][k] = "ACGT"[(i >> (2 * k)) & 3];
  }
  return quads;
}
constexpr std::array<std::array<char, 4>, 256> kQuads = MakeQuads();

void GenerateDna(Sink& sink, Rng& rng, uint64_t seed) {
  constexpr int64_t kMaxLine = 81;  // 80 bases and '\n'
  char* p = sink.cursor();
  uint64_t record = 0;
  uint32_t lines_left = 0;
  for (;;) {
    const int64_t left = sink.Remaining(p);
    // Start a record unless only a short tail is left, which the current one takes.
    if (lines_left == 0 && (record == 0 || left >= 100 + 2 * kMaxLine)) {
      p = Put(p, ">seq_");
      p = PutUint(p, ++record);
      p = Put(p, " synthetic genome fragment ");
      p = PutUint(p, seed);
      *p++ = '\n';
      lines_left = Range(rng, 100, 600);
    } else {
      uint64_t r = rng();
      int64_t len = 60 + r % 21;
      r /= 21;
      if (left <= kMaxLine) {
        len = left - 1;  // the file's last line
      } else if (left - (len + 1) == 1) {
        len += len < 80 ? 1 : -1;  // never leave room for just an empty line
      }
      char* const end = p + len;
      for (char* q = p; q < end;) {  // may write up to 31 bytes past `end`
        uint64_t bits = rng();
        for (int k = 0; k < 8; ++k, bits >>= 8, q += 4)
          std::memcpy(q, kQuads[bits & 255].data(), 4);
      }
      if (r % 48 == 0 && len > 0) {  // a rare run of unknown bases
        r /= 48;
        int64_t at = r % len, run = 1 + (r / len) % 12;
        std::memset(p + at, 'N', std::min(run, len - at));
      }
      p = end;
      *p++ = '\n';
      if (lines_left > 0) --lines_left;
    }
    if (!sink.Commit(p)) return;
    p = sink.cursor();
  }
}

}  // namespace
}  // namespace datagen

Result<GenKind> ParseGenKind(const std::string& name) {
  if (name == "text") return GenKind::kText;
  if (name == "web") return GenKind::kWeb;
  if (name == "dna") return GenKind::kDna;
  return Status::InvalidArgument("unknown data kind '" + name + "' (expected text, web or dna)");
}

Status Generate(GenKind kind, int64_t bytes, uint64_t seed, std::ostream& out) {
  if (bytes < 0) return Status::InvalidArgument("size must not be negative");
  if (bytes == 0) return Status::OK();
  try {
    datagen::Sink sink(out, bytes);
    datagen::Rng rng(seed);
    switch (kind) {
      case GenKind::kText:
        datagen::GenerateText(sink, rng);
        break;
      case GenKind::kWeb:
        datagen::GenerateWeb(sink, rng);
        break;
      case GenKind::kDna:
        datagen::GenerateDna(sink, rng, seed);
        break;
    }
    if (sink.failed() || !out.flush()) return Status::IOError("writing generated data failed");
  } catch (const std::exception& e) {
    return Status::IOError(std::string("generating data: ") + e.what());
  }
  return Status::OK();
}

}  // namespace mr::tools

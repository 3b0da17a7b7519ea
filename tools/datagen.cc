// Deterministic data generators (see datagen.h).
//
// Layout: Sink (exact-size buffered output), ZipfAlias (integer alias table),
// Vocabulary (the fixed word list), then one generator per kind.
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
#include "tools/datagen.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <exception>
#include <random>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace mr::tools {
namespace {

using Rng = std::mt19937_64;

// An integer in [lo, hi]. The modulo bias (< 2^-38 here) does not matter.
inline uint32_t Range(Rng& rng, uint32_t lo, uint32_t hi) {
  return lo + static_cast<uint32_t>(rng() % (hi - lo + 1));
}

inline char* Put(char* p, std::string_view s) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

char* PutUint(char* p, uint64_t v) {
  char digits[20];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (n > 0) *p++ = digits[--n];
  return p;
}

char* PutUint2(char* p, uint32_t v) {  // two digits, zero-padded
  *p++ = static_cast<char>('0' + v / 10 % 10);
  *p++ = static_cast<char>('0' + v % 10);
  return p;
}

// ---------------------------------------------------------------------------
// Sink: buffered output cut at exactly `limit` bytes, the last one '\n'.
//
// A generator writes straight into the buffer through a local cursor, at most
// kStepBytes per step, then hands the cursor back with Commit(). Commit()
// writes a full chunk to the stream; once `limit` bytes are pending it writes
// only those, makes the last one '\n', and returns false (as on a failure).
class Sink {
 public:
  static constexpr int64_t kChunkBytes = int64_t{1} << 20;
  static constexpr int64_t kStepBytes = int64_t{64} << 10;

  // REQUIRES: limit > 0.
  Sink(std::ostream& out, int64_t limit) : out_(out), left_(limit), buf_(kChunkBytes + kStepBytes) {
    Reset();
  }

  char* cursor() const { return pos_; }
  // Bytes still to produce after `cursor`.
  int64_t Remaining(const char* cursor) const { return left_ - (cursor - buf_.data()); }
  bool failed() const { return failed_; }

  // Returns true if the generator should go on (from cursor()).
  bool Commit(char* cursor) {
    pos_ = cursor;
    return pos_ < flush_at_ || Flush();
  }

  // Copies `s` in steps. Returns what the last Commit() returned.
  bool Write(std::string_view s) {
    do {
      size_t n = std::min<size_t>(s.size(), kStepBytes);
      if (!Commit(Put(pos_, s.substr(0, n)))) return false;
      s.remove_prefix(n);
    } while (!s.empty());
    return true;
  }

 private:
  bool Flush() {
    int64_t n = pos_ - buf_.data();
    bool last = n >= left_;
    if (last) {
      n = left_;
      buf_[n - 1] = '\n';
    }
    out_.write(buf_.data(), n);
    left_ -= n;
    if (!out_) failed_ = true;
    Reset();
    return !last && !failed_;
  }
  void Reset() {
    pos_ = buf_.data();
    flush_at_ = pos_ + std::min(kChunkBytes, left_);
  }

  std::ostream& out_;
  int64_t left_;  // bytes not yet written to out_
  std::vector<char> buf_;
  char* pos_ = nullptr;
  char* flush_at_ = nullptr;
  bool failed_ = false;
};

// ---------------------------------------------------------------------------
// Zipf(s=1) over ranks [0, n) as a Walker/Vose alias table in integers. One
// 32-bit draw picks a bucket (bits 0..12) and flips a 15-bit coin (bits
// 13..27); bits 28..31 are left for the caller (SpareBits). A 15-bit coin
// quantises each bucket's split to 1/32768, far below what a word count sees,
// and lets one mt19937_64 output serve two words: the engine is the hot spot.
class ZipfAlias {
 public:
  static constexpr int kBucketBits = 13;
  static constexpr int kCoinBits = 15;
  static constexpr uint32_t kBuckets = 1u << kBucketBits;

  // REQUIRES: 0 < n <= kBuckets.
  explicit ZipfAlias(uint32_t n) : entry_(kBuckets) {
    constexpr uint64_t kCap = uint64_t{1} << kCoinBits;  // weight per bucket
    constexpr uint64_t kTotal = kCap << kBucketBits;
    // Weights b/(r+1), b chosen so they sum to about kTotal (b ~ kTotal / H_n,
    // computed in fixed point); the rounding difference goes to rank 0.
    uint64_t harmonic = 0;  // H_n * 2^40
    for (uint32_t r = 0; r < n; ++r) harmonic += (uint64_t{1} << 40) / (r + 1);
    const uint64_t b = (kTotal << 24) / (harmonic >> 16);
    std::vector<uint64_t> w(kBuckets, 0);
    uint64_t sum = 0;
    for (uint32_t r = 0; r < n; ++r) sum += w[r] = b / (r + 1);
    w[0] = w[0] + kTotal - sum;  // modular: also right if sum > kTotal

    std::vector<uint32_t> small, large;
    for (uint32_t i = kBuckets; i-- > 0;) (w[i] < kCap ? small : large).push_back(i);
    for (uint32_t i = 0; i < kBuckets; ++i) entry_[i] = Entry(kCap, i);
    while (!small.empty() && !large.empty()) {
      uint32_t s = small.back(), l = large.back();
      small.pop_back();
      entry_[s] = Entry(w[s], l);
      w[l] -= kCap - w[s];
      if (w[l] < kCap) {
        large.pop_back();
        small.push_back(l);
      }
    }
  }

  uint32_t Sample(uint32_t r) const {
    const uint32_t bucket = r & (kBuckets - 1);
    const uint32_t e = entry_[bucket];
    const uint32_t coin = (r >> kBucketBits) & ((1u << kCoinBits) - 1);
    return coin < (e >> kBucketBits) ? bucket : e & (kBuckets - 1);
  }
  static uint32_t SpareBits(uint32_t r) { return r >> (kBucketBits + kCoinBits); }

 private:
  static uint32_t Entry(uint64_t threshold, uint32_t alias) {
    return static_cast<uint32_t>(threshold << kBucketBits | alias);
  }

  std::vector<uint32_t> entry_;  // threshold << kBucketBits | alias
};

// ---------------------------------------------------------------------------
// The fixed vocabulary, most frequent first: common English words, then
// pronounceable made-up words from a fixed-seed generator. Each word sits in
// a zero-padded 16-byte slot so it is copied with one fixed-size memcpy.
// Immutable after construction; Get() is thread-safe.
constexpr std::string_view kCommonWords =
    "the of and to a in is it you that he was for on are with as his they be at one have this "
    "from or had by word but what some we can out other were all there when up use your how "
    "said an each she which do their time if will way about many then them write would like so "
    "these her long make thing see him two has look more day could go come did number sound no "
    "most people my over know water than call first who may down side been now find any new "
    "work part take get place made live where after back little only round man year came show "
    "every good me give our under name very through just form sentence great think say help low "
    "line differ turn cause much mean before move right boy old too same tell does set three "
    "want air well also play small end put home read hand port large spell add even land here "
    "must big high such follow act why ask men change went light kind off need house picture try "
    "us again animal point mother world near build self earth father head stand own page should "
    "country found answer school grow study still learn plant cover food sun four between state "
    "keep eye never last let thought city tree cross farm hard start might story saw far sea draw "
    "left late run while press close night real life few north open seem together next white "
    "children begin got walk example ease paper group always music those both mark often letter "
    "until mile river car feet care second book carry took science eat room friend began idea "
    "fish mountain stop once base hear horse cut sure watch color face wood main enough plain "
    "girl usual young ready above ever red list though feel talk bird soon body dog family direct "
    "pose leave song measure door product black short class wind question happen complete ship "
    "area half rock order fire south problem piece told knew pass since top whole king space "
    "heard best hour better true during hundred five remember step early hold west ground "
    "interest reach fast sing listen six table travel less morning ten simple several toward war "
    "lay against pattern slow center love person money serve appear road map rain rule govern "
    "pull cold notice voice unit power town fine certain fly fall lead cry dark machine note wait "
    "plan figure star box field rest correct able pound done beauty drive stood contain front "
    "teach week final gave green quick develop ocean warm free minute strong special mind behind "
    "clear tail produce fact street inch nothing course stay wheel full force blue object decide "
    "surface deep moon island foot system busy test record boat common gold possible plane dry "
    "wonder laugh thousand ago ran check game shape miss brought heat snow bring yes distant fill "
    "east paint language among";

class Vocabulary {
 public:
  static constexpr uint32_t kSize = 5000;
  static constexpr size_t kSlot = 16;
  static constexpr size_t kMaxLen = 14;
  // The most common ranks (function words) are skipped when naming things.
  static constexpr uint32_t kFirstNoun = 100;

  static const Vocabulary& Get() {
    static const Vocabulary* const vocab = new Vocabulary();
    return *vocab;
  }

  std::string_view Word(uint32_t rank) const { return {&slots_[rank * kSlot], len_[rank]}; }
  uint32_t Zipf(uint32_t r) const { return zipf_.Sample(r); }
  uint32_t Uniform(Rng& rng) const { return Range(rng, kFirstNoun, kSize - 1); }

  // Writes word `rank` at `p` (writing up to 16 bytes) and returns its end.
  char* PutWord(char* p, uint32_t rank, bool capital = false) const {
    std::memcpy(p, &slots_[rank * kSlot], kSlot);
    if (capital) *p = static_cast<char>(*p - 'a' + 'A');
    return p + len_[rank];
  }

 private:
  Vocabulary() : slots_(kSize * kSlot, '\0'), zipf_(kSize) {
    std::unordered_set<std::string> seen;
    auto add = [&](std::string_view w) {
      if (w.empty() || w.size() > kMaxLen || !seen.emplace(w).second) return;
      std::memcpy(&slots_[len_.size() * kSlot], w.data(), w.size());
      len_.push_back(static_cast<uint8_t>(w.size()));
    };
    for (size_t i = 0; i < kCommonWords.size();) {
      size_t end = std::min(kCommonWords.find(' ', i), kCommonWords.size());
      add(kCommonWords.substr(i, end - i));
      i = end + 1;
    }
    static constexpr std::string_view kOnsets[] = {
        "",   "b",  "c",  "d",  "f",  "g",  "h",  "j",  "k",  "l",   "m",  "n",  "p",  "r",
        "s",  "t",  "v",  "w",  "y",  "z",  "bl", "br", "ch", "cl",  "cr", "dr", "fl", "fr",
        "gl", "gr", "pl", "pr", "sc", "sh", "sl", "sp", "st", "str", "th", "tr", "wh"};
    static constexpr std::string_view kNuclei[] = {
        "a", "e", "i", "o", "u", "a", "e", "i", "o", "ai", "ea", "ee", "ie", "oa", "ou", "oo", "y"};
    static constexpr std::string_view kCodas[] = {"",   "",   "",   "n",  "r",  "s",  "t",
                                                  "l",  "m",  "nd", "nt", "st", "rn", "ck",
                                                  "ng", "sh", "th", "ld", "rt"};
    static constexpr std::string_view kSuffixes[] = {"ing",  "ed",  "er",   "ly",  "ness",
                                                     "ment", "ful", "less", "ous", "ion",
                                                     "ity",  "al",  "ish",  "able"};
    auto pick = [](Rng& g, const auto& list) { return list[g() % std::size(list)]; };
    Rng gen(0x6d72'6461'7461'67);  // fixed: the vocabulary never depends on the seed
    std::string w;
    while (len_.size() < kSize) {
      uint64_t r = gen() % 100;
      int syllables = r < 20 ? 1 : r < 75 ? 2 : 3;
      w.clear();
      for (int s = 0; s < syllables; ++s) {
        w += pick(gen, kOnsets);
        w += pick(gen, kNuclei);
        w += pick(gen, kCodas);
      }
      if (gen() % 100 < 30) w += pick(gen, kSuffixes);
      if (w.size() >= 3) add(w);
    }
  }

  std::vector<char> slots_;
  std::vector<uint8_t> len_;
  ZipfAlias zipf_;
};

// Hands out each 64-bit draw as two 32-bit ones, low half first.
class Draw32 {
 public:
  explicit Draw32(Rng& rng) : rng_(rng) {}
  uint32_t operator()() {
    if (have_high_) {
      have_high_ = false;
      return high_;
    }
    const uint64_t r = rng_();
    high_ = static_cast<uint32_t>(r >> 32);
    have_high_ = true;
    return static_cast<uint32_t>(r);
  }

 private:
  Rng& rng_;
  uint32_t high_ = 0;
  bool have_high_ = false;
};

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

constexpr std::string_view kMonths[] = {"January",   "February", "March",    "April",
                                        "May",       "June",     "July",     "August",
                                        "September", "October",  "November", "December"};
constexpr std::string_view kHeadings[] = {
    "History", "Etymology", "Geography",  "Early life",  "Career",   "Culture", "Economy",
    "Legacy",  "Reception", "Background", "Description", "Politics", "Works",   "Distribution"};
constexpr std::string_view kTemplates[] = {"Use dmy dates", "Refimprove",      "Unreferenced",
                                           "Use mdy dates", "Citation needed", "Multiple issues"};
constexpr std::string_view kMediawikiHeader =
    "<mediawiki xmlns=\"http://www.mediawiki.org/xml/export-0.10/\" "
    "xmlns:xsi=\"http://www.w3.org/2001/XMLSchema-instance\" "
    "xsi:schemaLocation=\"http://www.mediawiki.org/xml/export-0.10/ "
    "http://www.mediawiki.org/xml/export-0.10.xsd\" version=\"0.10\" xml:lang=\"en\">\n"
    "  <siteinfo>\n"
    "    <sitename>Synthwiki</sitename>\n"
    "    <dbname>synthwiki</dbname>\n"
    "    <base>https://synthwiki.example.org/wiki/Main_Page</base>\n"
    "    <generator>mrctl gen web</generator>\n"
    "    <case>first-letter</case>\n"
    "    <namespaces>\n"
    "      <namespace key=\"0\" case=\"first-letter\" />\n"
    "      <namespace key=\"14\" case=\"first-letter\">Category</namespace>\n"
    "    </namespaces>\n"
    "  </siteinfo>\n";
constexpr std::string_view kMediawikiFooter = "</mediawiki>\n";

// web: a MediaWiki export of made-up articles. Each page is built in a
// staging buffer (its wiki text last), then copied to the sink; the closing
// tags after the wiki text have a fixed length, so the last page can be cut
// to end the document exactly at the size asked for.
class WebGenerator {
 public:
  WebGenerator(Sink& sink, Rng& rng) : sink_(sink), rng_(rng), vocab_(Vocabulary::Get()) {}

  void Run() {
    if (!sink_.Write(kMediawikiHeader)) return;
    for (;;) {
      BuildPage();
      const int64_t left = sink_.Remaining(sink_.cursor());
      const int64_t tail = kSuffixBytes + static_cast<int64_t>(kMediawikiFooter.size());
      if (Staged() + tail + kMarginBytes <= left) {
        if (!sink_.Write({stage_.data(), staged_}) || !sink_.Write(Suffix())) return;
        continue;
      }
      FinishWith(left - tail);
      return;
    }
  }

 private:
  // Suffix(): "</text>", the revision's sha1, the closing tags.
  static constexpr std::string_view kSuffixHead = "</text>\n      <sha1>";
  static constexpr std::string_view kSuffixTail = "</sha1>\n    </revision>\n  </page>\n";
  static constexpr int kSha1Chars = 31;
  static constexpr int64_t kSuffixBytes = kSuffixHead.size() + kSha1Chars + kSuffixTail.size();
  // A page is written whole only if this much room stays after it for the last one.
  static constexpr int64_t kMarginBytes = 4096;

  int64_t Staged() const { return static_cast<int64_t>(staged_); }

  // Ends the document with the staged page cut to `room` bytes before its suffix.
  void FinishWith(int64_t room) {
    if (room < body_begin_) {  // not even the page head fits: pad with whitespace
      int64_t pad = room + kSuffixBytes;
      if (pad > 0) {
        std::string spaces(pad, ' ');
        spaces.back() = '\n';
        if (!sink_.Write(spaces)) return;
      }
      sink_.Write(kMediawikiFooter);
      return;
    }
    while (Staged() < room) AddSection();
    staged_ = room;
    // Don't leave half an entity such as "&qu".
    std::string_view body(stage_.data() + body_begin_, staged_ - body_begin_);
    size_t amp = body.rfind('&');
    if (amp != std::string_view::npos && body.find(';', amp) == std::string_view::npos) {
      std::fill(stage_.begin() + body_begin_ + amp, stage_.begin() + staged_, ' ');
    }
    if (sink_.Write({stage_.data(), staged_}) && sink_.Write(Suffix())) {
      sink_.Write(kMediawikiFooter);
    }
  }

  // Makes room for `n` more bytes after `p` in stage_; returns the (possibly
  // moved) cursor. stage_.size() is the room, staged_ the bytes in use.
  char* Reserve(char* p, size_t n) {
    size_t used = p - stage_.data();
    if (stage_.size() - used < n) stage_.resize(std::max(stage_.size() * 2, used + n));
    return stage_.data() + used;
  }

  // "Word word …": the first word capitalised, `all_caps` capitalises all.
  char* Name(char* p, uint32_t words, bool all_caps = false) {
    for (uint32_t i = 0; i < words; ++i) {
      if (i > 0) *p++ = ' ';
      p = vocab_.PutWord(p, vocab_.Uniform(rng_), i == 0 || all_caps);
    }
    return p;
  }

  char* Date(char* p) {  // "17 March 2014"
    p = PutUint(p, Range(rng_, 1, 28));
    *p++ = ' ';
    p = Put(p, kMonths[rng_() % 12]);
    *p++ = ' ';
    return PutUint(p, Range(rng_, 2001, 2016));
  }

  char* Ref(char* p) {
    const uint64_t kind = rng_() % 4;
    if (kind == 0) {
      p = Put(p, "&lt;ref name=&quot;");
      p = vocab_.PutWord(p, vocab_.Uniform(rng_));
      p = PutUint(p, rng_() % 100);
      return Put(p, "&quot; /&gt;");
    }
    p = Put(p, "&lt;ref&gt;{{cite ");
    if (kind == 1) {
      p = Put(p, "book |last=");
      p = Name(p, 1);
      p = Put(p, " |first=");
      p = Name(p, 1);
      p = Put(p, " |title=");
      p = Name(p, Range(rng_, 2, 5));
      p = Put(p, " |year=");
      p = PutUint(p, Range(rng_, 1850, 2015));
      p = Put(p, " |page=");
      p = PutUint(p, Range(rng_, 1, 600));
    } else {
      p = Put(p, "web |url=http://www.");
      p = vocab_.PutWord(p, vocab_.Uniform(rng_));
      p = Put(p, ".org/");
      p = vocab_.PutWord(p, vocab_.Uniform(rng_));
      *p++ = '/';
      p = PutUint(p, rng_() % 100000);
      p = Put(p, " |title=");
      p = Name(p, Range(rng_, 2, 6));
      p = Put(p, " |accessdate=");
      p = Date(p);
    }
    return Put(p, "}}&lt;/ref&gt;");
  }

  // One sentence of wiki text with links, italics and sometimes a reference.
  // Writes at most ~2 KiB. `capital`: capitalise the first word.
  char* Sentence(char* p, bool capital) {
    uint64_t r = rng_();
    const uint32_t words = 5 + r % 21;
    const bool ref = (r / 21) % 6 == 0;
    for (uint32_t i = 0; i < words; ++i) {
      const uint64_t w = rng_();
      const uint32_t rank = vocab_.Zipf(static_cast<uint32_t>(w));
      const uint32_t bits = (w >> 32) & 63;
      if (i > 0) *p++ = ' ';
      const bool cap = capital && i == 0;
      if (bits < 4) {  // [[link]]
        p = Put(p, "[[");
        p = vocab_.PutWord(p, rank, cap);
        p = Put(p, "]]");
      } else if (bits < 6) {  // [[Target page|shown]]
        p = Put(p, "[[");
        p = Name(p, Range(rng_, 1, 3));
        *p++ = '|';
        p = vocab_.PutWord(p, rank, cap);
        p = Put(p, "]]");
      } else if (bits == 6) {  // ''italic''
        p = Put(p, "''");
        p = vocab_.PutWord(p, rank, cap);
        p = Put(p, "''");
      } else if (bits == 7 && i > 0 && i + 1 < words) {
        p = Put(p, "&amp; ");
        p = vocab_.PutWord(p, rank);
      } else {
        p = vocab_.PutWord(p, rank, cap);
      }
      if (bits >= 60 && i + 1 < words) *p++ = ',';
    }
    *p++ = '.';
    return ref ? Ref(p) : p;
  }

  // `lead`: the first sentence continues "'''Title''' is a ".
  char* Paragraph(char* p, uint32_t sentences, bool lead = false) {
    for (uint32_t i = 0; i < sentences; ++i) {
      p = Reserve(p, 4096);
      if (i > 0) *p++ = ' ';
      p = Sentence(p, !(lead && i == 0));
    }
    return p;
  }

  // "\n== Heading ==\n" and one to three paragraphs, sometimes a list.
  void AddSection() {
    char* p = Reserve(stage_.data() + staged_, 4096);
    const uint64_t r = rng_();
    p = Put(p, r % 5 == 0 ? "\n\n=== " : "\n\n== ");
    p = (r / 5) % 2 == 0 ? Put(p, kHeadings[(r / 10) % std::size(kHeadings)])
                         : Name(p, Range(rng_, 1, 3));
    p = Put(p, r % 5 == 0 ? " ===\n" : " ==\n");
    const uint32_t paragraphs = Range(rng_, 1, 3);
    for (uint32_t i = 0; i < paragraphs; ++i) {
      if (i > 0) p = Put(p, "\n\n");
      p = Paragraph(p, Range(rng_, 2, 6));
    }
    if ((r / 120) % 4 == 0) {
      const uint32_t items = Range(rng_, 2, 6);
      for (uint32_t i = 0; i < items; ++i) {
        p = Reserve(p, 1024);
        p = Put(p, "\n* [[");
        p = Name(p, Range(rng_, 1, 3));
        p = Put(p, "]] &lt;br /&gt; ");
        p = Name(p, Range(rng_, 2, 5));
      }
    }
    staged_ = p - stage_.data();
  }

  // Stages the page's head and wiki text (no closing tags; see Suffix()).
  void BuildPage() {
    char* p = Reserve(stage_.data(), 16384);  // the page head needs < 1 KiB
    const bool redirect = rng_() % 8 == 0;
    page_id_ += Range(rng_, 1, 40);
    rev_id_ += Range(rng_, 1, 5000);
    p = Put(p, "  <page>\n    <title>");
    char* title = p;
    const uint32_t title_words = Range(rng_, 1, 3);
    p = Name(p, title_words, /*all_caps=*/rng_() % 3 == 0);
    const std::string title_copy(title, p);  // stage_ may move later
    p = Put(p, "</title>\n    <ns>0</ns>\n    <id>");
    p = PutUint(p, page_id_);
    p = Put(p, "</id>\n");
    std::string target;
    if (redirect) {
      char* t = p = Put(p, "    <redirect title=\"");
      p = Name(p, Range(rng_, 1, 3));
      target.assign(t, p);
      p = Put(p, "\" />\n");
    }
    p = Put(p, "    <revision>\n      <id>");
    p = PutUint(p, rev_id_);
    p = Put(p, "</id>\n      <parentid>");
    p = PutUint(p, rev_id_ - Range(rng_, 1, 1000000));
    p = Put(p, "</parentid>\n      <timestamp>");
    p = PutUint(p, Range(rng_, 2003, 2016));
    const uint64_t t = rng_();
    *p++ = '-';
    p = PutUint2(p, 1 + t % 12);
    *p++ = '-';
    p = PutUint2(p, 1 + (t >> 8) % 28);
    *p++ = 'T';
    p = PutUint2(p, (t >> 16) % 24);
    *p++ = ':';
    p = PutUint2(p, (t >> 24) % 60);
    *p++ = ':';
    p = PutUint2(p, (t >> 32) % 60);
    p = Put(p, "Z</timestamp>\n      <contributor>\n");
    if ((t >> 40) & 1) {
      p = Put(p, "        <ip>");
      for (int i = 0; i < 4; ++i) {
        if (i > 0) *p++ = '.';
        p = PutUint(p, Range(rng_, 1, 254));
      }
      p = Put(p, "</ip>\n");
    } else {
      p = Put(p, "        <username>");
      p = Name(p, Range(rng_, 1, 2), true);
      p = Put(p, "</username>\n        <id>");
      p = PutUint(p, Range(rng_, 1, 30000000));
      p = Put(p, "</id>\n");
    }
    p = Put(p, "      </contributor>\n");
    if ((t >> 41) & 1) {
      p = Put(p, "      <comment>");
      p = Name(p, Range(rng_, 1, 4));
      p = Put(p, " [[");
      p = Name(p, Range(rng_, 1, 2));
      p = Put(p, "]]</comment>\n");
    }
    p = Put(p,
            "      <model>wikitext</model>\n      <format>text/x-wiki</format>\n"
            "      <text xml:space=\"preserve\">");
    body_begin_ = p - stage_.data();
    if (redirect) {
      p = Put(p, "#REDIRECT [[");
      p = Put(p, target);
      p = Put(p, "]]");
      if ((t >> 42) & 1) p = Put(p, "\n\n{{R from CamelCase}}");
      staged_ = p - stage_.data();
      return;
    }
    if ((t >> 43) & 1) {
      p = Put(p, "{{");
      p = Put(p, kTemplates[(t >> 44) % std::size(kTemplates)]);
      p = Put(p, "|date=");
      p = Put(p, kMonths[(t >> 48) % 12]);
      *p++ = ' ';
      p = PutUint(p, Range(rng_, 2006, 2016));
      p = Put(p, "}}\n");
    }
    if ((t >> 52) & 1) {
      p = Put(p, "{{Infobox ");
      p = vocab_.PutWord(p, vocab_.Uniform(rng_));
      p = Put(p, "\n| name = ");
      p = Put(p, title_copy);
      p = Put(p, "\n| image = ");
      p = Name(p, 2);
      p = Put(p, ".jpg\n| established = ");
      p = PutUint(p, Range(rng_, 1200, 2010));
      p = Put(p, "\n| population = ");
      p = PutUint(p, rng_() % 10000000);
      p = Put(p, "\n}}\n");
    }
    p = Put(p, "'''");
    p = Put(p, title_copy);
    p = Put(p, "''' is a ");
    p = Paragraph(p, Range(rng_, 2, 5), /*lead=*/true);
    staged_ = p - stage_.data();
    const uint32_t sections = Range(rng_, 1, 5);
    for (uint32_t i = 0; i < sections; ++i) AddSection();
    p = Reserve(stage_.data() + staged_, 2048);
    p = Put(p, "\n\n== References ==\n{{Reflist}}\n\n== External links ==\n* [http://www.");
    p = vocab_.PutWord(p, vocab_.Uniform(rng_));
    p = Put(p, ".org/ ");
    p = Name(p, Range(rng_, 1, 3));
    p = Put(p, "]\n");
    const uint32_t categories = Range(rng_, 1, 4);
    for (uint32_t i = 0; i < categories; ++i) {
      p = Put(p, "\n[[Category:");
      p = Name(p, Range(rng_, 1, 3));
      p = Put(p, "]]");
    }
    staged_ = p - stage_.data();
  }

  // The text that closes a page: always kSuffixBytes long.
  std::string_view Suffix() {
    char* p = Put(suffix_.data(), kSuffixHead);
    for (int i = 0; i < kSha1Chars; ++i) *p++ = "0123456789abcdefghijklmnopqrstuvwxyz"[rng_() % 36];
    Put(p, kSuffixTail);
    return {suffix_.data(), kSuffixBytes};
  }

  Sink& sink_;
  Rng& rng_;
  const Vocabulary& vocab_;
  std::string stage_;
  size_t staged_ = 0;       // bytes of stage_ in use
  int64_t body_begin_ = 0;  // offset of the wiki text in stage_
  std::array<char, kSuffixBytes> suffix_{};
  uint64_t page_id_ = 10;
  uint64_t rev_id_ = 600000000;
};

}  // namespace

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
    Sink sink(out, bytes);
    Rng rng(seed);
    switch (kind) {
      case GenKind::kText:
        GenerateText(sink, rng);
        break;
      case GenKind::kWeb:
        WebGenerator(sink, rng).Run();
        break;
      case GenKind::kDna:
        GenerateDna(sink, rng, seed);
        break;
    }
    if (sink.failed() || !out.flush()) return Status::IOError("writing generated data failed");
  } catch (const std::exception& e) {
    return Status::IOError(std::string("generating data: ") + e.what());
  }
  return Status::OK();
}

}  // namespace mr::tools

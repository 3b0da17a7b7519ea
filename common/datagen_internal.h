// What the data generators share (datagen.cc: text and dna; datagen_web.cc:
// web): the random source, output helpers, the exact-size Sink, the Zipf
// table and the vocabulary. Internal to tools/; the rules of determinism in
// datagen.cc's header comment hold for everything here.
#pragma once

#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <ostream>
#include <random>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

namespace mr::tools::datagen {

using Rng = std::mt19937_64;

// An integer in [lo, hi]. The modulo bias (< 2^-38 here) does not matter.
inline uint32_t Range(Rng& rng, uint32_t lo, uint32_t hi) {
  return lo + static_cast<uint32_t>(rng() % (hi - lo + 1));
}

inline char* Put(char* p, std::string_view s) {
  std::memcpy(p, s.data(), s.size());
  return p + s.size();
}

inline char* PutUint(char* p, uint64_t v) {
  char digits[20];
  int n = 0;
  do {
    digits[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  while (n > 0) *p++ = digits[--n];
  return p;
}

inline char* PutUint2(char* p, uint32_t v) {  // two digits, zero-padded
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

// The web generator (datagen_web.cc): a MediaWiki export of made-up
// articles, exactly sink's limit long.
void GenerateWeb(Sink& sink, Rng& rng);

}  // namespace mr::tools::datagen

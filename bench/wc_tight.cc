// wc_tight: a tight single-process word count, the baseline that the
// WordCount benchmark (issue 3, bench/jobs_baselines.sh) measures the engine
// against. Not part of the runtime; it shares no code with jobs/.
//
//   wc_tight FILE [--threads N] [--sse2] (--output OUT | --no-output)
//
// Words are maximal runs of bytes that are not ASCII whitespace (space, \t,
// \n, \v, \f, \r), as in the WordCount job; no case folding. OUT gets one
// "word\tcount\n" line per distinct word, sorted bytewise (the order of
// LC_ALL=C sort). Exit status 0 on success, 1 on an I/O error, 2 on bad usage.
//
// stdout gets one JSON line, e.g.
//   {"tool":"wc_tight","threads":2,"bytes":1073741824,"words":182432582,
//    "distinct":35001,"count_seconds":2.38,"output_seconds":0.008,"mb_per_s":451.1}
// count_seconds covers mapping the file, counting and merging the per-thread
// tables; output_seconds covers sorting and writing OUT; mb_per_s is
// bytes / 1e6 / count_seconds.
//
// How: the file is mmap'ed; with N threads it is cut into N ranges whose
// edges are moved forward to a whitespace byte, so no word straddles two
// ranges. Each thread counts its range into its own open-addressing table
// (linear probing, XXH3 hashes, keys copied once into the table's arena);
// the tables are then merged into the first. --sse2 finds the words 64 bytes
// at a time (a mask of the separators, word edges by count-trailing-zeros), as
// the engine's splitter does since issue 15 (written apart from it, so the
// two still check each other); without it, byte by byte.
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include <emmintrin.h>

namespace {

constexpr std::array<bool, 256> MakeSpaceTable() {
  std::array<bool, 256> t{};
  for (unsigned char c : {' ', '\t', '\n', '\v', '\f', '\r'}) t[c] = true;
  return t;
}
constexpr std::array<bool, 256> kSpace = MakeSpaceTable();

// Bit i set: p[i] is whitespace. \t..\r (9..13) moved to -128..-124 are
// the only bytes below -123 as signed; space is compared alone.
uint64_t SpaceBits16(const char* p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i control =
      _mm_cmplt_epi8(_mm_add_epi8(v, _mm_set1_epi8(static_cast<char>(0x80 - 9))), _mm_set1_epi8(-123));
  return static_cast<uint32_t>(
      _mm_movemask_epi8(_mm_or_si128(control, _mm_cmpeq_epi8(v, _mm_set1_epi8(' ')))));
}

// Counts words. Keys are copied into one arena ([uint32 length][bytes]...),
// so the table and the keys of the frequent words stay in the core's cache;
// slots are 16 bytes. Not thread-safe: one table per thread (cache-line
// aligned, so that neighbouring tables do not share a line).
// REQUIRES: the distinct words of one table total less than 4 GiB.
class alignas(64) WordTable {
 public:
  WordTable() : slots_(kInitialSlots), mask_(kInitialSlots - 1) { arena_.reserve(1 << 20); }

  void Add(const char* word, uint32_t len, uint64_t n = 1) {
    const uint64_t h = XXH3_64bits(word, len);
    const uint32_t tag = static_cast<uint32_t>(h >> 32);
    for (size_t i = h & mask_;; i = (i + 1) & mask_) {
      Slot& s = slots_[i];
      if (s.count == 0) {
        s = Slot{n, tag, Store(word, len)};
        if (++used_ * 4 > slots_.size() * 3) Grow();
        return;
      }
      if (s.tag == tag && Key(s) == std::string_view(word, len)) {
        s.count += n;
        return;
      }
    }
  }

  // Counts every word of [p, end).
  void CountRange(const char* p, const char* end) {
    const auto* u = reinterpret_cast<const unsigned char*>(p);
    const auto* e = reinterpret_cast<const unsigned char*>(end);
    uint64_t words = 0;
    while (true) {
      while (u < e && kSpace[*u]) ++u;
      if (u == e) break;
      const unsigned char* w = u;
      while (u < e && !kSpace[*u]) ++u;
      Add(reinterpret_cast<const char*>(w), static_cast<uint32_t>(u - w));
      words++;
    }
    words_ += words;
  }

  // CountRange, 64 bytes at a time while 64 remain, then byte by byte from
  // the last word not yet counted.
  void CountRangeSse2(const char* p, const char* end) {
    const char* word = nullptr;  // start of a word not yet ended
    for (; end - p >= 64; p += 64) {
      uint64_t space = 0;
      for (int i = 0; i < 4; ++i) space |= SpaceBits16(p + 16 * i) << (16 * i);
      const uint64_t in_word_before = word != nullptr ? 1 : 0;
      uint64_t starts = ~space & ~(~space << 1 | in_word_before);
      uint64_t ends = space & (~space << 1 | in_word_before);
      while (true) {  // starts and ends alternate
        if (word != nullptr) {
          if (ends == 0) break;
          const char* e = p + __builtin_ctzll(ends);
          ends &= ends - 1;
          Add(word, static_cast<uint32_t>(e - word));
          words_++;
          word = nullptr;
        } else {
          if (starts == 0) break;
          word = p + __builtin_ctzll(starts);
          starts &= starts - 1;
        }
      }
    }
    CountRange(word != nullptr ? word : p, end);
  }

  void MergeFrom(const WordTable& other) {
    for (const Slot& s : other.slots_) {
      if (s.count != 0) {
        const std::string_view k = other.Key(s);
        Add(k.data(), static_cast<uint32_t>(k.size()), s.count);
      }
    }
    words_ += other.words_;
  }

  // (word, count) pairs sorted bytewise by word. Views into this table.
  std::vector<std::pair<std::string_view, uint64_t>> Sorted() const {
    std::vector<std::pair<std::string_view, uint64_t>> out;
    out.reserve(used_);
    for (const Slot& s : slots_) {
      if (s.count != 0) out.emplace_back(Key(s), s.count);
    }
    // string_view compares with memcmp: unsigned bytes, then length.
    std::sort(out.begin(), out.end());
    return out;
  }

  uint64_t words() const { return words_; }
  size_t distinct() const { return used_; }

 private:
  static constexpr size_t kInitialSlots = size_t{1} << 16;

  struct Slot {
    uint64_t count = 0;  // 0: empty slot
    uint32_t tag = 0;    // high half of the hash, checked before the key
    uint32_t offset = 0;  // of the key's length prefix in arena_
  };

  uint32_t Store(const char* word, uint32_t len) {
    const size_t offset = arena_.size();
    if (offset + sizeof len + len > UINT32_MAX) {
      std::fprintf(stderr, "wc_tight: distinct words exceed 4 GiB\n");
      std::exit(1);
    }
    arena_.append(reinterpret_cast<const char*>(&len), sizeof len);
    arena_.append(word, len);
    return static_cast<uint32_t>(offset);
  }

  std::string_view Key(const Slot& s) const {
    uint32_t len;
    std::memcpy(&len, arena_.data() + s.offset, sizeof len);
    return {arena_.data() + s.offset + sizeof len, len};
  }

  void Grow() {
    std::vector<Slot> old(slots_.size() * 2);
    old.swap(slots_);
    mask_ = slots_.size() - 1;
    for (const Slot& s : old) {
      if (s.count == 0) continue;
      const std::string_view k = Key(s);
      size_t i = XXH3_64bits(k.data(), k.size()) & mask_;
      while (slots_[i].count != 0) i = (i + 1) & mask_;
      slots_[i] = s;
    }
  }

  std::vector<Slot> slots_;
  size_t mask_;
  size_t used_ = 0;
  std::string arena_;
  uint64_t words_ = 0;
};

// Writes "word\tcount\n" lines to `path`. Returns false on an I/O error.
bool WriteCounts(const std::vector<std::pair<std::string_view, uint64_t>>& sorted,
                 const char* path) {
  FILE* f = std::fopen(path, "wb");
  if (f == nullptr) return false;
  std::string buf;
  buf.reserve(size_t{1} << 20);
  char digits[24];
  for (const auto& [word, count] : sorted) {
    buf.append(word);
    buf.push_back('\t');
    buf.append(digits, std::to_chars(digits, digits + sizeof digits, count).ptr);
    buf.push_back('\n');
    if (buf.size() >= (size_t{1} << 20)) {
      if (std::fwrite(buf.data(), 1, buf.size(), f) != buf.size()) break;
      buf.clear();
    }
  }
  const bool ok = std::fwrite(buf.data(), 1, buf.size(), f) == buf.size() && !std::ferror(f);
  return std::fclose(f) == 0 && ok;
}

double Seconds(std::chrono::steady_clock::time_point a, std::chrono::steady_clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

struct Options {
  const char* input = nullptr;
  const char* output = nullptr;  // nullptr with --no-output
  int threads = 1;
  bool sse2 = false;
};

bool Parse(int argc, char** argv, Options& o) {
  bool no_output = false;
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    if (a == "--threads" && i + 1 < argc) {
      o.threads = std::atoi(argv[++i]);
    } else if (a == "--output" && i + 1 < argc) {
      o.output = argv[++i];
    } else if (a == "--sse2") {
      o.sse2 = true;
    } else if (a == "--no-output") {
      no_output = true;
    } else if (!a.starts_with("--") && o.input == nullptr) {
      o.input = argv[i];
    } else {
      return false;
    }
  }
  return o.input != nullptr && o.threads >= 1 && o.threads <= 64 &&
         (o.output == nullptr) == no_output;
}

// Maps `path` read-only for the life of the process. Returns false (after
// printing why) on an error; an empty file maps to {nullptr, 0}.
bool MapFile(const char* path, const char*& data, size_t& size) {
  const int fd = ::open(path, O_RDONLY);
  struct stat st;
  if (fd < 0 || ::fstat(fd, &st) != 0) {
    std::fprintf(stderr, "wc_tight: %s: %s\n", path, std::strerror(errno));
    return false;
  }
  size = static_cast<size_t>(st.st_size);
  data = nullptr;
  if (size > 0) {
    void* m = ::mmap(nullptr, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (m == MAP_FAILED) {
      std::fprintf(stderr, "wc_tight: mmap %s: %s\n", path, std::strerror(errno));
      return false;
    }
    ::madvise(m, size, MADV_SEQUENTIAL);
    data = static_cast<const char*>(m);
  }
  ::close(fd);
  return true;
}

// Counts [data, data + size) with `threads` threads; returns the merged table
// (tables[0]). Range edges: i * size / threads, moved forward to whitespace.
WordTable CountParallel(const char* data, size_t size, int threads, bool sse2) {
  std::vector<const char*> edges = {data};
  for (int i = 1; i < threads; ++i) {
    const char* p = std::max(edges.back(), data + size * i / threads);
    while (p < data + size && !kSpace[static_cast<unsigned char>(*p)]) ++p;
    edges.push_back(p);
  }
  edges.push_back(data + size);

  std::vector<WordTable> tables(threads);
  std::vector<std::thread> workers;
  for (int i = 1; i < threads; ++i) {
    workers.emplace_back([&, i] {
      sse2 ? tables[i].CountRangeSse2(edges[i], edges[i + 1]) : tables[i].CountRange(edges[i], edges[i + 1]);
    });
  }
  sse2 ? tables[0].CountRangeSse2(edges[0], edges[1]) : tables[0].CountRange(edges[0], edges[1]);
  for (int i = 1; i < threads; ++i) {
    workers[i - 1].join();
    tables[0].MergeFrom(tables[i]);
  }
  return std::move(tables[0]);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  if (!Parse(argc, argv, o)) {
    std::fprintf(stderr, "usage: wc_tight FILE [--threads N] [--sse2] (--output OUT | --no-output)\n");
    return 2;
  }
  const auto t0 = std::chrono::steady_clock::now();
  const char* data;
  size_t size;
  if (!MapFile(o.input, data, size)) return 1;
  const WordTable table = CountParallel(data, size, o.threads, o.sse2);
  const auto t1 = std::chrono::steady_clock::now();

  if (o.output != nullptr && !WriteCounts(table.Sorted(), o.output)) {
    std::fprintf(stderr, "wc_tight: writing %s: %s\n", o.output, std::strerror(errno));
    return 1;
  }
  const auto t2 = std::chrono::steady_clock::now();

  const double count_s = Seconds(t0, t1);
  std::printf(
      "{\"tool\":\"wc_tight\",\"threads\":%d,\"bytes\":%zu,\"words\":%llu,\"distinct\":%zu,"
      "\"count_seconds\":%.4f,\"output_seconds\":%.4f,\"mb_per_s\":%.1f}\n",
      o.threads, size, static_cast<unsigned long long>(table.words()), table.distinct(), count_s,
      Seconds(t1, t2), count_s > 0 ? size / 1e6 / count_s : 0.0);
  return 0;
}

// wc_mrmpi: word count written against MR-MPI's library API (Debian's
// libmrmpi-dev), a baseline of the WordCount benchmark (issue 3,
// bench/jobs_baselines.sh). Run under MPI, e.g. with 2 processes:
//
//   mpirun -np 2 wc_mrmpi FILE (--output OUT | --no-output)
//          [--chunk-mb 32] [--page-mb 64] [--tmpdir DIR] [--no-compress]
//   (as root, Open MPI also wants --allow-run-as-root; add --oversubscribe
//    when there are fewer cores than processes)
//
// Words are those of wc_tight and the WordCount job: maximal runs of bytes
// that are not ASCII whitespace (space, \t, \n, \v, \f, \r), no case
// folding. OUT (written by rank 0) gets "word\tcount\n" lines sorted bytewise,
// the same bytes as wc_tight's output for the same FILE.
//
// The MapReduce, in MR-MPI's own idiom (its wordfreq example, plus a combiner):
//   map()      FILE in chunks of --chunk-mb cut at '\n' (MR-MPI's file-chunk
//              map), one (word, uint64 1) pair per word;
//   compress() sums each word's values within a process (the combiner;
//              --no-compress skips it, as the wordfreq example does);
//   collate()  hashes keys to processes and groups them;
//   reduce()   sums each word's values.
// Output: gather() to rank 0, sort_keys() bytewise, scan() writes OUT.
// Key-value pages are --page-mb MB (MR-MPI's memsize); beyond a page MR-MPI
// spills to files under --tmpdir (default: the current directory).
//
// Rank 0 prints one JSON line to stdout:
//   {"tool":"wc_mrmpi","procs":2,"compress":true,"bytes":B,"words":W,
//    "distinct":D,"count_seconds":..,"output_seconds":..,"mb_per_s":..}
// count_seconds runs from before map() to after reduce() (barriers around);
// output_seconds covers gather, sort and write; mb_per_s is
// bytes / 1e6 / count_seconds. Exit status 2 on bad usage; MR-MPI aborts the
// MPI job on its own errors (e.g. a line longer than 1 MiB at a chunk edge).
#include <mpi.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <string_view>

#include "keyvalue.h"
#include "mapreduce.h"

namespace {

using MAPREDUCE_NS::KeyValue;
using MAPREDUCE_NS::MapReduce;

// How far past a chunk's nominal end MR-MPI looks for the '\n' that ends it.
constexpr int kDeltaBytes = 1 << 20;

constexpr std::array<bool, 256> MakeSpaceTable() {
  std::array<bool, 256> t{};
  for (unsigned char c : {' ', '\t', '\n', '\v', '\f', '\r'}) t[c] = true;
  return t;
}
constexpr std::array<bool, 256> kSpace = MakeSpaceTable();

// map(): called by MR-MPI once per chunk with `size` bytes of text, the last
// of which is a NUL that MR-MPI appended. Emits (word, 1) per word.
void MapChunk(int /*itask*/, char* text, int size, KeyValue* kv, void* /*ptr*/) {
  const auto* u = reinterpret_cast<const unsigned char*>(text);
  const auto* e = u + (size - 1);
  uint64_t one = 1;
  while (true) {
    while (u < e && kSpace[*u]) ++u;
    if (u == e) return;
    const unsigned char* w = u;
    while (u < e && !kSpace[*u]) ++u;
    kv->add(reinterpret_cast<char*>(const_cast<unsigned char*>(w)), static_cast<int>(u - w),
            reinterpret_cast<char*>(&one), sizeof one);
  }
}

uint64_t SumValues(const char* values, int n, const int* sizes) {
  uint64_t sum = 0;
  for (int i = 0; i < n; ++i) {
    uint64_t v;
    std::memcpy(&v, values, sizeof v);
    sum += v;
    values += sizes[i];
  }
  return sum;
}

// compress() and reduce(): called once per word with all its uint64 values;
// emits (word, sum). `ptr` is the MapReduce object, needed when the values
// span several pages (MR-MPI then passes nvalues == 0).
void Sum(char* key, int keybytes, char* values, int nvalues, int* sizes, KeyValue* kv, void* ptr) {
  uint64_t sum = 0;
  if (nvalues > 0) {
    sum = SumValues(values, nvalues, sizes);
  } else {
    auto* mr = static_cast<MapReduce*>(ptr);
    int nblocks = 0;
    mr->multivalue_blocks(nblocks);
    for (int b = 0; b < nblocks; ++b) {
      char* block_values;
      int* block_sizes;
      const int n = mr->multivalue_block(b, &block_values, &block_sizes);
      sum += SumValues(block_values, n, block_sizes);
    }
  }
  kv->add(key, keybytes, reinterpret_cast<char*>(&sum), sizeof sum);
}

// sort_keys(): bytewise, as LC_ALL=C sort.
int CompareKeys(char* a, int alen, char* b, int blen) {
  const int c = std::memcmp(a, b, static_cast<size_t>(std::min(alen, blen)));
  return c != 0 ? c : alen - blen;
}

// scan(): writes one "word\tcount" line to the FILE* in `ptr` (rank 0 only;
// the other ranks hold no pairs after gather()).
void WriteLine(char* key, int keybytes, char* value, int /*valuebytes*/, void* ptr) {
  auto* f = static_cast<FILE*>(ptr);
  uint64_t count;
  std::memcpy(&count, value, sizeof count);
  std::fwrite(key, 1, static_cast<size_t>(keybytes), f);
  std::fprintf(f, "\t%" PRIu64 "\n", count);
}

struct Options {
  const char* input = nullptr;
  const char* output = nullptr;
  bool no_output = false;
  bool compress = true;
  int chunk_mb = 32;
  int page_mb = 64;
  std::string tmpdir = ".";
};

bool Parse(int argc, char** argv, Options& o) {
  for (int i = 1; i < argc; ++i) {
    std::string_view a = argv[i];
    const bool has_value = i + 1 < argc;
    if (a == "--output" && has_value) {
      o.output = argv[++i];
    } else if (a == "--no-output") {
      o.no_output = true;
    } else if (a == "--no-compress") {
      o.compress = false;
    } else if (a == "--chunk-mb" && has_value) {
      o.chunk_mb = std::atoi(argv[++i]);
    } else if (a == "--page-mb" && has_value) {
      o.page_mb = std::atoi(argv[++i]);
    } else if (a == "--tmpdir" && has_value) {
      o.tmpdir = argv[++i];
    } else if (!a.starts_with("--") && o.input == nullptr) {
      o.input = argv[i];
    } else {
      return false;
    }
  }
  return o.input != nullptr && (o.output == nullptr) == o.no_output && o.chunk_mb > 0 &&
         o.chunk_mb < 2000 && o.page_mb > 0;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, procs = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &procs);
  Options o;
  struct stat st;
  if (!Parse(argc, argv, o)) {
    if (rank == 0) {
      std::fprintf(stderr,
                   "usage: mpirun -np N wc_mrmpi FILE (--output OUT | --no-output) "
                   "[--chunk-mb 32] [--page-mb 64] [--tmpdir DIR] [--no-compress]\n");
    }
    MPI_Finalize();
    return 2;
  }
  if (::stat(o.input, &st) != 0) {
    if (rank == 0) std::fprintf(stderr, "wc_mrmpi: %s: %s\n", o.input, std::strerror(errno));
    MPI_Finalize();
    return 1;
  }
  const uint64_t bytes = static_cast<uint64_t>(st.st_size);
  const uint64_t chunk = static_cast<uint64_t>(o.chunk_mb) << 20;
  const int nmap = bytes == 0 ? 1 : std::max<int>(procs, static_cast<int>((bytes + chunk - 1) / chunk));

  auto* mr = new MapReduce(MPI_COMM_WORLD);
  mr->memsize = o.page_mb;
  mr->set_fpath(o.tmpdir.c_str());

  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  char* files[] = {const_cast<char*>(o.input)};
  const uint64_t words = mr->map(nmap, 1, files, 0, 0, '\n', kDeltaBytes, MapChunk, nullptr);
  if (o.compress) mr->compress(Sum, mr);
  mr->collate(nullptr);
  const uint64_t distinct = mr->reduce(Sum, mr);
  MPI_Barrier(MPI_COMM_WORLD);
  const double t1 = MPI_Wtime();

  if (!o.no_output) {
    mr->gather(1);
    mr->sort_keys(CompareKeys);
    FILE* f = nullptr;
    if (rank == 0 && (f = std::fopen(o.output, "wb")) == nullptr) {
      std::fprintf(stderr, "wc_mrmpi: %s: %s\n", o.output, std::strerror(errno));
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    mr->scan(WriteLine, f);
    if (f != nullptr && std::fclose(f) != 0) {
      std::fprintf(stderr, "wc_mrmpi: writing %s: %s\n", o.output, std::strerror(errno));
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  }
  MPI_Barrier(MPI_COMM_WORLD);
  const double t2 = MPI_Wtime();
  delete mr;

  if (rank == 0) {
    const double count_s = t1 - t0;
    std::printf(
        "{\"tool\":\"wc_mrmpi\",\"procs\":%d,\"compress\":%s,\"bytes\":%" PRIu64
        ",\"words\":%" PRIu64 ",\"distinct\":%" PRIu64
        ",\"count_seconds\":%.4f,\"output_seconds\":%.4f,\"mb_per_s\":%.1f}\n",
        procs, o.compress ? "true" : "false", bytes, words, distinct, count_s, t2 - t1,
        count_s > 0 ? bytes / 1e6 / count_s : 0.0);
  }
  MPI_Finalize();
  return 0;
}

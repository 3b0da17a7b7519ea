// DecompressedInput: the decompressed bytes of a compressed input file, for
// a LineReader of unknown length (jobs/line_reader.h, kUnknownLength).
//
// A map task over a compressed file (jobs/codec.h: its name ends in ".gz",
// ".zst" or ".bz2") reads the whole file, in order: the worker wraps its
// ReadFn of the file's (compressed) bytes in one of these, and the line
// reader sees only decompressed bytes, with offsets counted in them. The
// compressed bytes are read in chunks of chunk_bytes, each once; memory is
// one chunk of each.
//
// Errors name the file and the compressed offset: bad data is Corruption
// "FILE: corrupt gzip data at compressed byte N: REASON" (N is where the
// decoder stopped, at or just after the bad byte), a file that ends inside a
// member, frame or stream is Corruption "FILE: truncated gzip data: the
// file ends at compressed byte N inside a member"; corrupt() is then true
// (the file itself is bad: another attempt would fail the same way). An
// error of the underlying read is returned as it is. An empty file is an
// empty stream: no bytes, no error.
//
// Thread-compatible.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"
#include "jobs/codec.h"
#include "jobs/line_reader.h"

namespace mr::jobs {

class DecompressedInput {
 public:
  static constexpr int64_t kDefaultChunkBytes = 1 << 20;

  // `raw` reads the compressed file, which is `compressed_length` bytes
  // long; `file` names it in errors. REQUIRES: codec != kNone.
  DecompressedInput(Codec codec, std::string file, int64_t compressed_length, LineReader::ReadFn raw,
                    int64_t chunk_bytes = kDefaultChunkBytes);

  // Sets *out to the n decompressed bytes from `offset`, fewer only at the
  // end of the stream. REQUIRES: offset is the number of bytes returned so
  // far (reads are in order, as LineReader makes them).
  Status Read(int64_t offset, int64_t n, std::string* out);

  // A ReadFn calling Read. REQUIRES: *this outlives it.
  LineReader::ReadFn AsReadFn() {
    return [this](int64_t offset, int64_t n, std::string* out) { return Read(offset, n, out); };
  }

  // The last Read failed on bad or truncated compressed data.
  bool corrupt() const { return corrupt_; }
  // Compressed bytes read so far (the file's length once all is read).
  int64_t compressed_read() const { return raw_pos_; }

 private:
  // Reads the next chunk of compressed bytes into in_.
  Status Refill();
  Status Corrupt(const std::string& what);

  std::unique_ptr<Decoder> decoder_;
  const Codec codec_;
  const std::string file_;
  const int64_t compressed_length_;
  LineReader::ReadFn raw_;
  const int64_t chunk_bytes_;
  std::string chunk_;      // compressed bytes [raw_pos_ - chunk_.size(), raw_pos_)
  std::string_view in_;    // what of chunk_ the decoder has not consumed
  int64_t raw_pos_ = 0;
  int64_t out_pos_ = 0;    // decompressed bytes returned so far
  bool corrupt_ = false;
};

}  // namespace mr::jobs

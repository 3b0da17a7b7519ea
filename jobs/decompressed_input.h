// DecompressedInput: the decompressed bytes of a compressed input file, for
// a LineReader of unknown length (jobs/line_reader.h, kUnknownLength).
//
// A map task over a compressed file (jobs/codec.h: its name ends in ".gz",
// ".zst" or ".bz2") reads the whole file, in order: the worker wraps its
// ReadFn of the file's (compressed) bytes in one of these, and the line
// reader sees only decompressed bytes, with offsets counted in them.
//
// Decoding runs on a thread of its own, started by the first Read, so that
// it overlaps the map's work on the lines when a core is free (zstd decodes
// text at ~450-600 MB/s a core here, WordCount's map consumes ~270 MB/s: in
// the map's thread decoding added ~60 % to its time; docs/benchmarks.md,
// "Compressed input"). That thread reads the compressed
// bytes through `raw` in chunks of chunk_bytes, each once, and decodes them
// into pieces the size of the first Read (at least kMinPieceBytes), up to
// kPiecesAhead pieces ahead of the reader; a Read of exactly a whole piece
// (what LineReader asks for) swaps the piece's buffer with *out instead of
// copying it. Memory: one chunk and about kPiecesAhead + 2 pieces.
//
// Errors name the file and the compressed offset: bad data is Corruption
// "FILE: corrupt gzip data at compressed byte N: REASON" (N is where the
// decoder stopped, at or just after the bad byte), a file that ends inside a
// member, frame or stream is Corruption "FILE: truncated gzip data: the
// file ends at compressed byte N inside a member"; corrupt() is then true
// (the file itself is bad: another attempt would fail the same way). An
// error of the underlying read is returned as it is. The bytes decoded
// before an error are returned first; the Read that reaches the error
// returns it (not the bytes it had gathered), and so does every Read after.
// An empty file is an empty stream: no bytes, no error.
//
// Thread-compatible: Read, corrupt() and compressed_read() are called from
// one thread (the map's). `raw` is called from the decode thread, one call
// at a time. The destructor stops the decode thread and joins it: it waits
// for a `raw` call in progress to return.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "common/status.h"
#include "jobs/codec.h"
#include "jobs/line_reader.h"

namespace mr::jobs {

class DecompressedInput {
 public:
  static constexpr int64_t kDefaultChunkBytes = 1 << 20;
  // The smallest piece the decode thread fills (zstd's block size,
  // ZSTD_DStreamOutSize()): tiny reads still hand over large pieces.
  static constexpr int64_t kMinPieceBytes = 128 << 10;
  // How many decoded pieces the decode thread may hold ready for the reader.
  static constexpr size_t kPiecesAhead = 4;

  // `raw` reads the compressed file, which is `compressed_length` bytes
  // long; `file` names it in errors. REQUIRES: codec != kNone.
  DecompressedInput(Codec codec, std::string file, int64_t compressed_length, LineReader::ReadFn raw,
                    int64_t chunk_bytes = kDefaultChunkBytes);
  ~DecompressedInput();
  DecompressedInput(const DecompressedInput&) = delete;
  DecompressedInput& operator=(const DecompressedInput&) = delete;

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
  // Compressed bytes the decode thread has read so far (it reads ahead of
  // Read; the file's length once Read has reached the end).
  int64_t compressed_read() const { return raw_pos_.load(); }

 private:
  // Decoded bytes, handed from the decode thread to Read: `bytes`, then
  // `status` (an error ends the stream), then nothing more when `last`.
  struct Piece {
    std::string bytes;
    Status status;
    bool corrupt = false;
    bool last = false;
  };

  // The decode thread: fills pieces until the end, an error or Stop.
  void DecodeLoop();
  // Sets *out to the next piece_bytes_ decoded bytes, fewer at the end or
  // before an error (which it returns). Decode thread.
  Status Fill(std::string* out, bool* corrupt);
  // Decodes into out[0, room), setting *produced. Decode thread.
  Status Decode(char* out, size_t room, size_t* produced, bool* corrupt);
  // Reads the next chunk of compressed bytes into in_. Decode thread.
  Status Refill();
  // Gives current_'s buffer back and waits for the next piece. Read's thread.
  void NextPiece();

  // Set at construction; then only the decode thread uses these.
  std::unique_ptr<Decoder> decoder_;
  const Codec codec_;
  const std::string file_;
  const int64_t compressed_length_;
  LineReader::ReadFn raw_;
  const int64_t chunk_bytes_;
  std::string chunk_;    // compressed bytes [raw_pos_ - chunk_.size(), raw_pos_)
  std::string_view in_;  // what of chunk_ the decoder has not consumed
  std::atomic<int64_t> raw_pos_ = 0;
  int64_t piece_bytes_ = 0;  // set by the first Read, before the thread starts

  // The hand-over, under mu_.
  std::mutex mu_;
  std::condition_variable piece_ready_;  // the reader waits on it
  std::condition_variable room_;         // the decode thread waits on it
  std::deque<Piece> ready_;              // at most kPiecesAhead
  std::vector<std::string> spare_;       // buffers given back, for reuse
  bool stop_ = false;
  std::thread thread_;

  // Read's thread only.
  Piece current_;           // the piece being read
  size_t current_pos_ = 0;  // what of current_.bytes was returned
  int64_t out_pos_ = 0;     // decompressed bytes returned so far
  bool corrupt_ = false;
};

}  // namespace mr::jobs

// Compressed input and output: which files are compressed, and streaming
// decoders and encoders over Debian's zlib, libzstd and libbz2.
//
// An input file is compressed when its name ends in ".gz" (gzip), ".zst"
// (zstd) or ".bz2" (bzip2): map tasks then read its decompressed lines
// (jobs/decompressed_input.h), and the file is one map, whatever its size,
// since none of these streams can be entered in the middle (docs/jobs.md,
// "Compressed input and output"). A job's output may be written as gzip or
// zstd part files (`mrctl job run --output-compression`).
//
// Thread-compatible: a Decoder or Encoder is used by one thread.
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "common/status.h"

namespace mr::jobs {

enum class Codec { kNone = 0, kGzip = 1, kZstd = 2, kBzip2 = 3 };

// By the name's suffix: ".gz", ".zst", ".bz2"; anything else is kNone.
Codec CodecOfPath(std::string_view path);
// "none", "gzip", "zstd", "bzip2".
const char* CodecName(Codec codec);
// The file name suffix: "", ".gz", ".zst", ".bz2".
const char* CodecSuffix(Codec codec);

// A value of --output-compression: "" or "none" (kNone), "gzip", "zstd".
// InvalidArgument, in one line listing the valid values, for anything else.
Result<Codec> ParseOutputCompression(std::string_view name);

// Decompresses one compressed stream, fed in pieces. Concatenated units
// (gzip members, zstd frames, bzip2 streams) are decoded one after another
// into one output, as zcat, zstdcat and bzcat do.
class Decoder {
 public:
  // REQUIRES: codec != kNone.
  static std::unique_ptr<Decoder> Make(Codec codec);
  virtual ~Decoder() = default;

  // Decodes from the front of *in into out[0, room), removing from *in what
  // it consumed (also on error, so the caller knows where the error is: at
  // or before the new front of *in; for zstd up to a block, 128 KiB, before
  // it) and
  // setting *produced. Returns when out is full or no progress can be made
  // without more input. Corruption (the library's reason, no position) for
  // data that is not a valid stream, including bytes after a unit that do
  // not start another one.
  Status Decode(std::string_view* in, char* out, size_t room, size_t* produced);

  // True when every byte consumed so far belongs to a finished unit: the
  // input may end here (an empty input is a valid, empty stream). False
  // inside a unit: an end here is a truncated stream.
  bool AtBoundary() const { return !in_unit_; }

 protected:
  struct Step {
    size_t consumed = 0;
    size_t produced = 0;
    bool unit_ended = false;  // a member/frame/stream ended in this step
    Status status;
  };
  // One call of the library on in and out[0, room). REQUIRES: room > 0.
  virtual Step Run(std::string_view in, char* out, size_t room) = 0;

 private:
  bool in_unit_ = false;
};

// Compresses a stream into one unit (a gzip member or a zstd frame).
class Encoder {
 public:
  // REQUIRES: codec is kGzip or kZstd. level 0: the codec's default.
  static std::unique_ptr<Encoder> Make(Codec codec, int level = 0);
  virtual ~Encoder() = default;
  // Appends the compressed form of `data` (perhaps none yet) to *out.
  virtual Status Write(std::string_view data, std::string* out) = 0;
  // Ends the unit, appending what remains to *out. Write is not called after.
  virtual Status Finish(std::string* out) = 0;
};

// What the first bytes of a compressed stream decode to, up to max_bytes:
// stops quietly where `compressed` ends or turns bad (a sample of a file's
// first lines, e.g. for Sort's Plan()).
std::string DecodePrefix(Codec codec, std::string_view compressed, size_t max_bytes);

// Compresses the local file `from` into `to` (created or truncated) with
// `codec`. IOError naming the file that could not be read or written.
Status CompressFile(Codec codec, const std::string& from, const std::string& to);

}  // namespace mr::jobs

// Re-encodes one stored map output segment (one zstd frame in a file range,
// docs/map-output-format.md) at a higher zstd level, a piece at a time: the
// shuffle server does this for a reducer in another datacenter
// (cluster.inter_dc_zstd_level, docs/wire-format.md "shuffle.Fetch"). The
// result is again one zstd frame with a content checksum, so the reducer
// reads it like any segment.
//
// Not thread-safe. Holds two zstd contexts and about 400 KiB of buffers.
#pragma once

#include <zstd.h>

#include <cstdint>
#include <string>

#include "common/status.h"

namespace mr::worker {

class SegmentRecompressor {
 public:
  // Reads [offset, offset + length) of `fd` (not owned; length > 0) and
  // writes it at `level`, giving out pieces of about `piece_bytes`.
  // `window_log` > 0 turns on long-distance matching with a window of
  // 2^window_log bytes (the caller bounds it by the segment's size).
  SegmentRecompressor(int fd, int64_t offset, int64_t length, int level, size_t piece_bytes,
                      int window_log = 0);
  ~SegmentRecompressor();
  SegmentRecompressor(const SegmentRecompressor&) = delete;
  SegmentRecompressor& operator=(const SegmentRecompressor&) = delete;

  // Replaces *out with the next piece (at least one byte unless the frame
  // is done, at most about piece_bytes + 128 KiB); *done after the piece
  // that ends the frame. Corruption when the stored frame is bad (a zstd
  // error, a frame cut short, bytes after it); IOError when the file
  // cannot be read.
  Status Next(std::string* out, bool* done);

 private:
  Status Refill();

  int fd_;
  int64_t file_pos_, file_end_;
  size_t piece_bytes_;
  ZSTD_DCtx* dctx_;
  ZSTD_CCtx* cctx_;
  std::string in_buf_, raw_, out_buf_;
  ZSTD_inBuffer in_{nullptr, 0, 0};
  size_t raw_pos_ = 0, raw_len_ = 0;
  bool frame_read_ = false;  // the stored frame is fully decompressed
  bool finished_ = false;    // the new frame is fully written
};

}  // namespace mr::worker

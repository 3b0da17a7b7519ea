#include "worker/segment_recompress.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace mr::worker {

SegmentRecompressor::SegmentRecompressor(int fd, int64_t offset, int64_t length, int level,
                                         size_t piece_bytes, int window_log)
    : fd_(fd), file_pos_(offset), file_end_(offset + length), piece_bytes_(piece_bytes),
      dctx_(ZSTD_createDCtx()), cctx_(ZSTD_createCCtx()),
      in_buf_(ZSTD_DStreamInSize(), '\0'), raw_(ZSTD_DStreamOutSize(), '\0'),
      out_buf_(ZSTD_CStreamOutSize(), '\0') {
  ZSTD_CCtx_setParameter(cctx_, ZSTD_c_compressionLevel, level);
  ZSTD_CCtx_setParameter(cctx_, ZSTD_c_checksumFlag, 1);  // as the stored segments
  if (window_log > 0) {
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_enableLongDistanceMatching, 1);
    ZSTD_CCtx_setParameter(cctx_, ZSTD_c_windowLog, window_log);
  }
}

SegmentRecompressor::~SegmentRecompressor() {
  ZSTD_freeDCtx(dctx_);
  ZSTD_freeCCtx(cctx_);
}

Status SegmentRecompressor::Refill() {
  if (file_pos_ == file_end_) return Status::Corruption("map output segment ends inside its frame");
  const size_t want = static_cast<size_t>(
      std::min<int64_t>(static_cast<int64_t>(in_buf_.size()), file_end_ - file_pos_));
  ssize_t n;
  do {
    n = ::pread(fd_, in_buf_.data(), want, file_pos_);
  } while (n < 0 && errno == EINTR);
  if (n < 0) return Status::IOError(std::string("pread of map output: ") + std::strerror(errno));
  if (n == 0) return Status::Corruption("map output file ends inside the segment");
  file_pos_ += n;
  in_ = {in_buf_.data(), static_cast<size_t>(n), 0};
  return Status::OK();
}

Status SegmentRecompressor::Next(std::string* out, bool* done) {
  out->clear();
  while (out->size() < piece_bytes_ && !finished_) {
    ZSTD_outBuffer o{out_buf_.data(), out_buf_.size(), 0};
    if (raw_pos_ < raw_len_) {  // decompressed bytes waiting: compress them
      ZSTD_inBuffer in{raw_.data() + raw_pos_, raw_len_ - raw_pos_, 0};
      const size_t r = ZSTD_compressStream2(cctx_, &o, &in, ZSTD_e_continue);
      if (ZSTD_isError(r)) return Status::Internal(std::string("zstd compress: ") + ZSTD_getErrorName(r));
      raw_pos_ += in.pos;
    } else if (!frame_read_) {  // decompress more of the stored frame
      if (in_.pos == in_.size) MR_RETURN_IF_ERROR(Refill());
      ZSTD_outBuffer raw{raw_.data(), raw_.size(), 0};
      const size_t r = ZSTD_decompressStream(dctx_, &raw, &in_);
      if (ZSTD_isError(r)) {
        return Status::Corruption(std::string("map output segment: ") + ZSTD_getErrorName(r));
      }
      raw_pos_ = 0;
      raw_len_ = raw.pos;
      if (r == 0) {
        frame_read_ = true;
        if (in_.pos != in_.size || file_pos_ != file_end_) {
          return Status::Corruption("map output segment: bytes after its frame");
        }
      }
    } else {  // everything is in: end the new frame
      ZSTD_inBuffer none{nullptr, 0, 0};
      const size_t r = ZSTD_compressStream2(cctx_, &o, &none, ZSTD_e_end);
      if (ZSTD_isError(r)) return Status::Internal(std::string("zstd compress: ") + ZSTD_getErrorName(r));
      finished_ = r == 0;
    }
    out->append(out_buf_.data(), o.pos);
  }
  *done = finished_;
  return Status::OK();
}

}  // namespace mr::worker

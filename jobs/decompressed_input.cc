#include "jobs/decompressed_input.h"

#include <algorithm>
#include <utility>

namespace mr::jobs {

DecompressedInput::DecompressedInput(Codec codec, std::string file, int64_t compressed_length,
                                     LineReader::ReadFn raw, int64_t chunk_bytes)
    : decoder_(Decoder::Make(codec)),
      codec_(codec),
      file_(std::move(file)),
      compressed_length_(compressed_length),
      raw_(std::move(raw)),
      chunk_bytes_(chunk_bytes) {}

Status DecompressedInput::Read(int64_t offset, int64_t n, std::string* out) {
  if (offset != out_pos_) {
    return Status::Internal("compressed input read out of order: offset " + std::to_string(offset) +
                            ", next " + std::to_string(out_pos_));
  }
  out->resize(static_cast<size_t>(n));
  size_t produced = 0;
  while (produced < static_cast<size_t>(n)) {
    // Decode first, even with no input left: the decoder may hold output.
    size_t got = 0;
    const size_t before = in_.size();
    Status s = decoder_->Decode(&in_, out->data() + produced, static_cast<size_t>(n) - produced, &got);
    produced += got;
    if (!s.ok()) {
      const int64_t at = raw_pos_ - static_cast<int64_t>(in_.size());
      return Corrupt("corrupt " + std::string(CodecName(codec_)) + " data at compressed byte " +
                     std::to_string(at) + ": " + s.message());
    }
    if (got > 0 || in_.size() != before) continue;
    if (!in_.empty()) {
      return Status::Internal(file_ + ": the " + CodecName(codec_) + " decoder made no progress");
    }
    if (raw_pos_ < compressed_length_) {
      MR_RETURN_IF_ERROR(Refill());
      continue;
    }
    if (!decoder_->AtBoundary()) {  // the end of the file, inside a unit
      const char* unit = codec_ == Codec::kGzip ? "member" : codec_ == Codec::kZstd ? "frame" : "stream";
      return Corrupt("truncated " + std::string(CodecName(codec_)) + " data: the file ends at compressed byte " +
                     std::to_string(raw_pos_) + " inside a " + unit);
    }
    break;
  }
  out->resize(produced);
  out_pos_ += static_cast<int64_t>(produced);
  return Status::OK();
}

Status DecompressedInput::Refill() {
  const int64_t n = std::min(chunk_bytes_, compressed_length_ - raw_pos_);
  chunk_.clear();
  MR_RETURN_IF_ERROR(raw_(raw_pos_, n, &chunk_));
  if (static_cast<int64_t>(chunk_.size()) != n) {
    return Status::IOError(file_ + ": short read of " + std::to_string(chunk_.size()) + " of " +
                           std::to_string(n) + " bytes at offset " + std::to_string(raw_pos_));
  }
  raw_pos_ += n;
  in_ = chunk_;
  return Status::OK();
}

Status DecompressedInput::Corrupt(const std::string& what) {
  corrupt_ = true;
  return Status::Corruption(file_ + ": " + what);
}

}  // namespace mr::jobs

#include "jobs/decompressed_input.h"

#include <algorithm>
#include <exception>
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

DecompressedInput::~DecompressedInput() {
  {
    std::lock_guard lock(mu_);
    stop_ = true;
  }
  room_.notify_all();
  if (thread_.joinable()) thread_.join();
}

Status DecompressedInput::Read(int64_t offset, int64_t n, std::string* out) {
  if (offset != out_pos_) {
    return Status::Internal("compressed input read out of order: offset " + std::to_string(offset) +
                            ", next " + std::to_string(out_pos_));
  }
  if (!thread_.joinable()) {
    piece_bytes_ = std::max(n, kMinPieceBytes);
    thread_ = std::thread([this] { DecodeLoop(); });
  }
  out->clear();
  const auto want = static_cast<size_t>(n);
  while (out->size() < want) {
    if (current_pos_ == current_.bytes.size()) {  // current_ is used up
      if (!current_.status.ok()) {
        corrupt_ = current_.corrupt;
        return current_.status;
      }
      if (current_.last) break;
      NextPiece();
      if (out->empty() && current_.bytes.size() == want) {  // the whole piece: no copy
        out->swap(current_.bytes);
        current_.bytes.clear();
        current_pos_ = 0;
      }
      continue;
    }
    const size_t take = std::min(want - out->size(), current_.bytes.size() - current_pos_);
    out->append(current_.bytes, current_pos_, take);
    current_pos_ += take;
  }
  out_pos_ += static_cast<int64_t>(out->size());
  return Status::OK();
}

void DecompressedInput::NextPiece() {
  std::unique_lock lock(mu_);
  if (spare_.size() < kPiecesAhead) spare_.push_back(std::move(current_.bytes));
  piece_ready_.wait(lock, [this] { return !ready_.empty(); });
  current_ = std::move(ready_.front());
  ready_.pop_front();
  current_pos_ = 0;
  lock.unlock();
  room_.notify_one();
}

void DecompressedInput::DecodeLoop() {
  for (bool last = false; !last;) {
    Piece piece;
    {
      std::unique_lock lock(mu_);
      room_.wait(lock, [this] { return stop_ || ready_.size() < kPiecesAhead; });
      if (stop_) return;
      if (!spare_.empty()) {
        piece.bytes = std::move(spare_.back());
        spare_.pop_back();
      }
    }
    try {
      piece.status = Fill(&piece.bytes, &piece.corrupt);
    } catch (const std::exception& e) {  // std::bad_alloc: the map fails, the worker goes on
      piece.status = Status::Internal(file_ + ": decoding failed: " + e.what());
    }
    last = piece.last = !piece.status.ok() || static_cast<int64_t>(piece.bytes.size()) < piece_bytes_;
    {
      std::lock_guard lock(mu_);
      ready_.push_back(std::move(piece));
    }
    piece_ready_.notify_one();
  }
}

Status DecompressedInput::Fill(std::string* out, bool* corrupt) {
  out->resize(static_cast<size_t>(piece_bytes_));
  size_t produced = 0;
  Status s = Decode(out->data(), out->size(), &produced, corrupt);
  out->resize(produced);
  return s;
}

Status DecompressedInput::Decode(char* out, size_t room, size_t* produced, bool* corrupt) {
  const char* unit = codec_ == Codec::kGzip ? "member" : codec_ == Codec::kZstd ? "frame" : "stream";
  const std::string name = CodecName(codec_);
  *produced = 0;
  while (*produced < room) {
    // Decode first, even with no input left: the decoder may hold output.
    size_t got = 0;
    const size_t before = in_.size();
    Status s = decoder_->Decode(&in_, out + *produced, room - *produced, &got);
    *produced += got;
    if (!s.ok()) {
      *corrupt = true;
      const int64_t at = raw_pos_ - static_cast<int64_t>(in_.size());
      return Status::Corruption(file_ + ": corrupt " + name + " data at compressed byte " + std::to_string(at) +
                                ": " + s.message());
    }
    if (got > 0 || in_.size() != before) continue;
    if (!in_.empty()) return Status::Internal(file_ + ": the " + name + " decoder made no progress");
    if (raw_pos_ < compressed_length_) {
      MR_RETURN_IF_ERROR(Refill());
      continue;
    }
    if (!decoder_->AtBoundary()) {  // the end of the file, inside a unit
      *corrupt = true;
      return Status::Corruption(file_ + ": truncated " + name + " data: the file ends at compressed byte " +
                                std::to_string(raw_pos_) + " inside a " + unit);
    }
    break;
  }
  return Status::OK();
}

Status DecompressedInput::Refill() {
  const int64_t pos = raw_pos_;
  const int64_t n = std::min(chunk_bytes_, compressed_length_ - pos);
  chunk_.clear();
  MR_RETURN_IF_ERROR(raw_(pos, n, &chunk_));
  if (static_cast<int64_t>(chunk_.size()) != n) {
    return Status::IOError(file_ + ": short read of " + std::to_string(chunk_.size()) + " of " +
                           std::to_string(n) + " bytes at offset " + std::to_string(pos));
  }
  raw_pos_ = pos + n;
  in_ = chunk_;
  return Status::OK();
}

}  // namespace mr::jobs

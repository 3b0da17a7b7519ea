#include "dfs/wire_codec.h"

#include <zstd.h>

namespace mr::dfs {

int LinkLevel(int level, std::string_view a, std::string_view b) {
  return level > 0 && !a.empty() && !b.empty() && a != b ? level : 0;
}

std::string_view EncodeFrameData(int level, std::string_view raw, pb::DataChunk* chunk,
                                 std::string* scratch) {
  chunk->set_zstd_raw_bytes(0);
  if (level > 0 && !raw.empty()) {
    scratch->resize(ZSTD_compressBound(raw.size()));
    const size_t n = ZSTD_compress(scratch->data(), scratch->size(), raw.data(), raw.size(), level);
    if (!ZSTD_isError(n) && n < raw.size()) {
      chunk->set_zstd_raw_bytes(static_cast<int64_t>(raw.size()));
      return std::string_view(*scratch).substr(0, n);
    }
  }
  return raw;  // incompressible (or off): the raw bytes, as they are
}

Status DecodeFrameData(const pb::DataChunk& chunk, int64_t max_raw_bytes, std::string* data) {
  const int64_t raw = chunk.zstd_raw_bytes();
  if (raw == 0) return Status::OK();
  if (raw < 0 || raw > max_raw_bytes) {
    return Status::Corruption("compressed frame at offset " + std::to_string(chunk.offset()) +
                              " claims " + std::to_string(raw) + " bytes");
  }
  std::string out(static_cast<size_t>(raw), '\0');
  const size_t n = ZSTD_decompress(out.data(), out.size(), data->data(), data->size());
  if (ZSTD_isError(n) || n != static_cast<size_t>(raw)) {
    return Status::Corruption("compressed frame at offset " + std::to_string(chunk.offset()) +
                              " does not decompress to " + std::to_string(raw) + " bytes" +
                              (ZSTD_isError(n) ? std::string(": ") + ZSTD_getErrorName(n) : ""));
  }
  *data = std::move(out);
  return Status::OK();
}

Status FrameRelay::Decode(const pb::DataChunk& chunk, std::string* data) {
  in_compressed_ = chunk.zstd_raw_bytes() != 0;
  if (!in_compressed_) return Status::OK();
  received_ = *data;
  return DecodeFrameData(chunk, max_raw_bytes_, data);
}

std::pair<const pb::Frame*, std::string_view> FrameRelay::Forward(const pb::Frame& received,
                                                                  const pb::DataChunk& chunk,
                                                                  const std::string& raw) {
  if (in_compressed_ && level_ > 0) return {&received, received_};
  if (!in_compressed_ && level_ == 0) return {&received, raw};
  out_chunk_ = chunk;
  const std::string_view data = EncodeFrameData(level_, raw, &out_chunk_, &scratch_);
  out_frame_ = received;
  out_chunk_.SerializeToString(out_frame_.mutable_body());
  return {&out_frame_, data};
}

}  // namespace mr::dfs

#include "common/frame.h"

#include <cstring>

namespace mr {
namespace {

void PutU32(uint32_t v, char* out) {
  out[0] = static_cast<char>(v >> 24);
  out[1] = static_cast<char>(v >> 16);
  out[2] = static_cast<char>(v >> 8);
  out[3] = static_cast<char>(v);
}

uint32_t GetU32(const char* in) {
  const auto* p = reinterpret_cast<const unsigned char*>(in);
  return (uint32_t{p[0]} << 24) | (uint32_t{p[1]} << 16) | (uint32_t{p[2]} << 8) | p[3];
}

}  // namespace

void EncodeFramePrefix(const FramePrefix& prefix, char out[kFramePrefixBytes]) {
  PutU32(prefix.header_len, out);
  PutU32(prefix.data_len, out + 4);
}

Result<FramePrefix> DecodeFramePrefix(const char in[kFramePrefixBytes], int64_t max_frame_bytes) {
  FramePrefix prefix{GetU32(in), GetU32(in + 4)};
  const int64_t total = int64_t{prefix.header_len} + prefix.data_len;
  if (total > max_frame_bytes) {
    return Status::ProtocolError("frame of " + std::to_string(total) + " bytes exceeds the " +
                                 std::to_string(max_frame_bytes) + "-byte limit");
  }
  return prefix;
}

std::string EncodeFrame(const pb::Frame& header, std::string_view data) {
  std::string out(kFramePrefixBytes, '\0');
  header.AppendToString(&out);
  EncodeFramePrefix({static_cast<uint32_t>(out.size() - kFramePrefixBytes),
                     static_cast<uint32_t>(data.size())},
                    out.data());
  out.append(data);
  return out;
}

Result<size_t> DecodeFrame(std::string_view bytes, int64_t max_frame_bytes, pb::Frame* header,
                           std::string* data) {
  if (bytes.size() < kFramePrefixBytes) return size_t{0};
  auto prefix = DecodeFramePrefix(bytes.data(), max_frame_bytes);
  if (!prefix.ok()) return prefix.status();
  const size_t total = kFramePrefixBytes + prefix->header_len + prefix->data_len;
  if (bytes.size() < total) return size_t{0};
  if (!header->ParseFromArray(bytes.data() + kFramePrefixBytes,
                              static_cast<int>(prefix->header_len))) {
    return Status::ProtocolError("malformed frame header");
  }
  data->assign(bytes.substr(kFramePrefixBytes + prefix->header_len, prefix->data_len));
  return total;
}

}  // namespace mr

// libFuzzer harness: frame decoding (common/frame.h).
//
// The input is bytes as they arrive on a connection. DecodeFramePrefix reads
// the first 8 under a small cap and under the default one; DecodeFrame then
// takes frames from the front until it wants more bytes or reports a
// protocol error. Checks: a prefix is refused exactly when its two lengths
// exceed the cap; a decoded frame used exactly prefix + header + data bytes
// of the input, its data is within the cap, and encoding it again
// (EncodeFrame) decodes to the same header and data.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>

#include "common/frame.h"

namespace {

[[noreturn]] void Fail(const char* why) {
  std::fprintf(stderr, "FUZZ FAILURE: %s\n", why);
  std::abort();
}

void CheckPrefix(std::string_view in, int64_t cap) {
  if (in.size() < mr::kFramePrefixBytes) return;
  auto prefix = mr::DecodeFramePrefix(in.data(), cap);
  const auto* p = reinterpret_cast<const unsigned char*>(in.data());
  const uint64_t header_len = (uint64_t{p[0]} << 24) | (p[1] << 16) | (p[2] << 8) | p[3];
  const uint64_t data_len = (uint64_t{p[4]} << 24) | (p[5] << 16) | (p[6] << 8) | p[7];
  const bool fits = static_cast<int64_t>(header_len + data_len) <= cap;
  if (prefix.ok() != fits) Fail("prefix accepted or refused against its cap");
  if (prefix.ok() && !prefix.status().ok()) Fail("ok Result with an error status");
  if (!prefix.ok() && !prefix.status().IsProtocolError()) Fail("prefix error is not ProtocolError");
  if (prefix.ok() && (prefix->header_len != header_len || prefix->data_len != data_len)) {
    Fail("prefix lengths differ from the bytes");
  }
  char again[mr::kFramePrefixBytes];
  if (prefix.ok()) {
    mr::EncodeFramePrefix(*prefix, again);
    if (std::string_view(again, sizeof again) != in.substr(0, sizeof again)) {
      Fail("prefix does not encode back to its bytes");
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view in(reinterpret_cast<const char*>(data), size);
  CheckPrefix(in, 64);
  CheckPrefix(in, 4 << 20);
  constexpr int64_t kCap = 4 << 20;
  for (int frames = 0; frames < 64; ++frames) {
    mr::pb::Frame header;
    std::string body;
    auto used = mr::DecodeFrame(in, kCap, &header, &body);
    if (!used.ok()) {
      if (!used.status().IsProtocolError()) Fail("decode error is not ProtocolError");
      break;
    }
    if (*used == 0) break;  // a partial frame: the caller reads more
    if (*used > in.size() || *used < mr::kFramePrefixBytes + body.size()) {
      Fail("decoded frame size out of bounds");
    }
    if (static_cast<int64_t>(body.size()) > kCap) Fail("frame data over the cap");
    const std::string encoded = mr::EncodeFrame(header, body);
    mr::pb::Frame header2;
    std::string body2;
    auto used2 = mr::DecodeFrame(encoded, kCap, &header2, &body2);
    if (!used2.ok() || *used2 != encoded.size()) Fail("re-encoded frame does not decode");
    if (header2.SerializeAsString() != header.SerializeAsString() || body2 != body) {
      Fail("re-encoded frame differs");
    }
    in.remove_prefix(*used);
  }
  return 0;
}

// Frame codec: the byte layout of every message on every connection.
//
//   u32 header_len | u32 data_len | header (proto mr.pb.Frame) | data
//
// Both lengths are big-endian. `data` carries bulk bytes (block and shuffle
// chunks) so they are never copied through protobuf. A frame whose
// header_len + data_len exceeds the connection's max_frame_bytes, or whose
// header does not parse, is a protocol error: the connection is closed.
// See docs/wire-format.md.
//
// Pure functions, thread-safe.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "proto/rpc.pb.h"

namespace mr {

inline constexpr size_t kFramePrefixBytes = 8;

struct FramePrefix {
  uint32_t header_len = 0;
  uint32_t data_len = 0;
};

void EncodeFramePrefix(const FramePrefix& prefix, char out[kFramePrefixBytes]);

// ProtocolError if the frame would exceed max_frame_bytes.
Result<FramePrefix> DecodeFramePrefix(const char in[kFramePrefixBytes], int64_t max_frame_bytes);

// Whole frame in one string (tests, fuzzing, small control frames).
std::string EncodeFrame(const pb::Frame& header, std::string_view data);

// Decodes one frame from the front of `bytes`. Returns the bytes consumed, 0
// if `bytes` holds only part of a frame, or ProtocolError.
Result<size_t> DecodeFrame(std::string_view bytes, int64_t max_frame_bytes, pb::Frame* header,
                           std::string* data);

}  // namespace mr

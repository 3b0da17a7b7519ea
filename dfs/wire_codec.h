// Compression of block frames between datacenters (docs/wire-format.md,
// "Compression between datacenters"). A DataChunk frame's data is either the
// block bytes themselves or, when DataChunk.zstd_raw_bytes > 0, one zstd
// frame that decompresses to exactly that many block bytes. Offsets and
// checksums always describe the decompressed bytes, so a reader verifies
// after decompressing, and a frame that does not decompress is Corruption
// (the reader moves to another replica, as for a checksum mismatch).
//
// Who compresses: the sender of a hop, at the level the hop's two
// datacenters call for (LinkLevel). dn.ReadBlock: the reader asks
// (ReadBlockRequest.zstd_level), the worker obeys. dn.WriteBlock: the writer
// and each forwarding node decide for the hop to their downstream.
//
// Functions only; thread-safe (each call uses its own zstd context).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "common/status.h"
#include "proto/dfs.pb.h"
#include "proto/rpc.pb.h"

namespace mr::dfs {

// The zstd level for a transfer between datacenters `a` and `b`: `level`
// when both are known and differ, else 0 (send raw). `level` is
// cluster.inter_dc_zstd_level (0 = off).
int LinkLevel(int level, std::string_view a, std::string_view b);

// Sets `chunk` for sending `raw` as a frame's data and returns the bytes to
// send: at level 0, or when compressing does not make it smaller, `raw`
// itself (no copy) with chunk->zstd_raw_bytes 0; else one zstd frame of
// `raw`, built in `scratch`, with chunk->zstd_raw_bytes raw.size(). The
// result is valid while `raw` and `scratch` are; `scratch` may not alias `raw`.
std::string_view EncodeFrameData(int level, std::string_view raw, pb::DataChunk* chunk,
                                 std::string* scratch);

// Turns a received frame's data into the block bytes, in place: a no-op when
// chunk.zstd_raw_bytes is 0. Corruption when the data is not one zstd frame
// of exactly zstd_raw_bytes bytes, or zstd_raw_bytes exceeds `max_raw_bytes`
// (a frame may not make the receiver allocate more than a raw frame could).
Status DecodeFrameData(const pb::DataChunk& chunk, int64_t max_raw_bytes, std::string* data);

// What a node of a write pipeline does with each frame: decode it for its
// own store, and choose what to send downstream: the frame as received when
// its encoding already suits the downstream hop (compressed for a hop
// between datacenters, raw within one), else the block bytes re-encoded.
// Not thread-safe; one per dn.WriteBlock stream.
class FrameRelay {
 public:
  // `downstream_level`: LinkLevel of the hop to the downstream (0 when
  // there is none).
  FrameRelay(int downstream_level, int64_t max_raw_bytes)
      : level_(downstream_level), max_raw_bytes_(max_raw_bytes) {}
  // `data` arrived with `chunk`; after OK it holds the block bytes.
  Status Decode(const pb::DataChunk& chunk, std::string* data);
  // The frame to forward, given the frame received and the block bytes
  // Decode left in `raw`. Valid until the next call.
  std::pair<const pb::Frame*, std::string_view> Forward(const pb::Frame& received,
                                                        const pb::DataChunk& chunk,
                                                        const std::string& raw);

 private:
  int level_;
  int64_t max_raw_bytes_;
  bool in_compressed_ = false;
  std::string received_;  // the compressed data as received
  pb::DataChunk out_chunk_;
  pb::Frame out_frame_;
  std::string scratch_;
};

}  // namespace mr::dfs

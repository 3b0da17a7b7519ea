// dfs/wire_codec: which hops compress, and frames that round-trip or fail
// as Corruption.
#include "dfs/wire_codec.h"

#include <gtest/gtest.h>

namespace mr::dfs {
namespace {

std::string Text(size_t n) {
  std::string s;
  for (size_t i = 0; s.size() < n; ++i) s += "word" + std::to_string(i % 977) + (i % 9 ? " " : "\n");
  s.resize(n);
  return s;
}

TEST(WireCodecTest, OnlyKnownDifferentDatacentersCompress) {
  EXPECT_EQ(LinkLevel(3, "dc1", "dc2"), 3);
  EXPECT_EQ(LinkLevel(3, "dc1", "dc1"), 0);  // within a datacenter: as fast as before
  EXPECT_EQ(LinkLevel(3, "", "dc2"), 0);     // unknown: raw
  EXPECT_EQ(LinkLevel(3, "dc1", ""), 0);
  EXPECT_EQ(LinkLevel(0, "dc1", "dc2"), 0);  // off
}

TEST(WireCodecTest, CompressedFrameRoundTrips) {
  const std::string raw = Text(128 << 10);
  pb::DataChunk chunk;
  std::string scratch;
  std::string wire(EncodeFrameData(3, raw, &chunk, &scratch));
  EXPECT_EQ(chunk.zstd_raw_bytes(), static_cast<int64_t>(raw.size()));
  EXPECT_LT(wire.size(), raw.size() / 2);
  ASSERT_TRUE(DecodeFrameData(chunk, 128 << 10, &wire).ok());
  EXPECT_EQ(wire, raw);
}

TEST(WireCodecTest, RawWhenOffOrIncompressible) {
  std::string random(4096, '\0');
  uint64_t x = 88172645463325252ull;
  for (char& c : random) c = static_cast<char>((x ^= x << 13, x ^= x >> 7, x ^= x << 17));
  pb::DataChunk chunk;
  std::string scratch;
  std::string_view sent = EncodeFrameData(3, random, &chunk, &scratch);
  EXPECT_EQ(chunk.zstd_raw_bytes(), 0);  // zstd could not shrink it: sent as is,
  EXPECT_EQ(sent.data(), random.data());  // not copied
  EXPECT_EQ(sent.size(), random.size());
  const std::string text = Text(1000);
  sent = EncodeFrameData(0, text, &chunk, &scratch);
  EXPECT_EQ(chunk.zstd_raw_bytes(), 0);
  EXPECT_EQ(sent.data(), text.data());
  std::string wire(sent);
  ASSERT_TRUE(DecodeFrameData(chunk, 1000, &wire).ok());  // raw: untouched
  EXPECT_EQ(wire, Text(1000));
}

TEST(WireCodecTest, BadCompressedFramesAreCorruption) {
  const std::string raw = Text(70000);
  pb::DataChunk chunk;
  std::string scratch;
  const std::string wire(EncodeFrameData(3, raw, &chunk, &scratch));
  std::string flipped = wire;
  flipped[flipped.size() / 2] ^= 0x40;
  EXPECT_TRUE(DecodeFrameData(chunk, 1 << 20, &flipped).IsCorruption());
  std::string cut = wire.substr(0, wire.size() - 10);
  EXPECT_TRUE(DecodeFrameData(chunk, 1 << 20, &cut).IsCorruption());
  pb::DataChunk liar = chunk;  // says more bytes than the frame holds
  liar.set_zstd_raw_bytes(chunk.zstd_raw_bytes() + 1);
  std::string copy = wire;
  EXPECT_TRUE(DecodeFrameData(liar, 1 << 20, &copy).IsCorruption());
  copy = wire;  // more than a frame may carry: refused before allocating
  EXPECT_TRUE(DecodeFrameData(chunk, 65536, &copy).IsCorruption());
}

// A pipeline node forwards a frame unchanged when its encoding suits the
// next hop, else re-encodes it.
TEST(WireCodecTest, RelayForwardsOrReencodes) {
  const std::string raw = Text(128 << 10);
  pb::DataChunk in;
  in.set_offset(0);
  std::string scratch;
  const std::string wire(EncodeFrameData(3, raw, &in, &scratch));
  pb::Frame frame;
  in.SerializeToString(frame.mutable_body());
  for (int level : {3, 0}) {
    FrameRelay relay(level, 1 << 20);
    std::string data = wire;
    ASSERT_TRUE(relay.Decode(in, &data).ok());
    EXPECT_EQ(data, raw);
    auto [out, out_data] = relay.Forward(frame, in, data);
    pb::DataChunk sent;
    ASSERT_TRUE(sent.ParseFromString(out->body()));
    if (level == 3) {
      EXPECT_EQ(out, &frame);  // compressed in, compressed on: as received
      EXPECT_EQ(out_data, wire);
    } else {
      EXPECT_EQ(sent.zstd_raw_bytes(), 0);  // to the same datacenter: raw
      EXPECT_EQ(out_data, raw);
    }
  }
  FrameRelay up(3, 1 << 20);  // raw in, across on: compressed
  pb::DataChunk plain;
  pb::Frame plain_frame;
  plain.SerializeToString(plain_frame.mutable_body());
  std::string data = raw;
  ASSERT_TRUE(up.Decode(plain, &data).ok());
  auto [out, out_data] = up.Forward(plain_frame, plain, data);
  pb::DataChunk sent;
  ASSERT_TRUE(sent.ParseFromString(out->body()));
  EXPECT_EQ(sent.zstd_raw_bytes(), static_cast<int64_t>(raw.size()));
  EXPECT_LT(out_data.size(), raw.size() / 2);
}

}  // namespace
}  // namespace mr::dfs

#include "common/frame.h"

#include <gtest/gtest.h>

#include <string>

namespace mr {
namespace {

constexpr int64_t kMax = 4 << 20;

pb::Frame MakeHeader() {
  pb::Frame h;
  h.set_method("dfs.Mkdir");
  h.set_status_code(0);
  h.set_body(std::string("body\0bytes", 10));
  return h;
}

// Eight prefix bytes for the given lengths, built by hand (not by the codec).
std::string RawPrefix(uint32_t header_len, uint32_t data_len) {
  std::string p(8, '\0');
  for (int i = 0; i < 4; ++i) {
    p[i] = static_cast<char>(header_len >> (24 - 8 * i));
    p[4 + i] = static_cast<char>(data_len >> (24 - 8 * i));
  }
  return p;
}

TEST(FrameTest, RoundTripWithoutData) {
  // A control frame survives encode/decode and consumes exactly its bytes.
  const pb::Frame in = MakeHeader();
  const std::string bytes = EncodeFrame(in, {});
  pb::Frame out;
  std::string data = "stale";
  auto n = DecodeFrame(bytes, kMax, &out, &data);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, bytes.size());
  EXPECT_EQ(out.method(), "dfs.Mkdir");
  EXPECT_EQ(out.body(), in.body());
  EXPECT_TRUE(data.empty());  // stale contents replaced
}

TEST(FrameTest, RoundTripWithBulkData) {
  // Bulk bytes (including NULs and high bytes) travel untouched after the header.
  pb::Frame in = MakeHeader();
  in.set_status_code(4);
  in.set_status_message("disk on fire");
  std::string payload;
  for (int i = 0; i < 70000; ++i) payload.push_back(static_cast<char>(i * 7));
  const std::string bytes = EncodeFrame(in, payload);
  EXPECT_EQ(bytes.size(), kFramePrefixBytes + in.ByteSizeLong() + payload.size());

  pb::Frame out;
  std::string data;
  auto n = DecodeFrame(bytes, kMax, &out, &data);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(*n, bytes.size());
  EXPECT_EQ(out.status_code(), 4);
  EXPECT_EQ(out.status_message(), "disk on fire");
  EXPECT_EQ(data, payload);
}

TEST(FrameTest, EmptyHeaderAndEmptyData) {
  // An all-default header serializes to zero bytes; the frame is just the prefix.
  const std::string bytes = EncodeFrame(pb::Frame(), {});
  EXPECT_EQ(bytes, std::string(8, '\0'));
  pb::Frame out;
  std::string data;
  auto n = DecodeFrame(bytes, kMax, &out, &data);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 8u);
}

TEST(FrameTest, PrefixIsBigEndian) {
  // The wire format fixes big-endian lengths; check the exact bytes.
  char out[kFramePrefixBytes];
  EncodeFramePrefix({0x01020304u, 0xA0B0C0D0u}, out);
  const unsigned char expected[] = {0x01, 0x02, 0x03, 0x04, 0xA0, 0xB0, 0xC0, 0xD0};
  for (size_t i = 0; i < kFramePrefixBytes; ++i) {
    EXPECT_EQ(static_cast<unsigned char>(out[i]), expected[i]) << "byte " << i;
  }
  auto back = DecodeFramePrefix(out, int64_t{1} << 40);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->header_len, 0x01020304u);
  EXPECT_EQ(back->data_len, 0xA0B0C0D0u);
}

TEST(FrameTest, EncodeFrameWritesBigEndianLengths) {
  // EncodeFrame's prefix must name the real header and data sizes.
  pb::Frame h;
  h.set_method("m");  // 3 bytes: tag, length, 'm'
  const std::string bytes = EncodeFrame(h, std::string(0x0102, 'x'));
  EXPECT_EQ(bytes.substr(0, 8), std::string("\x00\x00\x00\x03\x00\x00\x01\x02", 8));
}

TEST(FrameTest, PartialInputConsumesNothingAtEveryCut) {
  // A reader with half a frame must wait for more bytes, whatever the cut point.
  const std::string bytes = EncodeFrame(MakeHeader(), "0123456789");
  for (size_t cut = 0; cut < bytes.size(); ++cut) {
    pb::Frame out;
    std::string data;
    auto n = DecodeFrame(std::string_view(bytes).substr(0, cut), kMax, &out, &data);
    ASSERT_TRUE(n.ok()) << "cut " << cut << ": " << n.status().ToString();
    EXPECT_EQ(*n, 0u) << "cut " << cut;
  }
}

TEST(FrameTest, FrameAtTheLimitIsAccepted) {
  // The limit is inclusive: header + data == max_frame_bytes is fine.
  const pb::Frame h = MakeHeader();
  const std::string data(100, 'd');
  const std::string bytes = EncodeFrame(h, data);
  const int64_t exact = static_cast<int64_t>(h.ByteSizeLong() + data.size());
  pb::Frame out;
  std::string got;
  auto n = DecodeFrame(bytes, exact, &out, &got);
  ASSERT_TRUE(n.ok()) << n.status().ToString();
  EXPECT_EQ(got, data);
}

TEST(FrameTest, OversizedFrameIsProtocolError) {
  // The limit covers header and data together, not each on its own.
  const pb::Frame h = MakeHeader();
  const std::string data(100, 'd');
  const std::string bytes = EncodeFrame(h, data);
  const int64_t one_short = static_cast<int64_t>(h.ByteSizeLong() + data.size()) - 1;
  ASSERT_GT(one_short, static_cast<int64_t>(data.size()));  // data alone would fit
  pb::Frame out;
  std::string got;
  auto n = DecodeFrame(bytes, one_short, &out, &got);
  EXPECT_TRUE(n.status().IsProtocolError()) << n.status().ToString();
}

TEST(FrameTest, OversizedPrefixRejectedBeforeTheBodyArrives) {
  // A peer announcing a huge frame is rejected from the prefix alone, so the
  // reader never waits for (or allocates) the announced bytes.
  pb::Frame out;
  std::string data;
  auto n = DecodeFrame(RawPrefix(0, 100u << 20), kMax, &out, &data);
  EXPECT_TRUE(n.status().IsProtocolError());
  n = DecodeFrame(RawPrefix(100u << 20, 0), kMax, &out, &data);
  EXPECT_TRUE(n.status().IsProtocolError());
}

TEST(FrameTest, MaximalLengthsDoNotWrapAround) {
  // 0xFFFFFFFF lengths must be summed without 32-bit overflow (which would
  // make a 0xFFFFFFFF + 1 frame look tiny).
  pb::Frame out;
  std::string data;
  auto n = DecodeFrame(RawPrefix(0, 0xFFFFFFFFu), kMax, &out, &data);
  EXPECT_TRUE(n.status().IsProtocolError());
  n = DecodeFrame(RawPrefix(1, 0xFFFFFFFFu), kMax, &out, &data);
  EXPECT_TRUE(n.status().IsProtocolError());
  n = DecodeFrame(RawPrefix(0xFFFFFFFFu, 0xFFFFFFFFu), kMax, &out, &data);
  EXPECT_TRUE(n.status().IsProtocolError());

  auto p = DecodeFramePrefix(RawPrefix(0xFFFFFFFFu, 0xFFFFFFFFu).data(), int64_t{0xFFFFFFFF});
  EXPECT_TRUE(p.status().IsProtocolError());
  // And with a limit that does allow it, the lengths come back intact.
  p = DecodeFramePrefix(RawPrefix(0xFFFFFFFFu, 0xFFFFFFFFu).data(), int64_t{0x1FFFFFFFE});
  ASSERT_TRUE(p.ok());
  EXPECT_EQ(p->header_len, 0xFFFFFFFFu);
  EXPECT_EQ(p->data_len, 0xFFFFFFFFu);
}

TEST(FrameTest, GarbageHeaderIsProtocolError) {
  // Header bytes that are not a protobuf Frame must be rejected, not ignored.
  const std::string garbage_headers[] = {
      std::string("\x0f", 1),                 // field 1 with invalid wire type 7
      std::string("\x00", 1),                 // field number 0 is invalid
      std::string{'\x0a', '\x05', 'a', 'b'},  // length-delimited field runs past the end
      std::string(11, '\xff'),                // varint longer than 10 bytes
  };
  for (const std::string& header : garbage_headers) {
    SCOPED_TRACE(testing::PrintToString(header));
    const std::string bytes = RawPrefix(static_cast<uint32_t>(header.size()), 0) + header;
    pb::Frame out;
    std::string data;
    auto n = DecodeFrame(bytes, kMax, &out, &data);
    EXPECT_TRUE(n.status().IsProtocolError()) << n.status().ToString();
  }
}

TEST(FrameTest, BackToBackFramesDecodeInSequence) {
  // A stream buffer holding several frames is consumed one frame at a time.
  pb::Frame a;
  a.set_method("first");
  pb::Frame b;
  b.set_status_code(1);
  b.set_status_message("second");
  const std::string stream = EncodeFrame(a, "AAA") + EncodeFrame(b, "") + std::string(2, '\0');

  std::string_view rest = stream;
  pb::Frame out;
  std::string data;
  auto n = DecodeFrame(rest, kMax, &out, &data);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(out.method(), "first");
  EXPECT_EQ(data, "AAA");
  rest.remove_prefix(*n);

  out.Clear();
  n = DecodeFrame(rest, kMax, &out, &data);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(out.method(), "");
  EXPECT_EQ(out.status_message(), "second");
  EXPECT_EQ(data, "");
  rest.remove_prefix(*n);

  // Two trailing bytes: the start of a third frame, not yet decodable.
  EXPECT_EQ(rest.size(), 2u);
  n = DecodeFrame(rest, kMax, &out, &data);
  ASSERT_TRUE(n.ok());
  EXPECT_EQ(*n, 0u);
}

}  // namespace
}  // namespace mr

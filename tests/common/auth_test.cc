#include "common/auth.h"

#include <gtest/gtest.h>

#include <set>
#include <string>
#include <vector>

#include "common/frame.h"

namespace mr {
namespace {

std::string Hex(const std::string& bytes) {
  static const char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

TEST(AuthTest, HmacSha256MatchesRfc4231Case2) {
  // A known-answer test proves we call OpenSSL's HMAC with the right key and message.
  EXPECT_EQ(Hex(HmacSha256("Jefe", "what do ya want for nothing?")),
            "5bdcc146bf60754e6a042426089575c75a003f089d2739839dec58b964ec3843");
}

TEST(AuthTest, HmacSha256HandlesBinaryKeysAndMessages) {
  // Secrets and nonces are binary; embedded NULs must not truncate either input.
  const std::string key("k\0ey", 4);
  const std::string a = HmacSha256(key, std::string("a\0b", 3));
  const std::string b = HmacSha256(key, std::string("a\0c", 3));
  EXPECT_EQ(a.size(), 32u);
  EXPECT_NE(a, b);
  EXPECT_NE(HmacSha256(std::string("k\0ex", 4), std::string("a\0b", 3)), a);
}

TEST(AuthTest, MacsAre32Bytes) {
  // Both proofs are full SHA-256 outputs.
  const std::string s = RandomBytes(kNonceBytes), c = RandomBytes(kNonceBytes);
  EXPECT_EQ(ClientMac("secret", s, c).size(), 32u);
  EXPECT_EQ(ServerMac("secret", c, s).size(), 32u);
}

TEST(AuthTest, ClientAndServerMacsAreDomainSeparated) {
  // A server must not be able to answer with the client's own proof (reflection).
  const std::string server_nonce = RandomBytes(kNonceBytes);
  const std::string client_nonce = RandomBytes(kNonceBytes);
  EXPECT_NE(ClientMac("secret", server_nonce, client_nonce),
            ServerMac("secret", client_nonce, server_nonce));
  // Even with the nonces swapped into the other's order.
  EXPECT_NE(ClientMac("secret", server_nonce, client_nonce),
            ServerMac("secret", server_nonce, client_nonce));
  // Even when both nonces are equal.
  EXPECT_NE(ClientMac("secret", server_nonce, server_nonce),
            ServerMac("secret", server_nonce, server_nonce));
}

TEST(AuthTest, MacsAreDeterministic) {
  // Both ends compute the same proof from the same inputs.
  const std::string s = RandomBytes(kNonceBytes), c = RandomBytes(kNonceBytes);
  EXPECT_EQ(ClientMac("secret", s, c), ClientMac("secret", s, c));
  EXPECT_EQ(ServerMac("secret", c, s), ServerMac("secret", c, s));
}

TEST(AuthTest, MacMatchesDocumentedConstruction) {
  // auth.h documents the exact message layout; other implementations rely on it.
  const std::string s(kNonceBytes, 's'), c(kNonceBytes, 'c');
  EXPECT_EQ(ClientMac("k", s, c), HmacSha256("k", "mr-auth-v1 client" + s + c));
  EXPECT_EQ(ServerMac("k", c, s), HmacSha256("k", "mr-auth-v1 server" + c + s));
}

TEST(AuthTest, DifferentNoncesGiveDifferentMacs) {
  // A recorded proof must be useless for a new challenge (no replay).
  const std::string s1 = RandomBytes(kNonceBytes), s2 = RandomBytes(kNonceBytes);
  const std::string c1 = RandomBytes(kNonceBytes), c2 = RandomBytes(kNonceBytes);
  EXPECT_NE(ClientMac("secret", s1, c1), ClientMac("secret", s2, c1));
  EXPECT_NE(ClientMac("secret", s1, c1), ClientMac("secret", s1, c2));
  EXPECT_NE(ServerMac("secret", c1, s1), ServerMac("secret", c2, s1));
  EXPECT_NE(ServerMac("secret", c1, s1), ServerMac("secret", c1, s2));
}

TEST(AuthTest, DifferentSecretsGiveDifferentMacs) {
  // The whole point: a peer without the secret cannot produce the proof.
  const std::string s = RandomBytes(kNonceBytes), c = RandomBytes(kNonceBytes);
  EXPECT_NE(ClientMac("secret", s, c), ClientMac("Secret", s, c));
  EXPECT_NE(ServerMac("secret", c, s), ServerMac("", c, s));
}

TEST(AuthTest, ConstantTimeEqualsSemantics) {
  // Same answers as ==, including for empty inputs and different lengths.
  EXPECT_TRUE(ConstantTimeEquals("", ""));
  EXPECT_TRUE(ConstantTimeEquals("abc", "abc"));
  EXPECT_TRUE(ConstantTimeEquals(std::string("a\0b", 3), std::string("a\0b", 3)));
  EXPECT_FALSE(ConstantTimeEquals("abc", "abd"));  // differs at the end
  EXPECT_FALSE(ConstantTimeEquals("xbc", "abc"));  // differs at the start
  EXPECT_FALSE(ConstantTimeEquals(std::string("a\0b", 3), std::string("a\0c", 3)));
  // A prefix is not equal: a truncated MAC must not authenticate.
  EXPECT_FALSE(ConstantTimeEquals("abc", "ab"));
  EXPECT_FALSE(ConstantTimeEquals("ab", "abc"));
  EXPECT_FALSE(ConstantTimeEquals("", "a"));
  const std::string mac = HmacSha256("k", "m");
  EXPECT_FALSE(ConstantTimeEquals(mac, ""));
  EXPECT_FALSE(ConstantTimeEquals(mac, mac.substr(0, 16)));
}

TEST(AuthTest, RandomBytesHasRequestedLength) {
  // Nonces must be exactly the length the handshake checks for.
  EXPECT_EQ(RandomBytes(0).size(), 0u);
  EXPECT_EQ(RandomBytes(1).size(), 1u);
  EXPECT_EQ(RandomBytes(kNonceBytes).size(), kNonceBytes);
  EXPECT_EQ(RandomBytes(4096).size(), 4096u);
}

TEST(AuthTest, RandomBytesDoNotRepeat) {
  // Repeating nonces would make recorded handshakes replayable.
  std::set<std::string> seen;
  for (int i = 0; i < 1000; ++i) {
    EXPECT_TRUE(seen.insert(RandomBytes(kNonceBytes)).second) << "repeat at " << i;
  }
  // And a nonce is not a constant fill (e.g. all zeros from an unfilled buffer).
  const std::string n = RandomBytes(kNonceBytes);
  EXPECT_NE(n, std::string(kNonceBytes, n[0]));
}

TEST(HandshakeChecksTest, AuthProofIsCheckedWithoutASocket) {
  // The server's check of each AuthProof, as a fuzzer or test reaches it.
  const std::string server_nonce = RandomBytes(kNonceBytes);
  pb::AuthProof proof;
  proof.set_client_nonce(RandomBytes(kNonceBytes));
  proof.set_client_mac(ClientMac("secret", server_nonce, proof.client_nonce()));
  EXPECT_TRUE(CheckAuthProof("secret", server_nonce, proof).ok());
  EXPECT_TRUE(CheckAuthProof("other", server_nonce, proof).IsPermissionDenied());
  EXPECT_TRUE(CheckAuthProof("secret", RandomBytes(kNonceBytes), proof).IsPermissionDenied());
  proof.set_client_nonce("short");
  EXPECT_TRUE(CheckAuthProof("secret", server_nonce, proof).IsProtocolError());
}

TEST(HandshakeChecksTest, HelloAndAuthOkChecks) {
  pb::Hello hello;
  hello.set_protocol_version(kProtocolVersion);
  hello.set_server_nonce(RandomBytes(kNonceBytes));
  EXPECT_TRUE(CheckHello(hello).ok());
  hello.set_protocol_version(kProtocolVersion + 1);
  EXPECT_TRUE(CheckHello(hello).IsProtocolError());
  const std::string cn = RandomBytes(kNonceBytes), sn = RandomBytes(kNonceBytes);
  pb::AuthOk ok;
  ok.set_server_mac(ServerMac("secret", cn, sn));
  EXPECT_TRUE(CheckAuthOk("secret", cn, sn, ok).ok());
  ok.set_server_mac(ClientMac("secret", sn, cn));  // a reflected client MAC
  EXPECT_TRUE(CheckAuthOk("secret", cn, sn, ok).IsPermissionDenied());
}

TEST(HandshakeChecksTest, EveryHandshakeFrameFitsThePreAuthCap) {
  // kMaxHandshakeFrameBytes is sized from the messages: the largest of each,
  // with the longest peer name, must fit (and decode under the cap).
  pb::AuthProof proof;
  proof.set_client_nonce(RandomBytes(kNonceBytes));
  proof.set_client_mac(ClientMac("s", "n", proof.client_nonce()));
  proof.set_peer_name(std::string(kMaxPeerNameBytes, 'w'));
  pb::Hello hello;
  hello.set_protocol_version(kProtocolVersion);
  hello.set_server_nonce(RandomBytes(kNonceBytes));
  pb::AuthOk ok;
  ok.set_server_mac(ServerMac("s", "n", "m"));
  pb::Frame error;
  error.set_status_code(99);
  error.set_status_message("authentication failed: wrong cluster secret");
  std::vector<pb::Frame> frames(3);
  proof.SerializeToString(frames[0].mutable_body());
  hello.SerializeToString(frames[1].mutable_body());
  ok.SerializeToString(frames[2].mutable_body());
  frames.push_back(error);
  for (const pb::Frame& frame : frames) {
    const std::string bytes = EncodeFrame(frame, "");
    pb::Frame decoded;
    std::string data;
    auto n = DecodeFrame(bytes, kMaxHandshakeFrameBytes, &decoded, &data);
    ASSERT_TRUE(n.ok()) << n.status().ToString();
    EXPECT_EQ(*n, bytes.size());
    EXPECT_LE(bytes.size(), kFramePrefixBytes + 200);  // well inside the cap
  }
  // A prefix announcing more than the cap is refused from the prefix alone.
  char prefix[kFramePrefixBytes];
  EncodeFramePrefix({0, static_cast<uint32_t>(kMaxHandshakeFrameBytes) + 1}, prefix);
  EXPECT_TRUE(DecodeFramePrefix(prefix, kMaxHandshakeFrameBytes).status().IsProtocolError());
}

}  // namespace
}  // namespace mr

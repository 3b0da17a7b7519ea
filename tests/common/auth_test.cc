#include "common/auth.h"

#include <gtest/gtest.h>

#include <set>
#include <string>

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

}  // namespace
}  // namespace mr

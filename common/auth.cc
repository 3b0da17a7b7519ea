#include "common/auth.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

#include <cstdio>
#include <cstdlib>

namespace mr {

std::string HmacSha256(std::string_view key, std::string_view message) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int out_len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), out, &out_len);
  return std::string(reinterpret_cast<char*>(out), out_len);
}

std::string RandomBytes(size_t n) {
  std::string out(n, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(out.data()), static_cast<int>(n)) != 1) {
    // Without randomness the handshake is replayable; refuse to go on.
    std::fprintf(stderr, "fatal: RAND_bytes failed\n");
    std::abort();
  }
  return out;
}

std::string ClientMac(std::string_view secret, std::string_view server_nonce,
                      std::string_view client_nonce) {
  std::string msg = "mr-auth-v1 client";
  msg.append(server_nonce).append(client_nonce);
  return HmacSha256(secret, msg);
}

std::string ServerMac(std::string_view secret, std::string_view client_nonce,
                      std::string_view server_nonce) {
  std::string msg = "mr-auth-v1 server";
  msg.append(client_nonce).append(server_nonce);
  return HmacSha256(secret, msg);
}

bool ConstantTimeEquals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

Status CheckHello(const pb::Hello& hello) {
  if (hello.protocol_version() != kProtocolVersion || hello.server_nonce().size() != kNonceBytes) {
    return Status::ProtocolError("unsupported handshake (protocol version " +
                                 std::to_string(hello.protocol_version()) + ")");
  }
  return Status::OK();
}

Status CheckAuthProof(std::string_view secret, std::string_view server_nonce,
                      const pb::AuthProof& proof) {
  if (proof.client_nonce().size() != kNonceBytes) {
    return Status::ProtocolError("handshake: client nonce of " +
                                 std::to_string(proof.client_nonce().size()) + " bytes");
  }
  if (!ConstantTimeEquals(proof.client_mac(),
                          ClientMac(secret, server_nonce, proof.client_nonce()))) {
    return Status::PermissionDenied("authentication failed: wrong cluster secret");
  }
  return Status::OK();
}

Status CheckAuthOk(std::string_view secret, std::string_view client_nonce,
                   std::string_view server_nonce, const pb::AuthOk& ok) {
  if (!ConstantTimeEquals(ok.server_mac(), ServerMac(secret, client_nonce, server_nonce))) {
    return Status::PermissionDenied("server does not know the cluster secret");
  }
  return Status::OK();
}

}  // namespace mr

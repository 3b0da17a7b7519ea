// Connection authentication: HMAC-SHA256 challenge-response on the cluster
// secret, mutual (each side proves knowledge of the secret to the other).
//
//   server → Hello{protocol_version, server_nonce}
//   client → AuthProof{client_nonce, client_mac, peer_name}
//   server → AuthOk{server_mac}      (or an error frame, then close)
//
// client_mac = HMAC(secret, "mr-auth-v1 client" | server_nonce | client_nonce)
// server_mac = HMAC(secret, "mr-auth-v1 server" | client_nonce | server_nonce)
//
// Nonces are 32 bytes from OpenSSL's RAND_bytes, so a recorded exchange
// cannot be replayed. Only the handshake is authenticated: frames after it
// are neither encrypted nor MACed (see docs/wire-format.md, "Security").
// Pure helpers here; the coroutines that run the exchange are in rpc.h.
#pragma once

#include <string>
#include <string_view>

namespace mr {

inline constexpr uint32_t kProtocolVersion = 1;
inline constexpr size_t kNonceBytes = 32;

std::string HmacSha256(std::string_view key, std::string_view message);
std::string RandomBytes(size_t n);
std::string ClientMac(std::string_view secret, std::string_view server_nonce,
                      std::string_view client_nonce);
std::string ServerMac(std::string_view secret, std::string_view client_nonce,
                      std::string_view server_nonce);
// Compares in time independent of where the inputs differ.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

}  // namespace mr

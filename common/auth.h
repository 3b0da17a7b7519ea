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
//
// Before the handshake has succeeded a peer may send only handshake frames,
// at most kMaxHandshakeFrameBytes each (header + data; the 8-byte prefix not
// counted), and the server gives it handshake_timeout_ms in all.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"
#include "proto/rpc.pb.h"

namespace mr {

inline constexpr uint32_t kProtocolVersion = 1;
inline constexpr size_t kNonceBytes = 32;
// A peer name longer than this is cut in the AuthProof (by the sender) and in
// logs (by the receiver).
inline constexpr size_t kMaxPeerNameBytes = 64;
// The largest frame either side accepts before authentication. The largest
// handshake frame is an AuthProof: 34 + 34 + (2 + 64) bytes of fields, in
// Frame.body (3 bytes of tag and length) — 137 bytes; an error frame carries
// a status message under 100 bytes. 512 leaves room and nothing more.
inline constexpr int64_t kMaxHandshakeFrameBytes = 512;

std::string HmacSha256(std::string_view key, std::string_view message);
std::string RandomBytes(size_t n);
std::string ClientMac(std::string_view secret, std::string_view server_nonce,
                      std::string_view client_nonce);
std::string ServerMac(std::string_view secret, std::string_view client_nonce,
                      std::string_view server_nonce);
// Compares in time independent of where the inputs differ.
bool ConstantTimeEquals(std::string_view a, std::string_view b);

// The checks of each handshake step, without a socket (Connection runs them;
// fuzzers and tests call them on decoded frames).
// Client, on the Hello: ProtocolError for another protocol version or a nonce
// that is not kNonceBytes long.
Status CheckHello(const pb::Hello& hello);
// Server, on the AuthProof answering a Hello with `server_nonce`:
// PermissionDenied unless client_mac proves `secret`; ProtocolError for a
// client nonce that is not kNonceBytes long.
Status CheckAuthProof(std::string_view secret, std::string_view server_nonce,
                      const pb::AuthProof& proof);
// Client, on the AuthOk: PermissionDenied unless server_mac proves `secret`.
Status CheckAuthOk(std::string_view secret, std::string_view client_nonce,
                   std::string_view server_nonce, const pb::AuthOk& ok);

}  // namespace mr

// The client side of the RPC harnesses (master_rpc_fuzzer.cc,
// worker_rpc_fuzzer.cc): it drives a real server, listening on 127.0.0.1 in
// the fuzzer's own process, over a real loopback socket.
//
// A fuzzer input is one connection. Its first byte chooses the phase:
//   even: pre-auth — the rest is raw bytes written to a fresh connection
//         instead of the handshake;
//   odd:  post-auth — the harness authenticates with the right secret, then
//         the rest is a list of records, each becoming one frame:
//           u8 method | u8 flags | u16 body_len | body | u16 data_len | data
//         (big-endian lengths, cut short at the end of the input). `method`
//         indexes the server's method table (past its end: "" or an unknown
//         name); flags & 0x80 sets status_code = flags & 0x7f; a harness
//         may repair a frame with flags & 0x40 (the worker's puts the right
//         checksums in a DataChunk, which no mutation would find).
// The client then half-closes and reads every frame until the server closes
// the connection. Whatever the bytes, the server must close (a connection
// still open after rpc_timeout_ms is a hang, and aborts the fuzzer), and
// every frame it sent must decode. CheckPreAuth() adds: before
// authentication the server sends its Hello and at most one error, nothing
// else.
//
// Not thread-safe: one driver per fuzzer process, used from the thread that
// runs the io_context.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "common/rpc.h"

namespace mr::fuzz {

// The secret of the harnesses' servers.
inline constexpr const char* kSecret = "fuzz-secret";

struct FuzzFrame {
  std::string method;
  int32_t status_code = 0;
  uint8_t flags = 0;
  std::string body;
  std::string data;
};

// Splits post-auth records (see above) into frames; `methods` is the table.
std::vector<FuzzFrame> ParseRecords(std::string_view bytes, const std::vector<std::string>& methods);

// One record, for writing seeds (tests/fuzz/make_seeds.cc).
std::string EncodeRecord(uint8_t method_index, uint8_t flags, std::string_view body,
                         std::string_view data = {});

class Driver {
 public:
  // `io` runs the server under test; `port` is where it listens.
  Driver(asio::io_context& io, uint16_t port, int timeout_ms);

  // Writes `bytes` on a fresh connection without a handshake, half-closes,
  // and returns every frame the server sent before closing.
  std::vector<pb::Frame> PreAuth(std::string_view bytes);
  // Authenticates, sends `frames`, half-closes, and returns every frame the
  // server sent before closing.
  std::vector<pb::Frame> PostAuth(const std::vector<FuzzFrame>& frames);
  // Authenticates, then for each frame: `repair(frame)` (which may rewrite
  // it from the replies so far), send, and wait for exactly one reply; then
  // half-closes and expects the server to close without sending more. For
  // servers whose every method is request/reply. Returns the replies.
  using Repair = std::function<void(FuzzFrame&, const std::vector<pb::Frame>& replies)>;
  std::vector<pb::Frame> PostAuthLockstep(std::vector<FuzzFrame> frames, const Repair& repair);

 private:
  // Runs `task` on io_ until it completes.
  void Run(awaitable<void> task);

  asio::io_context& io_;
  uint16_t port_;
  RpcOptions options_;
};

// Aborts unless `frames` is a Hello (version 1, 32-byte nonce) and at most
// one error frame.
void CheckPreAuth(const std::vector<pb::Frame>& frames);

// A fresh directory for a harness's server data, removed at exit. On
// /dev/shm when it exists: the master's and worker's RocksDB writes are
// synced, and on tmpfs an fsync costs nothing, so an input costs CPU time
// rather than disk latency.
std::string MakeTempDir(const std::string& prefix);

// Prints `why` to stderr and aborts (libFuzzer saves the input).
[[noreturn]] void Fail(const std::string& why);

}  // namespace mr::fuzz

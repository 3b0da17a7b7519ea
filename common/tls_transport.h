// The layer under asio::ssl::stream on a cluster connection (rpc.h): the TCP
// socket behind a 256 KiB read buffer, so that one recv() takes in many TLS
// records instead of one 16 KiB record each, and a 256 KiB write buffer used
// only while corked, so that the records of one frame leave in a few large
// send()s instead of one each. Connection corks around each frame it writes
// and flushes at its end; uncorked (the TLS handshake) writes pass straight
// through. docs/tls.md, "What limits TLS throughput".
//
// Not thread-safe: used by the one coroutine that owns the connection.
#pragma once

#include <cstddef>

#include <boost/asio/buffered_stream.hpp>
#include <boost/asio/ip/tcp.hpp>

namespace mr {

class TlsTransport : public boost::asio::buffered_stream<boost::asio::ip::tcp::socket&> {
 public:
  static constexpr size_t kBufferBytes = 256 << 10;

  explicit TlsTransport(boost::asio::ip::tcp::socket& socket)
      : buffered_stream(socket, kBufferBytes, kBufferBytes) {}

  // While corked, writes are gathered in the buffer (sent when it fills, and
  // by async_flush); otherwise they go to the socket at once.
  void set_corked(bool corked) { corked_ = corked; }

  // Called by ssl::stream (through asio::async_write) for its records.
  template <typename ConstBuffers, typename Token>
  auto async_write_some(const ConstBuffers& buffers, Token&& token) {
    return boost::asio::async_initiate<Token, void(boost::system::error_code, size_t)>(
        [this](auto handler, const ConstBuffers& buffers) {
          if (corked_) {
            buffered_stream::async_write_some(buffers, std::move(handler));
          } else {
            next_layer().async_write_some(buffers, std::move(handler));
          }
        },
        token, buffers);
  }

 private:
  bool corked_ = false;
};

}  // namespace mr

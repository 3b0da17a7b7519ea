// The TLS side of Connection (rpc.h, tls.h, docs/tls.md): the switch to TLS
// inside the handshake on each side, the TLS handshake itself, and reading
// and writing through TLS. Split from rpc.cc, which calls these from
// AuthenticateAsClient/AsServer, ReadAll and WriteAll.
//
// OpenSSL works on the socket's descriptor itself (non-blocking), not
// through asio's ssl::stream: that one moves every 16 KiB record through a
// BIO pair, three copies and two trips through the io_context, which cost
// more than the cipher (docs/tls.md, "What limits TLS throughput"). Here
// OpenSSL reads through a buffer BIO that takes in up to kTlsBufferBytes per
// read(), and a frame's records gather in another that is flushed at the
// frame's end. The coroutine waits on the socket only when OpenSSL says it
// would block.
#include <sys/socket.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "common/auth.h"
#include "common/awaitable.h"
#include "common/rpc.h"

namespace mr {
namespace {

using namespace asio::experimental::awaitable_operators;

// How many bytes one read() may bring in, and how many a frame's records
// gather before a send(). Not OpenSSL's read-ahead: with it, OpenSSL moves
// all the bytes it holds to the front of its buffer at every record, which
// for a 256 KiB buffer cost more than the cipher.
constexpr long kTlsBufferBytes = 256 << 10;
// At most the plaintext of one TLS record: a frame's header and the start
// of its data are sent as one record.
constexpr size_t kTlsRecordBytes = 16 << 10;

// What a failed SSL call means, as asio's ssl::stream reported it, so that
// the messages (and DescribeTlsFailure's reading of them) stay the same.
boost::system::error_code TlsErrorCode(int ssl_error, int saved_errno) {
  const unsigned long err = ERR_get_error();
  if (ssl_error == SSL_ERROR_ZERO_RETURN) return asio::error::eof;
  if (ssl_error == SSL_ERROR_SSL && ERR_GET_REASON(err) == SSL_R_UNEXPECTED_EOF_WHILE_READING) {
    return asio::ssl::error::stream_truncated;
  }
  if (err != 0) return {static_cast<int>(err), asio::error::get_ssl_category()};
  if (ssl_error == SSL_ERROR_SYSCALL) {
    if (saved_errno != 0) return {saved_errno, boost::system::system_category()};
    return asio::ssl::error::stream_truncated;
  }
  return asio::ssl::error::unexpected_result;
}

// A socket BIO that writes with send(MSG_NOSIGNAL): OpenSSL's own writes
// with write(), which raises SIGPIPE (ending the process) when the peer has
// reset the connection. The descriptor is the BIO's data; it is not closed.
int SocketBioWrite(BIO* bio, const char* data, int size) {
  errno = 0;
  const int fd = static_cast<int>(reinterpret_cast<intptr_t>(BIO_get_data(bio)));
  const int n = static_cast<int>(send(fd, data, static_cast<size_t>(size), MSG_NOSIGNAL));
  BIO_clear_retry_flags(bio);
  if (n < 0 && BIO_sock_should_retry(n)) BIO_set_retry_write(bio);
  return n;
}

int SocketBioRead(BIO* bio, char* data, int size) {
  errno = 0;
  const int fd = static_cast<int>(reinterpret_cast<intptr_t>(BIO_get_data(bio)));
  const int n = static_cast<int>(recv(fd, data, static_cast<size_t>(size), 0));
  BIO_clear_retry_flags(bio);
  if (n < 0 && BIO_sock_should_retry(n)) BIO_set_retry_read(bio);
  return n;
}

long SocketBioCtrl(BIO*, int command, long, void*) {
  return command == BIO_CTRL_FLUSH ? 1 : 0;  // nothing is buffered here
}

const BIO_METHOD* SocketBioMethod() {
  static BIO_METHOD* const method = [] {
    BIO_METHOD* m = BIO_meth_new(BIO_get_new_index() | BIO_TYPE_SOURCE_SINK, "mr socket");
    if (m != nullptr) {
      BIO_meth_set_write(m, SocketBioWrite);
      BIO_meth_set_read(m, SocketBioRead);
      BIO_meth_set_ctrl(m, SocketBioCtrl);
    }
    return m;
  }();
  return method;
}

BIO* NewSocketBio(int fd) {
  const BIO_METHOD* method = SocketBioMethod();
  BIO* bio = method ? BIO_new(method) : nullptr;
  if (bio == nullptr) return nullptr;
  BIO_set_data(bio, reinterpret_cast<void*>(static_cast<intptr_t>(fd)));
  BIO_set_init(bio, 1);
  return bio;
}

}  // namespace

awaitable<Status> Connection::UpgradeAsClient(const HostPort& target, pb::Hello* hello) {
  // Encrypt when this side's rule says so, or when the server requires it
  // (which can only add TLS, never take it away).
  if (!options_.tls->ClientWantsTls(target) && !hello->tls_required()) co_return Status::OK();
  if (!hello->tls_available()) {
    // Tell the server why this client goes away, so both sides log it.
    const Status wanted = Status::PermissionDenied(
        "this client requires TLS (tls = \"" + std::string(TlsModeName(options_.tls->mode())) +
        "\" there)");
    co_await SendError(wanted);
    Close();
    co_return Status::PermissionDenied(
        "server " + remote_endpoint_ + " does not offer TLS (its cluster.tls is \"off\"), and "
        "this connection must be encrypted (tls = \"" + TlsModeName(options_.tls->mode()) +
        "\" here)");
  }
  const std::string host = target.host.empty() ? remote_address_ : target.host;
  MR_CO_RETURN_IF_ERROR(co_await StartTls(/*server=*/false, host));
  // The handshake starts over inside TLS, with a fresh server nonce. Under
  // TLS 1.3 the server checks this client's certificate after the client's
  // side of the TLS handshake is done: a refusal arrives here, as an alert.
  Status s = co_await ReceiveReply(hello);
  if (!s.ok()) {
    Close();
    co_return Status(s.code(), "TLS with " + remote_endpoint_ + ": " +
                                   DescribeTlsFailure(tls_.get(), s.message(),
                                                      /*server=*/false,
                                                      options_.tls->cert_path()));
  }
  s = CheckHello(*hello);
  if (!s.ok()) {
    Close();
    co_return s.WithContext("from " + remote_endpoint_);
  }
  co_return Status::OK();
}

awaitable<Status> Connection::UpgradeAsServer(const std::string& plaintext_refused,
                                              pb::Hello* hello) {
  // A TLS ClientHello starts with 0x16 (handshake record); a frame's prefix
  // with 0x00 (its header is under 512 bytes).
  auto first = co_await PeekByte();
  if (!first.ok()) co_return first.status();
  if (*first == 0x16) {
    MR_CO_RETURN_IF_ERROR(co_await StartTls(/*server=*/true, ""));
    hello->set_server_nonce(RandomBytes(kNonceBytes));
    hello->clear_tls_available();
    hello->clear_tls_required();
    co_return co_await SendReply(*hello);
  }
  if (!hello->tls_required()) co_return Status::OK();
  // Read the AuthProof first: closing with unread bytes would reset the
  // connection before the client reads why.
  pb::AuthProof proof;
  co_await ReceiveReply(&proof);
  peer_name_ = proof.peer_name().substr(0, kMaxPeerNameBytes);
  const Status refused = Status::PermissionDenied(
      "TLS required: plaintext from " + remote_address_ + " is refused (" + plaintext_refused + ")");
  tls_refusal_ = "TLS required";
  co_await SendError(refused);
  Close();
  co_return refused;
}

awaitable<Status> Connection::StartTls(bool server, const std::string& host) {
  tls_.reset(SSL_new(options_.tls->context().native_handle()));
  SSL* ssl = tls_.get();
  // socket <- read buffer <- OpenSSL -> write buffer -> socket.
  BIO* socket_bio = tls_ ? NewSocketBio(socket_.native_handle()) : nullptr;
  BIO* read_bio = socket_bio ? BIO_new(BIO_f_buffer()) : nullptr;
  BIO* write_bio = read_bio ? BIO_new(BIO_f_buffer()) : nullptr;
  if (write_bio == nullptr || BIO_set_read_buffer_size(read_bio, kTlsBufferBytes) != 1 ||
      BIO_set_write_buffer_size(write_bio, kTlsBufferBytes) != 1) {
    BIO_free(socket_bio);
    BIO_free(read_bio);
    BIO_free(write_bio);
    Close();
    co_return Status::Internal("cannot set up TLS with " + remote_endpoint_ + ": out of memory");
  }
  BIO_up_ref(socket_bio);  // one reference for each chain
  BIO_push(read_bio, socket_bio);
  BIO_push(write_bio, socket_bio);
  SSL_set_bio(ssl, read_bio, write_bio);
  boost::system::error_code ignored;
  socket_.native_non_blocking(true, ignored);
  if (server) {
    SSL_set_accept_state(ssl);
  } else {
    SSL_set_connect_state(ssl);
    // OpenSSL checks during the handshake that the certificate names `host`.
    boost::system::error_code ec;
    asio::ip::make_address(host, ec);
    if (!ec) {
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str());
    } else {
      SSL_set1_host(ssl, host.c_str());
    }
  }
  const Clock::time_point deadline = Deadline();
  while (true) {
    if (!socket_.is_open()) {
      co_return Status::Unavailable("connection to " + remote_endpoint_ + " is closed");
    }
    ERR_clear_error();
    const int ret = SSL_do_handshake(ssl);
    if (ret == 1) break;
    const int ssl_error = SSL_get_error(ssl, ret);
    boost::system::error_code ec;
    if (ssl_error == SSL_ERROR_WANT_READ || ssl_error == SSL_ERROR_WANT_WRITE) {
      ec = co_await WaitSocket(ssl_error == SSL_ERROR_WANT_WRITE, deadline);
      if (!ec) continue;
      if (ec == asio::error::timed_out) {
        Close();
        co_return Status::TimedOut("TLS handshake with " + remote_endpoint_ + " timed out");
      }
    } else {
      ec = TlsErrorCode(ssl_error, errno);
    }
    const std::string refused = PeerVerifyError(ssl);
    if (server) tls_refusal_ = refused.empty() ? "TLS handshake" : refused;
    const std::string why =
        DescribeTlsFailure(ssl, ec.message(), server, options_.tls->cert_path());
    Close();
    co_return Status::PermissionDenied("TLS handshake with " + remote_endpoint_ +
                                       " failed: " + why);
  }
  MR_CO_RETURN_IF_ERROR(co_await TlsFlush(deadline));
  last_used_ = std::chrono::steady_clock::now();
  co_return Status::OK();
}

Status Connection::TlsFailed(int ret, int ssl_error, std::string_view what) {
  const int saved_errno = errno;
  boost::system::error_code ec;
  if (ret == 0 && ssl_error == SSL_ERROR_NONE) {
    ec = asio::error::eof;
  } else {
    ec = TlsErrorCode(ssl_error, saved_errno);
  }
  if (ec == asio::error::eof) {
    return Failed(Status::Unavailable("connection closed by " + remote_endpoint_));
  }
  return Failed(Status::Unavailable(std::string(what) + " " + remote_endpoint_ + ": " + ec.message()));
}

awaitable<Status> Connection::TlsTransfer(size_t size,
                                          const std::function<int(size_t done, size_t* n)>& op,
                                          std::string_view what, Clock::time_point deadline,
                                          bool stall_first) {
  size_t done = 0;
  while (done < size) {
    if (!socket_.is_open()) {
      co_return Failed(Status::Unavailable("connection to " + remote_endpoint_ + " is closed"));
    }
    ERR_clear_error();
    size_t n = 0;
    const int ret = op(done, &n);
    if (ret == 1) {
      done += n;
      continue;
    }
    const int ssl_error = SSL_get_error(tls_.get(), ret);
    if (ssl_error != SSL_ERROR_WANT_READ && ssl_error != SSL_ERROR_WANT_WRITE) {
      co_return TlsFailed(ret, ssl_error, what);
    }
    // Stall-bounded once a byte of this transfer moved (or from the start).
    const Clock::time_point until = WaitDeadline(deadline, stall_first || done > 0);
    const boost::system::error_code ec =
        co_await WaitSocket(ssl_error == SSL_ERROR_WANT_WRITE, until);
    if (ec == asio::error::timed_out) {
      co_return TimedOutOrStalled(what == "read from" ? "from" : "to", until, deadline);
    }
    if (ec) {
      co_return Failed(Status::Unavailable(std::string(what) + " " + remote_endpoint_ + ": " +
                                           ec.message()));
    }
  }
  co_return Status::OK();
}

awaitable<Status> Connection::TlsRead(asio::mutable_buffer buffer, Clock::time_point deadline,
                                      bool stall_first) {
  char* out = static_cast<char*>(buffer.data());
  const size_t size = buffer.size();
  // A named std::function, not a temporary in the co_await operand (GCC 12,
  // docs/development.md); it outlives the call.
  const std::function<int(size_t, size_t*)> read = [this, out, size](size_t done, size_t* n) {
    return SSL_read_ex(tls_.get(), out + done, size - done, n);
  };
  MR_CO_RETURN_IF_ERROR(co_await TlsTransfer(size, read, "read from", deadline, stall_first));
  last_used_ = std::chrono::steady_clock::now();
  co_return Status::OK();
}

awaitable<Status> Connection::TlsWriteBytes(const char* data, size_t size,
                                            Clock::time_point deadline) {
  // After WANT_WRITE, OpenSSL wants the same arguments again: `done` moves
  // only on success.
  const std::function<int(size_t, size_t*)> write = [this, data, size](size_t done, size_t* n) {
    return SSL_write_ex(tls_.get(), data + done, size - done, n);
  };
  co_return co_await TlsTransfer(size, write, "write to", deadline, /*stall_first=*/true);
}

awaitable<Status> Connection::TlsFlush(Clock::time_point deadline) {
  BIO* bio = SSL_get_wbio(tls_.get());
  while (true) {
    // Closed while this coroutine waited: the descriptor may be another's.
    if (!socket_.is_open()) {
      co_return Status::Unavailable("connection to " + remote_endpoint_ + " is closed");
    }
    if (BIO_flush(bio) > 0) break;
    if (!BIO_should_retry(bio)) {
      const std::string why = std::strerror(errno);
      co_return Failed(Status::Unavailable("write to " + remote_endpoint_ + ": " + why));
    }
    const Clock::time_point until = WaitDeadline(deadline, /*stall=*/true);
    const boost::system::error_code ec = co_await WaitSocket(/*write=*/true, until);
    if (ec == asio::error::timed_out) co_return TimedOutOrStalled("to", until, deadline);
    if (ec) {
      co_return Failed(Status::Unavailable("write to " + remote_endpoint_ + ": " + ec.message()));
    }
  }
  last_used_ = std::chrono::steady_clock::now();
  co_return Status::OK();
}

awaitable<Status> Connection::TlsWrite(asio::const_buffer header, asio::const_buffer data) {
  const Clock::time_point deadline = Deadline();
  // The header and the start of the data in one record, so that a small
  // header does not cost a record (and its 22 bytes) of its own.
  const size_t head =
      std::min(data.size(), kTlsRecordBytes - std::min(kTlsRecordBytes, header.size()));
  tls_first_record_.assign(static_cast<const char*>(header.data()), header.size());
  tls_first_record_.append(static_cast<const char*>(data.data()), head);
  MR_CO_RETURN_IF_ERROR(
      co_await TlsWriteBytes(tls_first_record_.data(), tls_first_record_.size(), deadline));
  MR_CO_RETURN_IF_ERROR(co_await TlsWriteBytes(static_cast<const char*>(data.data()) + head,
                                               data.size() - head, deadline));
  co_return co_await TlsFlush(deadline);
}

}  // namespace mr

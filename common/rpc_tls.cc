// The TLS side of Connection (rpc.h, tls.h, docs/tls.md): the switch to TLS
// inside the handshake on each side, and the TLS handshake itself. Split
// from rpc.cc, which calls these from AuthenticateAsClient/AsServer.
#include <chrono>
#include <string>

#include <boost/asio/experimental/awaitable_operators.hpp>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>

#include "common/auth.h"
#include "common/rpc.h"

namespace mr {
namespace {

using namespace asio::experimental::awaitable_operators;
constexpr auto kTuple = asio::as_tuple(asio::use_awaitable);

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
                                   DescribeTlsFailure(tls_->native_handle(), s.message(),
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
  tls_ = std::make_unique<asio::ssl::stream<TlsTransport>>(socket_, options_.tls->context());
  SSL* ssl = tls_->native_handle();
  if (!server) {
    // OpenSSL checks during the handshake that the certificate names `host`.
    boost::system::error_code ec;
    asio::ip::make_address(host, ec);
    if (!ec) {
      X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host.c_str());
    } else {
      SSL_set1_host(ssl, host.c_str());
    }
  }
  asio::steady_timer timer(socket_.get_executor(), Deadline());
  const auto type = server ? asio::ssl::stream_base::server : asio::ssl::stream_base::client;
  auto result = co_await (tls_->async_handshake(type, kTuple) || timer.async_wait(kTuple));
  if (result.index() == 1) {
    Close();
    co_return Status::TimedOut("TLS handshake with " + remote_endpoint_ + " timed out");
  }
  if (auto [ec] = std::get<0>(result); ec) {
    const std::string refused = PeerVerifyError(ssl);
    if (server) tls_refusal_ = refused.empty() ? "TLS handshake" : refused;
    const std::string why = DescribeTlsFailure(ssl, ec.message(), server, options_.tls->cert_path());
    Close();
    co_return Status::PermissionDenied("TLS handshake with " + remote_endpoint_ + " failed: " + why);
  }
  last_used_ = std::chrono::steady_clock::now();
  co_return Status::OK();
}

}  // namespace mr

#include "common/tls.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "common/private_file.h"

namespace mr {
namespace {

namespace ssl = boost::asio::ssl;

std::string Substitute(std::string path, const std::string& name) {
  for (size_t at; (at = path.find("{name}")) != std::string::npos;) path.replace(at, 6, name);
  return path;
}

// The last OpenSSL error as text, or `fallback`.
std::string OpenSslError(const std::string& fallback) {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  if (e == 0) return fallback;
  char buf[256];
  ERR_error_string_n(e, buf, sizeof buf);
  return buf;
}

bool IsIpLiteral(const std::string& host) {
  boost::system::error_code ec;
  boost::asio::ip::make_address(host, ec);
  return !ec;
}

Status NeedFile(const std::string& path, const std::string& what) {
  struct stat st;
  if (::stat(path.c_str(), &st) != 0) {
    return Status::InvalidArgument(what + " '" + path + "': " + std::strerror(errno));
  }
  return Status::OK();
}

// The certificate in PEM file `path`.
Result<X509*> ReadCertificate(const std::string& path, const std::string& what) {
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return Status::InvalidArgument(what + " '" + path + "': " + std::strerror(errno));
  X509* cert = PEM_read_X509(f, nullptr, nullptr, nullptr);
  std::fclose(f);
  if (cert == nullptr) {
    return Status::InvalidArgument(what + " '" + path + "' holds no PEM certificate: " +
                                   OpenSslError("unreadable"));
  }
  return cert;
}

}  // namespace

const char* TlsModeName(TlsMode mode) {
  switch (mode) {
    case TlsMode::kOff: return "off";
    case TlsMode::kInterDc: return "inter-dc";
    case TlsMode::kAll: return "all";
  }
  return "?";
}

std::string ClaimedCertName(const std::string& peer_name) {
  const size_t space = peer_name.find(' ');
  if (space == std::string::npos) return peer_name;
  const size_t end = peer_name.find(' ', space + 1);
  return peer_name.substr(space + 1, end == std::string::npos ? std::string::npos : end - space - 1);
}

Status CheckPeerCertificateName(SSL* ssl, const std::string& peer_name) {
  const std::string want = ClaimedCertName(peer_name);
  X509* cert = SSL_get0_peer_certificate(ssl);
  if (cert == nullptr) return Status::PermissionDenied("no client certificate");
  if (!want.empty() && X509_check_host(cert, want.data(), want.size(),
                                       X509_CHECK_FLAG_NEVER_CHECK_SUBJECT, nullptr) == 1) {
    return Status::OK();
  }
  std::string names;
  auto* sans = static_cast<GENERAL_NAMES*>(X509_get_ext_d2i(cert, NID_subject_alt_name, nullptr, nullptr));
  for (int i = 0; sans != nullptr && i < sk_GENERAL_NAME_num(sans); ++i) {
    const GENERAL_NAME* n = sk_GENERAL_NAME_value(sans, i);
    if (n->type != GEN_DNS) continue;
    const ASN1_STRING* s = n->d.dNSName;
    names += (names.empty() ? "" : ", ") +
             std::string(reinterpret_cast<const char*>(ASN1_STRING_get0_data(s)), ASN1_STRING_length(s));
  }
  GENERAL_NAMES_free(sans);
  return Status::PermissionDenied("certificate for '" + (names.empty() ? "?" : names) +
                                  "' presented by a peer that claims to be '" + peer_name +
                                  "' (needs a certificate for '" + want + "')");
}

std::string PeerVerifyError(SSL* ssl) {
  const long v = SSL_get_verify_result(ssl);
  return v == X509_V_OK ? "" : X509_verify_cert_error_string(v);
}

std::string DescribeTlsFailure(SSL* ssl, const std::string& error, bool server,
                               const std::string& own_cert) {
  const std::string peer = server ? "client" : "server";
  const std::string self = server ? "server" : "client";
  if (const std::string refused = PeerVerifyError(ssl); !refused.empty()) {
    return "the " + peer + "'s certificate is refused: " + refused;
  }
  const size_t at = error.find("alert ");
  if (at == std::string::npos) return error;
  std::string alert = error.substr(at + 6);
  alert = alert.substr(0, alert.find(" ("));  // drop " (SSL routines)"
  // The alerts a peer sends when it refuses a certificate (RFC 8446 §6.2).
  struct Meaning {
    const char* alert;
    const char* why;
  };
  static constexpr Meaning kCertificateAlerts[] = {
      {"unknown ca", "it is not signed by the CA the " /*peer*/},
      {"certificate expired", "it has expired or is not yet valid"},
      {"bad certificate", "e.g. it does not name the address that was dialled"},
      {"certificate required", "none was sent"},
      {"certificate unknown", "refused"},
      {"unsupported certificate", "refused"},
      {"certificate revoked", "revoked"},
  };
  for (const Meaning& m : kCertificateAlerts) {
    if (alert != m.alert) continue;
    std::string why = m.why;
    if (alert == "unknown ca") why += peer + " trusts";
    return "the " + peer + " refused this " + self + "'s certificate '" + own_cert + "' (" + why +
           "; TLS alert \"" + alert + "\")";
  }
  return "the " + peer + " ended TLS with alert \"" + alert + "\"";
}

Result<std::shared_ptr<const TlsPolicy>> TlsPolicy::Create(const ClusterConfig& config,
                                                          const std::string& name,
                                                          const std::string& datacenter,
                                                          bool server) {
  const ClusterOptions& c = config.cluster;
  if (c.tls.empty() || c.tls == "off") return std::shared_ptr<const TlsPolicy>();
  std::shared_ptr<TlsPolicy> p(new TlsPolicy());
  p->mode_ = c.tls == "all" ? TlsMode::kAll : TlsMode::kInterDc;
  p->name_ = name;
  p->datacenter_ = datacenter;
  const std::string why_on = std::string("cluster.tls is \"") + TlsModeName(p->mode_) + "\"";
  for (const auto& [key, value] : {std::pair{"tls_ca", c.tls_ca}, {"tls_cert", c.tls_cert},
                                   {"tls_key", c.tls_key}}) {
    if (value.empty()) {
      return Status::InvalidArgument(why_on + " (the default when an address is not loopback) "
                                     "and needs 'cluster." + key + "' (docs/tls.md)");
    }
  }
  p->ca_path_ = c.tls_ca;
  p->cert_path_ = Substitute(c.tls_cert, name);
  const std::string key_path = Substitute(c.tls_key, name);
  MR_RETURN_IF_ERROR(NeedFile(p->ca_path_, "cluster.tls_ca"));
  MR_RETURN_IF_ERROR(NeedFile(p->cert_path_, "cluster.tls_cert"));
  MR_RETURN_IF_ERROR(CheckPrivateFile(key_path, "cluster.tls_key"));

  // Which address is in which datacenter, from the cluster file.
  auto add = [&](const HostPort& address, const std::string& dc) {
    p->datacenter_by_address_[address.ToString()] = dc;
    if (!server) return;
    std::vector<std::string> ips;
    if (IsIpLiteral(address.host)) {
      ips.push_back(boost::asio::ip::make_address(address.host).to_string());
    } else {
      boost::asio::io_context io;
      boost::asio::ip::tcp::resolver resolver(io);
      boost::system::error_code ec;
      for (const auto& entry : resolver.resolve(address.host, "", ec)) {
        ips.push_back(entry.endpoint().address().to_string());
      }
    }
    // A node without a datacenter makes its address count as "another".
    for (const std::string& ip : ips) p->datacenters_by_ip_[ip].insert(dc.empty() ? "?" : dc);
  };
  add(config.master.address, config.master.datacenter);
  for (const WorkerOptions& w : config.workers) add(w.address, w.datacenter);
  if (name == "master") {
    if (IsIpLiteral(config.master.address.host)) p->source_host_ = config.master.address.host;
  } else if (const WorkerOptions* w = config.FindWorker(name)) {
    if (IsIpLiteral(w->address.host)) p->source_host_ = w->address.host;
  }

  try {
    p->context_ = std::make_unique<ssl::context>(ssl::context::tls);
    SSL_CTX* ctx = p->context_->native_handle();
    SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION);
    SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION);
    // No session tickets: nothing is resumed, and a ticket would be a
    // second, unauthenticated way in.
    SSL_CTX_set_num_tickets(ctx, 0);
    // AES-128-GCM first: with AES-NI the fastest of the TLS 1.3 suites.
    SSL_CTX_set_ciphersuites(ctx, "TLS_AES_128_GCM_SHA256:TLS_AES_256_GCM_SHA384:"
                                  "TLS_CHACHA20_POLY1305_SHA256");
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    p->context_->set_options(ssl::context::no_compression);
    p->context_->load_verify_file(p->ca_path_);
    p->context_->use_certificate_chain_file(p->cert_path_);
    p->context_->use_private_key_file(key_path, ssl::context::pem);
    p->context_->set_verify_mode(ssl::verify_peer | ssl::verify_fail_if_no_peer_cert);
  } catch (const boost::system::system_error& e) {
    return Status::InvalidArgument("TLS files (" + p->ca_path_ + ", " + p->cert_path_ + ", " +
                                   key_path + ") cannot be used: " + e.code().message());
  }
  if (SSL_CTX_check_private_key(p->context_->native_handle()) != 1) {
    return Status::InvalidArgument("cluster.tls_key '" + key_path + "' does not match '" +
                                   p->cert_path_ + "'");
  }
  return std::shared_ptr<const TlsPolicy>(std::move(p));
}

bool TlsPolicy::ClientWantsTls(const HostPort& target) const {
  if (mode_ == TlsMode::kAll) return true;
  if (mode_ == TlsMode::kOff) return false;
  if (datacenter_.empty()) return true;
  const std::string address = target.ToString();
  if (auto it = datacenter_by_address_.find(address); it != datacenter_by_address_.end()) {
    return it->second != datacenter_;
  }
  std::lock_guard lock(learned_mu_);
  auto it = learned_by_address_.find(address);
  return it == learned_by_address_.end() || it->second != datacenter_;
}

void TlsPolicy::LearnNode(const std::string& address, const std::string& datacenter) const {
  if (mode_ != TlsMode::kInterDc || datacenter_by_address_.count(address)) return;
  auto parsed = ParseHostPort(address);
  if (!parsed.ok()) return;
  std::lock_guard lock(learned_mu_);
  learned_by_address_[address] = datacenter;
  // Only IP literals: resolving a host name here would block the caller's
  // thread. A joined node advertised by name stays "unknown" to servers.
  if (IsIpLiteral(parsed->host)) {
    const std::string ip = boost::asio::ip::make_address(parsed->host).to_string();
    learned_by_ip_[ip].insert(datacenter.empty() ? "?" : datacenter);
  }
}

bool TlsPolicy::PlaintextAllowedFrom(const std::string& source, std::string* why) const {
  const std::string mode = std::string("tls = \"") + TlsModeName(mode_) + "\"";
  if (mode_ == TlsMode::kOff) return true;
  if (mode_ == TlsMode::kAll) {
    *why = mode;
    return false;
  }
  if (datacenter_.empty()) {
    *why = mode + " and this node's datacenter is not known";
    return false;
  }
  std::set<std::string> dcs;
  if (auto it = datacenters_by_ip_.find(source); it != datacenters_by_ip_.end()) dcs = it->second;
  {
    std::lock_guard lock(learned_mu_);
    if (auto it = learned_by_ip_.find(source); it != learned_by_ip_.end()) {
      dcs.insert(it->second.begin(), it->second.end());
    }
  }
  if (dcs.empty()) {
    *why = mode + " and " + source + " is no node's address in the cluster file or the master's list";
    return false;
  }
  if (dcs != std::set<std::string>{datacenter_}) {
    *why = mode + " and " + source + " is an address of a node outside datacenter " + datacenter_;
    return false;
  }
  return true;
}

Status TlsPolicy::CheckOwnCertificate() const {
  MR_ASSIGN_OR_RETURN(X509 * cert, ReadCertificate(cert_path_, "cluster.tls_cert"));
  X509_STORE* store = SSL_CTX_get_cert_store(context_->native_handle());
  X509_STORE_CTX* ctx = X509_STORE_CTX_new();
  Status s;
  if (ctx == nullptr || X509_STORE_CTX_init(ctx, store, cert, nullptr) != 1) {
    s = Status::Internal("cannot check " + cert_path_ + ": " + OpenSslError("out of memory"));
  } else if (X509_verify_cert(ctx) != 1) {
    s = Status::InvalidArgument("cluster.tls_cert '" + cert_path_ + "' is refused by the CA in '" +
                                ca_path_ + "': " +
                                X509_verify_cert_error_string(X509_STORE_CTX_get_error(ctx)));
  } else if (X509_check_host(cert, name_.data(), name_.size(),
                             X509_CHECK_FLAG_NEVER_CHECK_SUBJECT, nullptr) != 1) {
    s = Status::InvalidArgument("cluster.tls_cert '" + cert_path_ + "' is not a certificate for '" +
                                name_ + "' (issue one with: mrctl cert issue " + name_ + ")");
  }
  X509_STORE_CTX_free(ctx);
  X509_free(cert);
  return s;
}

namespace {
std::shared_ptr<const TlsPolicy>& ProcessTlsSlot() {
  static std::shared_ptr<const TlsPolicy> slot;
  return slot;
}
}  // namespace

std::shared_ptr<const TlsPolicy> ProcessTls() { return ProcessTlsSlot(); }

Status InitProcessTls(const ClusterConfig& config, const std::string& name,
                      const std::string& datacenter, bool server, bool check_own) {
  MR_ASSIGN_OR_RETURN(auto policy, TlsPolicy::Create(config, name, datacenter, server));
  if (policy && check_own) MR_RETURN_IF_ERROR(policy->CheckOwnCertificate());
  ProcessTlsSlot() = std::move(policy);
  return Status::OK();
}

}  // namespace mr

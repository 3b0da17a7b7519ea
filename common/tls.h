// TLS on cluster connections: which connections are encrypted, the process's
// certificate, and the checks of a peer's certificate (docs/tls.md).
//
// `[cluster] tls` chooses the mode: "off" (nothing is encrypted), "inter-dc"
// (a connection whose two ends are in different datacenters is encrypted)
// or "all". Under TLS every connection is TLS 1.3 with mutual certificate
// authentication against the cluster CA (`tls_ca`), and the HMAC handshake
// of auth.h runs unchanged inside it. How a connection starts (see
// docs/wire-format.md, "TLS"):
//
//   server → client   Hello {…, tls_available, tls_required}    (plaintext)
//   client → server   a TLS ClientHello (first byte 0x16), or the AuthProof
//
// The client encrypts when its own rule says so (ClientWantsTls: the
// target's datacenter, from the cluster file, is not its own, or unknown)
// or when the greeting says the server requires it. A server in "inter-dc"
// mode accepts plaintext only from a source address that the cluster file
// gives to nodes of its own datacenter and of no other
// (PlaintextAllowedFrom); in "all" mode from nobody.
//
// TlsPolicy is immutable after Create() and thread-safe; its SSL context
// makes the SSL objects of every connection of the process.
#pragma once

#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>

#include <boost/asio/ssl.hpp>

#include "common/config.h"
#include "common/status.h"

namespace mr {

enum class TlsMode { kOff, kInterDc, kAll };

// "off", "inter-dc", "all".
const char* TlsModeName(TlsMode mode);

// The name a peer claims in the handshake, as its certificate must carry it:
// the second word of its peer_name when it has one ("worker w1 task" → "w1",
// "mrctl alice" → "alice"), else the first ("master", "mrctl").
std::string ClaimedCertName(const std::string& peer_name);

// Server, after the HMAC handshake on a TLS connection: the client's
// certificate (verified against the CA by OpenSSL) must carry, as a DNS
// name, ClaimedCertName(peer_name). PermissionDenied naming both otherwise.
Status CheckPeerCertificateName(SSL* ssl, const std::string& peer_name);

// The reason OpenSSL gives for refusing the peer's certificate on `ssl`
// ("certificate has expired", ...), or "" when it did not refuse it.
std::string PeerVerifyError(SSL* ssl);

// Why a TLS handshake, or the first read inside TLS, failed, in one phrase
// for a log line: the peer's certificate refused here (OpenSSL's verify
// result on `ssl`), this side's certificate refused by the peer (its alert
// in `error`, e.g. "tlsv1 alert unknown ca"), else `error` as it is.
// `server` says which side this is; `own_cert` names this side's
// certificate file. Called by Connection (rpc_tls.cc).
std::string DescribeTlsFailure(SSL* ssl, const std::string& error, bool server,
                               const std::string& own_cert);

class TlsPolicy {
 public:
  // The policy of the process named `name` (a worker id, "master", or the
  // client's --tls-name) in datacenter `datacenter` ("" = unknown). Loads
  // tls_ca and this process's tls_cert and tls_key ("{name}" in a path is
  // replaced by `name`). With `server`, resolves the host names of the
  // cluster file once, to know which source addresses are in which
  // datacenter. Fails with one line naming the key and file: a missing file,
  // a key file readable by others, a key that does not match its
  // certificate, a mode other than off without the three paths. Returns
  // nullptr (and OK) when the mode is "off".
  static Result<std::shared_ptr<const TlsPolicy>> Create(const ClusterConfig& config,
                                                         const std::string& name,
                                                         const std::string& datacenter,
                                                         bool server);

  TlsMode mode() const { return mode_; }
  const std::string& name() const { return name_; }
  const std::string& datacenter() const { return datacenter_; }
  // This process's certificate file ({name} replaced).
  const std::string& cert_path() const { return cert_path_; }
  // This process's own listen host when it is an IP literal ("" otherwise):
  // in "inter-dc" mode outgoing connections leave from it, so a server can
  // tell the datacenter from the source address.
  const std::string& source_host() const { return source_host_; }

  // Client: true when a connection to `target` must be encrypted by this
  // side's own rule ("all"; "inter-dc" and the target's datacenter is not
  // this process's, or either is unknown).
  bool ClientWantsTls(const HostPort& target) const;
  // Server: true when a plaintext connection from source IP `source` may go
  // on ("inter-dc", this process's datacenter is known, and every node the
  // cluster file puts at `source` is in it). Otherwise `why` says why not.
  bool PlaintextAllowedFrom(const std::string& source, std::string* why) const;

  // Learns that the node at `address` ("host:port") is in `datacenter`,
  // from the master's list of members: workers that joined without a
  // [[worker]] entry are in no cluster file, and without this every link to
  // and from them would be encrypted under "inter-dc". The cluster file's
  // own entries keep precedence. Thread-safe; the master calls it on each
  // registration, a worker on each list the master sends.
  void LearnNode(const std::string& address, const std::string& datacenter) const;

  // Daemons at start: their own certificate is signed by the CA, valid now
  // and names `name`. One line otherwise, naming the file.
  Status CheckOwnCertificate() const;

  boost::asio::ssl::context& context() const { return *context_; }

 private:
  TlsPolicy() = default;

  TlsMode mode_ = TlsMode::kOff;
  std::string name_;
  std::string datacenter_;
  std::string source_host_;
  std::string cert_path_;
  std::string ca_path_;
  std::map<std::string, std::string> datacenter_by_address_;      // "host:port" → dc
  std::map<std::string, std::set<std::string>> datacenters_by_ip_;  // source IP → dcs
  std::unique_ptr<boost::asio::ssl::context> context_;
  // Learned from the master (LearnNode), for addresses the file lacks.
  mutable std::mutex learned_mu_;
  mutable std::map<std::string, std::string> learned_by_address_;
  mutable std::map<std::string, std::set<std::string>> learned_by_ip_;
};

// The process's policy, installed once by main() before any connection is
// made (RpcOptions::FromConfig copies it into every connection's options);
// nullptr when tls is off or nothing was installed. REQUIRES: called before
// other threads use RpcOptions::FromConfig.
std::shared_ptr<const TlsPolicy> ProcessTls();
// Creates and installs the process's policy; with `check_own` also runs
// CheckOwnCertificate (daemons do, so a bad certificate stops them at start).
Status InitProcessTls(const ClusterConfig& config, const std::string& name,
                      const std::string& datacenter, bool server, bool check_own);

}  // namespace mr

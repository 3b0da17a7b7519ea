// The cluster CA behind `mrctl cert init` and `mrctl cert issue`, written
// with OpenSSL's C API (no `openssl` binary needed on the machine, and key
// files are created mode 0600 before a byte of key is written).
//
// A directory holds the CA (ca.key, ca.crt) and the certificates it issued
// (NAME.key, NAME.crt). Keys are ECDSA P-256, certificates X.509 v3 signed
// with SHA-256; a node's certificate carries NAME as a DNS subject
// alternative name, plus every host it is reached at (IP or DNS), and may
// be used as both TLS server and client. See docs/tls.md.
//
// Functions of plain files; thread-compatible.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace mr::tools {

// Makes DIR/ca.key (0600) and DIR/ca.crt, valid for `days` days, with
// subject CN "`cluster_name` cluster CA". Creates DIR (0700) if missing.
// AlreadyExists if DIR/ca.key exists (a CA is never replaced by accident).
Status InitCertificateAuthority(const std::string& dir, const std::string& cluster_name, int days);

struct CertificateRequest {
  std::string name;                // a worker id, "master", or a client's name
  std::vector<std::string> hosts;  // addresses or host names the holder is reached at
  // Validity from now, in days. Zero or less makes a certificate that
  // expired |days| days ago (tests of the refusal of expired certificates).
  int days = 825;
  bool force = false;              // replace NAME.key and NAME.crt if present
};

// Makes OUT/NAME.key (0600) and OUT/NAME.crt, signed by the CA in `ca_dir`.
// AlreadyExists if NAME.key exists and !force; InvalidArgument for a name
// that is not letters, digits, '-', '_' and '.'.
Status IssueCertificate(const std::string& ca_dir, const std::string& out_dir,
                        const CertificateRequest& request);

}  // namespace mr::tools

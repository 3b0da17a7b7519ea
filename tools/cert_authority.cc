#include "tools/cert_authority.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <filesystem>
#include <memory>

#include <boost/asio/ip/address.hpp>
#include <openssl/bn.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include "common/private_file.h"
#include "common/tls.h"

namespace mr::tools {
namespace {

namespace fs = std::filesystem;

struct Free {
  void operator()(EVP_PKEY* p) const { EVP_PKEY_free(p); }
  void operator()(X509* p) const { X509_free(p); }
};
using Key = std::unique_ptr<EVP_PKEY, Free>;
using Cert = std::unique_ptr<X509, Free>;

Status OpenSslFailure(const std::string& what) {
  const unsigned long e = ERR_get_error();
  ERR_clear_error();
  char buf[256] = "unknown error";
  if (e != 0) ERR_error_string_n(e, buf, sizeof buf);
  return Status::Internal(what + ": " + buf);
}

Result<Key> NewKey() {
  Key key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  if (!key) return OpenSslFailure("cannot make a P-256 key");
  return key;
}

// Writes `write(FILE*)` to `path`, created with `mode` (O_EXCL unless `force`).
template <typename Fn>
Status WriteFile(const std::string& path, mode_t mode, bool force, Fn write) {
  if (force) ::unlink(path.c_str());
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
  if (fd < 0) {
    std::string m = "cannot create '" + path + "': " + std::strerror(errno);
    return errno == EEXIST ? Status::AlreadyExists(m + " (remove it, or --force)") : Status::IOError(m);
  }
  ::fchmod(fd, mode);  // whatever the umask
  std::FILE* f = ::fdopen(fd, "w");
  const bool ok = f != nullptr && write(f) == 1;
  if (f == nullptr || std::fclose(f) != 0 || !ok) {
    if (f == nullptr) ::close(fd);
    ::unlink(path.c_str());
    return OpenSslFailure("cannot write '" + path + "'");
  }
  return Status::OK();
}

Result<Key> ReadKey(const std::string& path) {
  MR_RETURN_IF_ERROR(CheckPrivateFile(path, "CA key"));
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return Status::NotFound("cannot read '" + path + "': " + std::strerror(errno));
  Key key(PEM_read_PrivateKey(f, nullptr, nullptr, nullptr));
  std::fclose(f);
  if (!key) return OpenSslFailure("'" + path + "' holds no PEM private key");
  return key;
}

Result<Cert> ReadCert(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "r");
  if (f == nullptr) return Status::NotFound("cannot read '" + path + "': " + std::strerror(errno));
  Cert cert(PEM_read_X509(f, nullptr, nullptr, nullptr));
  std::fclose(f);
  if (!cert) return OpenSslFailure("'" + path + "' holds no PEM certificate");
  return cert;
}

Status AddExtension(X509* cert, X509* issuer, int nid, const std::string& value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, issuer, cert, nullptr, nullptr, 0);
  X509_EXTENSION* ext = X509V3_EXT_conf_nid(nullptr, &ctx, nid, value.c_str());
  if (ext == nullptr) return OpenSslFailure("bad extension '" + value + "'");
  const int ok = X509_add_ext(cert, ext, -1);
  X509_EXTENSION_free(ext);
  return ok == 1 ? Status::OK() : OpenSslFailure("cannot add extension");
}

// A certificate for `key` with subject CN `common_name`, valid as `days`
// says (see CertificateRequest), not yet signed.
Result<Cert> NewCert(EVP_PKEY* key, const std::string& common_name, int days) {
  Cert cert(X509_new());
  if (!cert) return OpenSslFailure("X509_new");
  X509_set_version(cert.get(), 2);  // v3
  BIGNUM* serial = BN_new();
  BN_rand(serial, 127, BN_RAND_TOP_ANY, BN_RAND_BOTTOM_ANY);
  BN_to_ASN1_INTEGER(serial, X509_get_serialNumber(cert.get()));
  BN_free(serial);
  const long day = 24 * 3600;
  if (days > 0) {
    X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);  // some clock skew
    X509_gmtime_adj(X509_getm_notAfter(cert.get()), days * day);
  } else {
    X509_gmtime_adj(X509_getm_notBefore(cert.get()), (days - 1) * day);
    X509_gmtime_adj(X509_getm_notAfter(cert.get()), days * day - 60);
  }
  X509_set_pubkey(cert.get(), key);
  X509_NAME* subject = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_UTF8,
                             reinterpret_cast<const unsigned char*>(common_name.c_str()), -1, -1, 0);
  return cert;
}

bool IsValidName(const std::string& name) {
  if (name.empty() || name == "." || name == "..") return false;
  for (char c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c)) && c != '-' && c != '_' && c != '.') return false;
  }
  return true;
}

Status MakeDir(const std::string& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    fs::create_directories(dir, ec);
    if (ec) return Status::IOError("cannot create '" + dir + "': " + ec.message());
    ::chmod(dir.c_str(), 0700);
  }
  return Status::OK();
}

}  // namespace

Status InitCertificateAuthority(const std::string& dir, const std::string& cluster_name, int days) {
  if (days <= 0) return Status::InvalidArgument("--days must be positive for a CA");
  MR_RETURN_IF_ERROR(MakeDir(dir));
  MR_ASSIGN_OR_RETURN(Key key, NewKey());
  MR_ASSIGN_OR_RETURN(Cert cert, NewCert(key.get(), cluster_name + " cluster CA", days));
  X509_set_issuer_name(cert.get(), X509_get_subject_name(cert.get()));
  MR_RETURN_IF_ERROR(AddExtension(cert.get(), cert.get(), NID_basic_constraints, "critical,CA:TRUE,pathlen:0"));
  MR_RETURN_IF_ERROR(AddExtension(cert.get(), cert.get(), NID_key_usage, "critical,keyCertSign,cRLSign"));
  MR_RETURN_IF_ERROR(AddExtension(cert.get(), cert.get(), NID_subject_key_identifier, "hash"));
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) return OpenSslFailure("cannot sign the CA");
  MR_RETURN_IF_ERROR(WriteFile(dir + "/ca.key", 0600, false, [&](std::FILE* f) {
    return PEM_write_PrivateKey(f, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  }));
  return WriteFile(dir + "/ca.crt", 0644, true,
                   [&](std::FILE* f) { return PEM_write_X509(f, cert.get()); });
}

Status IssueCertificate(const std::string& ca_dir, const std::string& out_dir,
                        const CertificateRequest& r) {
  if (!IsValidName(r.name)) {
    return Status::InvalidArgument("certificate name '" + r.name +
                                   "' may contain only letters, digits, '-', '_' and '.'");
  }
  MR_ASSIGN_OR_RETURN(Key ca_key, ReadKey(ca_dir + "/ca.key"));
  MR_ASSIGN_OR_RETURN(Cert ca_cert, ReadCert(ca_dir + "/ca.crt"));
  MR_RETURN_IF_ERROR(MakeDir(out_dir));
  MR_ASSIGN_OR_RETURN(Key key, NewKey());
  MR_ASSIGN_OR_RETURN(Cert cert, NewCert(key.get(), r.name, r.days));
  X509_set_issuer_name(cert.get(), X509_get_subject_name(ca_cert.get()));
  std::string san = "DNS:" + r.name;
  for (const std::string& host : r.hosts) {
    boost::system::error_code ec;
    boost::asio::ip::make_address(host, ec);
    san += (ec ? ",DNS:" : ",IP:") + host;
  }
  X509* c = cert.get();
  MR_RETURN_IF_ERROR(AddExtension(c, ca_cert.get(), NID_basic_constraints, "critical,CA:FALSE"));
  MR_RETURN_IF_ERROR(AddExtension(c, ca_cert.get(), NID_key_usage, "critical,digitalSignature"));
  MR_RETURN_IF_ERROR(AddExtension(c, ca_cert.get(), NID_ext_key_usage, "serverAuth,clientAuth"));
  MR_RETURN_IF_ERROR(AddExtension(c, ca_cert.get(), NID_subject_alt_name, san));
  MR_RETURN_IF_ERROR(AddExtension(c, ca_cert.get(), NID_authority_key_identifier, "keyid"));
  if (X509_sign(c, ca_key.get(), EVP_sha256()) == 0) return OpenSslFailure("cannot sign");
  const std::string base = out_dir + "/" + r.name;
  MR_RETURN_IF_ERROR(WriteFile(base + ".key", 0600, r.force, [&](std::FILE* f) {
    return PEM_write_PrivateKey(f, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  }));
  return WriteFile(base + ".crt", 0644, true, [&](std::FILE* f) { return PEM_write_X509(f, c); });
}

}  // namespace mr::tools

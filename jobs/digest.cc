#include "jobs/digest.h"

#include <openssl/evp.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace mr::jobs {
namespace {

std::string Hex(const unsigned char* d, unsigned n) {
  static const char kDigits[] = "0123456789abcdef";
  std::string s;
  for (unsigned i = 0; i < n; ++i) s += kDigits[d[i] >> 4], s += kDigits[d[i] & 15];
  return s;
}

}  // namespace

std::string Sha256Hex(std::string_view data) {
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned n = 0;
  EVP_Digest(data.data(), data.size(), md, &n, EVP_sha256(), nullptr);
  return Hex(md, n);
}

Result<std::string> Sha256FileHex(const std::string& path) {
  std::unique_ptr<FILE, int (*)(FILE*)> f(std::fopen(path.c_str(), "rb"), &std::fclose);
  if (!f) return Status::IOError("cannot read '" + path + "': " + std::strerror(errno));
  std::unique_ptr<EVP_MD_CTX, void (*)(EVP_MD_CTX*)> ctx(EVP_MD_CTX_new(), &EVP_MD_CTX_free);
  EVP_DigestInit_ex(ctx.get(), EVP_sha256(), nullptr);
  char buf[1 << 16];
  size_t n;
  while ((n = std::fread(buf, 1, sizeof(buf), f.get())) > 0) EVP_DigestUpdate(ctx.get(), buf, n);
  if (std::ferror(f.get())) return Status::IOError("cannot read '" + path + "'");
  unsigned char md[EVP_MAX_MD_SIZE];
  unsigned len = 0;
  EVP_DigestFinal_ex(ctx.get(), md, &len);
  return Hex(md, len);
}

}  // namespace mr::jobs

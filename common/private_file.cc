#include "common/private_file.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <string>

namespace mr {
namespace {

std::string Octal(mode_t mode) {
  char buf[8];
  std::snprintf(buf, sizeof(buf), "%04o", static_cast<unsigned>(mode & 07777));
  return buf;
}

Status StatError(const std::string& path, const std::string& what, int err) {
  const std::string m = what + " '" + path + "': " + std::strerror(err);
  return err == ENOENT ? Status::NotFound(m) : Status::IOError(m);
}

// The mode and type rules, on a stat of the file itself (PostgreSQL's rule
// for its ssl_key_file): no permission for others; no group write or
// execute; group read only when root owns the file (root:mr 0640, read by
// daemons running as mr), so a file of another owner must be 0600 or less.
Status CheckStat(const struct stat& st, const std::string& path, const std::string& what) {
  if (!S_ISREG(st.st_mode)) {
    return Status::InvalidArgument(what + " '" + path + "' is not a regular file");
  }
  if ((st.st_mode & 007) != 0) {
    return Status::InvalidArgument(what + " '" + path + "' is accessible by others (mode " +
                                   Octal(st.st_mode) + "); run: chmod o-rwx " + path);
  }
  if ((st.st_mode & 030) != 0) {
    return Status::InvalidArgument(what + " '" + path +
                                   "' is writable or executable by its group (mode " +
                                   Octal(st.st_mode) + "); run: chmod g-wx " + path);
  }
  if ((st.st_mode & 040) != 0 && st.st_uid != 0) {
    return Status::InvalidArgument(what + " '" + path + "' is readable by its group (mode " +
                                   Octal(st.st_mode) + ") and not owned by root (uid " +
                                   std::to_string(st.st_uid) + "); run: chmod g-rwx " + path +
                                   " (or make it root-owned, group mr, mode 0640)");
  }
  return Status::OK();
}

}  // namespace

Status CheckPrivateFile(const std::string& path, const std::string& what) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return StatError(path, what, errno);
  return CheckStat(st, path, what);
}

Result<std::string> ReadPrivateFile(const std::string& path, const std::string& what) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return StatError(path, what, errno);
  struct stat st {};
  Status s = ::fstat(fd, &st) == 0 ? CheckStat(st, path, what) : StatError(path, what, errno);
  std::string text;
  char buf[4096];
  while (s.ok()) {
    const ssize_t n = ::read(fd, buf, sizeof(buf));
    if (n == 0) break;
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      s = Status::IOError("cannot read " + what + " '" + path + "': " + std::strerror(errno));
    } else if (text.size() + n > (1 << 20)) {
      s = Status::InvalidArgument(what + " '" + path + "' is larger than 1 MiB");
    } else {
      text.append(buf, n);
    }
  }
  ::close(fd);
  if (!s.ok()) return s;
  while (!text.empty() && (text.back() == '\n' || text.back() == '\r' || text.back() == ' ' ||
                           text.back() == '\t')) {
    text.pop_back();
  }
  if (text.empty()) return Status::InvalidArgument(what + " '" + path + "' is empty");
  return text;
}

}  // namespace mr

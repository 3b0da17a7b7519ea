// Files that hold secrets: the cluster secret (`[cluster] secret_file`) and,
// later, TLS private keys. Such a file must exist, be a regular file, and not
// be readable or writable by "others" (mode & 007 == 0); group read is
// allowed, so a file root:mr 0640 works for a daemon running as user mr.
//
// Thread-safe (no shared state).
#pragma once

#include <string>

#include "common/status.h"

namespace mr {

// Checks `path` without reading it. `what` names the file in the message
// ("secret file", "key file"). Errors, each one line naming the path:
//   NotFound         — the file does not exist;
//   InvalidArgument  — not a regular file, or mode & 007 != 0 (the message
//                      gives the mode and the chmod that fixes it);
//   IOError          — it cannot be stat()ed for another reason.
// Called by ReadPrivateFile, and by whoever hands a key file's path to a
// library that opens it itself (OpenSSL).
Status CheckPrivateFile(const std::string& path, const std::string& what);

// Reads a private file and returns its contents without trailing whitespace
// (the newline `echo` leaves). The same checks as CheckPrivateFile, made on
// the opened file (no window between check and read), plus InvalidArgument
// when nothing but whitespace is left. Called by LoadClusterConfig for
// `cluster.secret_file`.
Result<std::string> ReadPrivateFile(const std::string& path, const std::string& what);

}  // namespace mr

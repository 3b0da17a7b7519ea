// Files that hold secrets: the cluster secret (`[cluster] secret_file`) and,
// later, TLS private keys. Such a file must exist, be a regular file, give
// "others" no permission (mode & 007 == 0) and its group no write or execute
// (mode & 030 == 0). Group read is allowed only when root owns the file
// (root:mr 0640 works for a daemon running as user mr); a file owned by
// anyone else must be 0600 or less. This is PostgreSQL's rule for its key.
//
// Thread-safe (no shared state).
#pragma once

#include <string>

#include "common/status.h"

namespace mr {

// Checks `path` without reading it. `what` names the file in the message
// ("secret file", "key file"). Errors, each one line naming the path:
//   NotFound         — the file does not exist;
//   InvalidArgument  — not a regular file, or a mode the rule above refuses
//                      (the message gives the mode and the chmod that fixes
//                      it);
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

// SHA-256 digests, as lowercase hex: of shipped job files (checked by every
// worker that fetches them) and of streaming jobs' code (the FP table's
// code hash, JoSS Fig. 4 line 1).
#pragma once

#include <string>
#include <string_view>

#include "common/status.h"

namespace mr::jobs {

// 64 hex digits.
std::string Sha256Hex(std::string_view data);
// Of a local file's bytes. IOError when it cannot be read.
Result<std::string> Sha256FileHex(const std::string& path);

}  // namespace mr::jobs

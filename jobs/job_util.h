// Small helpers the built-in jobs share: the word splitter (word_split.h),
// summing counts, boolean parameters. Internal to jobs/.
#pragma once

#include <algorithm>
#include <charconv>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>

#include "common/status.h"
#include "jobs/job.h"
#include "jobs/word_split.h"

namespace mr::jobs {

// The sum of decimal counts, as Map and Combine emit them. A value that is
// not a decimal int64 (std::from_chars: an optional '-', digits, nothing
// else, in range) adds nothing (jobs only sum values they wrote). The sum
// wraps modulo 2^64, so partial sums add up to the same total in any order.
// A job whose Combine emits (key, std::to_string(SumCounts(values))) declares
// CombinerKind::kSumCounts (jobs/job.h); the map side then sums the same way.
inline int64_t SumCounts(ValueStream& values) {
  uint64_t sum = 0;
  std::string_view v;
  while (values.Next(&v)) {
    int64_t n = 0;
    auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (ec == std::errc() && end == v.data() + v.size()) sum += static_cast<uint64_t>(n);
  }
  return static_cast<int64_t>(sum);
}

// Parameter `name`, or "" when it is absent. ResolveParams() fills in
// defaults, but a job must not throw (std::map::at) for a caller that
// skipped it.
inline std::string GetParam(const Params& params, const std::string& name) {
  auto it = params.find(name);
  return it == params.end() ? std::string() : it->second;
}

// Parameter `name` as a boolean: "true" or "false". A missing parameter is
// `fallback`; anything else is InvalidArgument.
inline Result<bool> ParseBoolParam(const Params& params, const std::string& name, bool fallback) {
  auto it = params.find(name);
  if (it == params.end()) return fallback;
  if (it->second == "true") return true;
  if (it->second == "false") return false;
  return Status::InvalidArgument("parameter '" + name + "' must be true or false, not '" +
                                 it->second + "'");
}

}  // namespace mr::jobs

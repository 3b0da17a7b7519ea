// Parsing helpers for the list-valued policy parameters ("pools",
// "queues"): "a:1:2, b:3" → items split on ',' and fields on ':'.
#pragma once

#include <charconv>
#include <cmath>
#include <string>
#include <type_traits>
#include <vector>

namespace mr::sched {

// `s` without leading and trailing spaces and tabs.
std::string TrimSpaces(const std::string& s);

// Splits on `sep` and trims each piece; "" gives one empty piece.
std::vector<std::string> SplitTrimmed(const std::string& s, char sep);

// The whole of `s` as a number (finite, for floating point); false otherwise.
template <typename T>
bool ParseNumber(const std::string& s, T* out) {
  const char* end = s.data() + s.size();
  auto [ptr, ec] = std::from_chars(s.data(), end, *out);
  if (ec != std::errc() || ptr != end) return false;
  if constexpr (std::is_floating_point_v<T>) return std::isfinite(*out);
  return true;
}

}  // namespace mr::sched

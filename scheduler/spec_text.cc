#include "scheduler/spec_text.h"

namespace mr::sched {

std::string TrimSpaces(const std::string& s) {
  const size_t b = s.find_first_not_of(" \t");
  if (b == std::string::npos) return "";
  return s.substr(b, s.find_last_not_of(" \t") - b + 1);
}

std::vector<std::string> SplitTrimmed(const std::string& s, char sep) {
  std::vector<std::string> out;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || s[i] == sep) {
      out.push_back(TrimSpaces(s.substr(start, i - start)));
      start = i + 1;
    }
  }
  return out;
}

}  // namespace mr::sched

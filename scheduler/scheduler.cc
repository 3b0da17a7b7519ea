// Parameter helpers for policies' make functions (scheduler.h). Type
// checking and defaults are the registry's job (registry.cc).
#include "scheduler/scheduler.h"

#include <charconv>
#include <cstdlib>
#include <iostream>

namespace mr::sched {
namespace {

[[noreturn]] void Die(const std::string& name, const char* want) {
  std::cerr << "scheduler parameter '" << name << "' is missing or not a " << want
            << " (a bug in the policy's PolicyInfo)\n";
  std::abort();
}

template <typename T>
const T& Get(const SchedulerParams& params, const std::string& name, const char* want) {
  auto it = params.find(name);
  if (it == params.end() || !std::holds_alternative<T>(it->second)) Die(name, want);
  return std::get<T>(it->second);
}

}  // namespace

bool ParamBool(const SchedulerParams& params, const std::string& name) {
  return Get<bool>(params, name, "bool");
}

int64_t ParamInt(const SchedulerParams& params, const std::string& name) {
  return Get<int64_t>(params, name, "int");
}

double ParamDouble(const SchedulerParams& params, const std::string& name) {
  auto it = params.find(name);
  if (it != params.end() && std::holds_alternative<int64_t>(it->second)) {
    return static_cast<double>(std::get<int64_t>(it->second));
  }
  return Get<double>(params, name, "double");
}

const std::string& ParamString(const SchedulerParams& params, const std::string& name) {
  return Get<std::string>(params, name, "string");
}

const char* ParamTypeName(const ParamValue& value) {
  switch (value.index()) {
    case 0:
      return "bool";
    case 1:
      return "int";
    case 2:
      return "double";
    default:
      return "string";
  }
}

std::string ParamToString(const ParamValue& value) {
  if (const bool* b = std::get_if<bool>(&value)) return *b ? "true" : "false";
  if (const int64_t* i = std::get_if<int64_t>(&value)) return std::to_string(*i);
  if (const double* d = std::get_if<double>(&value)) {
    char buf[64];
    auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), *d);
    std::string s(buf, end);
    if (s.find_first_of(".eEn") == std::string::npos) s += ".0";  // TOML float: 1.0, not 1
    return s;
  }
  std::string out = "\"";
  for (char c : std::get<std::string>(value)) {
    if (c == '"' || c == '\\') out += '\\';
    out += c;
  }
  return out + "\"";
}

}  // namespace mr::sched

// Parameter helpers for policies' make functions, and the parameter
// check the registries of policies and speculators share (scheduler.h).
#include "scheduler/scheduler.h"

#include <algorithm>
#include <charconv>
#include <cstdlib>
#include <iostream>

namespace mr::sched {
namespace {

[[noreturn]] void DieParamBug(const std::string& name, const char* want) {
  std::cerr << "scheduler parameter '" << name << "' is missing or not a " << want
            << " (a bug in the policy's PolicyInfo)\n";
  std::abort();
}

template <typename T>
const T& Get(const SchedulerParams& params, const std::string& name, const char* want) {
  auto it = params.find(name);
  if (it == params.end() || !std::holds_alternative<T>(it->second)) DieParamBug(name, want);
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

std::string JoinNames(const std::vector<std::string>& names) {
  if (names.empty()) return "none";
  std::string out;
  for (const std::string& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

namespace {

// "an int", "a double".
std::string WithArticle(const std::string& type) { return (type[0] == 'i' ? "an " : "a ") + type; }

}  // namespace

Result<SchedulerParams> CompleteParams(const std::string& what,
                                       const std::vector<SchedulerParamSpec>& specs,
                                       const SchedulerParams& given) {
  std::vector<std::string> names;
  for (const SchedulerParamSpec& spec : specs) names.push_back(spec.name);
  const std::string where = what + ": ";
  for (const auto& [name, value] : given) {
    if (std::find(names.begin(), names.end(), name) == names.end()) {
      return Status::InvalidArgument(where + "unknown parameter '" + name +
                                     "' (parameters: " + JoinNames(names) + ")");
    }
  }
  SchedulerParams complete;
  for (const SchedulerParamSpec& spec : specs) {
    auto it = given.find(spec.name);
    if (it == given.end()) {
      complete[spec.name] = spec.default_value;
      continue;
    }
    ParamValue value = it->second;
    if (std::holds_alternative<double>(spec.default_value) &&
        std::holds_alternative<int64_t>(value)) {
      value = static_cast<double>(std::get<int64_t>(value));
    }
    if (value.index() != spec.default_value.index()) {
      return Status::InvalidArgument(where + "parameter '" + spec.name + "' must be " +
                                     WithArticle(ParamTypeName(spec.default_value)) + ", got " +
                                     WithArticle(ParamTypeName(it->second)) + " (" +
                                     ParamToString(it->second) + ")");
    }
    complete[spec.name] = std::move(value);
  }
  return complete;
}

}  // namespace mr::sched

// Internal to sim/: the strict reader of one TOML table that the scenario
// file parser (scenario_file.cc) and its [live] table (scenario_live.cc)
// share. Errors name keys by their full path ("'workload.load' must be in
// [0, 10] (got 12)"). Not thread-safe; cheap to copy.
#pragma once

#include <toml++/toml.h>

#include <algorithm>
#include <initializer_list>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "common/status.h"

namespace mr::sim::scenario_internal {

inline Status Invalid(const std::string& m) { return Status::InvalidArgument(m); }

inline std::string Num(double v) {
  std::ostringstream os;
  os << v;
  return os.str();
}

// Reads the keys of one table; errors name keys by their full path.
class Reader {
 public:
  Reader(const toml::table* t, std::string path) : t_(t), path_(std::move(path)) {}
  std::string Name(std::string_view key) const {
    return "'" + (path_.empty() ? "" : path_ + ".") + std::string(key) + "'";
  }
  const toml::node* Get(std::string_view key) const { return t_ ? t_->get(key) : nullptr; }

  Status Keys(std::initializer_list<std::string_view> known) const {
    if (t_ == nullptr) return Status::OK();
    for (const auto& [key, node] : *t_) {
      if (std::find(known.begin(), known.end(), key.str()) == known.end()) {
        return Invalid("unknown key " + Name(key.str()));
      }
    }
    return Status::OK();
  }
  Status Sub(std::string_view key, Reader* out) const {
    const toml::node* n = Get(key);
    if (n != nullptr && !n->is_table()) return Invalid(Name(key) + " must be a table");
    *out = Reader(n ? n->as_table() : nullptr, Path(key));
    return Status::OK();
  }
  // The tables of an array of tables (absent = none).
  Status Tables(std::string_view key, std::vector<Reader>* out) const {
    const toml::node* n = Get(key);
    if (n == nullptr) return Status::OK();
    if (!n->is_array_of_tables()) return Invalid(Name(key) + " must be an array of tables");
    size_t i = 0;
    for (const toml::node& e : *n->as_array()) {
      out->emplace_back(e.as_table(), Path(key) + "[" + std::to_string(i++) + "]");
    }
    return Status::OK();
  }
  Status String(std::string_view key, std::string* out) const {
    const toml::node* n = Get(key);
    if (n == nullptr) return Status::OK();
    if (!n->is_string()) return Invalid(Name(key) + " must be a string");
    *out = n->as_string()->get();
    return Status::OK();
  }
  Status OneOf(std::string_view key, std::initializer_list<std::string_view> allowed,
               std::string* out) const {
    MR_RETURN_IF_ERROR(String(key, out));
    if (std::find(allowed.begin(), allowed.end(), *out) != allowed.end()) return Status::OK();
    std::string list;
    for (std::string_view a : allowed) list += (list.empty() ? "" : ", ") + std::string(a);
    return Invalid(Name(key) + " must be one of " + list + " (got '" + *out + "')");
  }
  Status Bool(std::string_view key, bool* out) const {
    const toml::node* n = Get(key);
    if (n == nullptr) return Status::OK();
    if (!n->is_boolean()) return Invalid(Name(key) + " must be a boolean");
    *out = n->as_boolean()->get();
    return Status::OK();
  }
  template <typename T>
  Status Int(std::string_view key, int64_t min, int64_t max, T* out) const {
    const toml::node* n = Get(key);
    if (n == nullptr) return Status::OK();
    if (!n->is_integer()) return Invalid(Name(key) + " must be an integer");
    const int64_t v = n->as_integer()->get();
    if (v < min || v > max) {
      return Invalid(Name(key) + " must be in [" + std::to_string(min) + ", " +
                     std::to_string(max) + "] (got " + std::to_string(v) + ")");
    }
    *out = static_cast<T>(v);
    return Status::OK();
  }
  // A number in [min, max]; an integer is accepted.
  Status Double(std::string_view key, double min, double max, double* out) const {
    const toml::node* n = Get(key);
    if (n == nullptr) return Status::OK();
    double v;
    if (n->is_floating_point()) {
      v = n->as_floating_point()->get();
    } else if (n->is_integer()) {
      v = static_cast<double>(n->as_integer()->get());
    } else {
      return Invalid(Name(key) + " must be a number");
    }
    if (!(v >= min && v <= max)) {
      return Invalid(Name(key) + " must be in [" + Num(min) + ", " + Num(max) + "] (got " +
                     Num(v) + ")");
    }
    *out = v;
    return Status::OK();
  }
  std::string Path(std::string_view key) const {
    return (path_.empty() ? "" : path_ + ".") + std::string(key);
  }
  const std::string& path() const { return path_; }

 private:
  const toml::table* t_;
  std::string path_;
};

}  // namespace mr::sim::scenario_internal

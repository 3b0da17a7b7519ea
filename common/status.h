// mr::Status and mr::Result<T>: the one error type of the project.
//
// Shaped like leveldb::Status: cheap when OK (an enum and an empty string),
// named factories, predicates. Exceptions never cross a module boundary; code
// that calls a throwing library catches at its edge and returns a Status.
//
// Thread-compatible: a const Status may be read from several threads.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>

namespace mr {

class Status {
 public:
  // The numeric values travel on the wire (proto Frame.status_code); only append.
  enum class Code : int32_t {
    kOk = 0,
    kNotFound = 1,
    kCorruption = 2,
    kInvalidArgument = 3,
    kIOError = 4,
    kAlreadyExists = 5,
    kUnavailable = 6,         // a peer is down or unreachable; retry elsewhere
    kTimedOut = 7,
    kPermissionDenied = 8,    // authentication failed
    kFailedPrecondition = 9,  // e.g. rm of a non-empty directory without -r
    kProtocolError = 10,      // malformed or oversized frame
    kInternal = 11,
    kAborted = 12,            // the caller stopped an operation (e.g. a sink refused bytes)
  };

  Status() = default;
  Status(Code code, std::string_view message) : code_(code), message_(message) {}

  static Status OK() { return Status(); }
  static Status NotFound(std::string_view m) { return {Code::kNotFound, m}; }
  static Status Corruption(std::string_view m) { return {Code::kCorruption, m}; }
  static Status InvalidArgument(std::string_view m) { return {Code::kInvalidArgument, m}; }
  static Status IOError(std::string_view m) { return {Code::kIOError, m}; }
  static Status AlreadyExists(std::string_view m) { return {Code::kAlreadyExists, m}; }
  static Status Unavailable(std::string_view m) { return {Code::kUnavailable, m}; }
  static Status TimedOut(std::string_view m) { return {Code::kTimedOut, m}; }
  static Status PermissionDenied(std::string_view m) { return {Code::kPermissionDenied, m}; }
  static Status FailedPrecondition(std::string_view m) { return {Code::kFailedPrecondition, m}; }
  static Status ProtocolError(std::string_view m) { return {Code::kProtocolError, m}; }
  static Status Internal(std::string_view m) { return {Code::kInternal, m}; }
  static Status Aborted(std::string_view m) { return {Code::kAborted, m}; }

  bool ok() const { return code_ == Code::kOk; }
  bool IsNotFound() const { return code_ == Code::kNotFound; }
  bool IsCorruption() const { return code_ == Code::kCorruption; }
  bool IsInvalidArgument() const { return code_ == Code::kInvalidArgument; }
  bool IsIOError() const { return code_ == Code::kIOError; }
  bool IsAlreadyExists() const { return code_ == Code::kAlreadyExists; }
  bool IsUnavailable() const { return code_ == Code::kUnavailable; }
  bool IsTimedOut() const { return code_ == Code::kTimedOut; }
  bool IsPermissionDenied() const { return code_ == Code::kPermissionDenied; }
  bool IsFailedPrecondition() const { return code_ == Code::kFailedPrecondition; }
  bool IsProtocolError() const { return code_ == Code::kProtocolError; }
  bool IsAborted() const { return code_ == Code::kAborted; }

  Code code() const { return code_; }
  const std::string& message() const { return message_; }

  // "OK", or "<code name>: <message>".
  std::string ToString() const;
  static const char* CodeName(Code code);

  // Returns a copy whose message is "<context>: <message>"; OK stays OK.
  Status WithContext(std::string_view context) const;

 private:
  Code code_ = Code::kOk;
  std::string message_;
};

// Either a value or a non-OK Status.
template <typename T>
class Result {
 public:
  Result(T value) : v_(std::move(value)) {}           // NOLINT: implicit by design
  Result(Status status) : v_(std::move(status)) {}    // NOLINT  REQUIRES: !status.ok()

  bool ok() const { return std::holds_alternative<T>(v_); }
  const Status& status() const {
    static const Status kOk;
    return ok() ? kOk : std::get<Status>(v_);
  }
  T& value() & { return std::get<T>(v_); }
  const T& value() const& { return std::get<T>(v_); }
  T&& value() && { return std::get<T>(std::move(v_)); }
  T& operator*() & { return value(); }
  const T& operator*() const& { return value(); }
  T* operator->() { return &value(); }
  const T* operator->() const { return &value(); }

 private:
  std::variant<Status, T> v_;
};

}  // namespace mr

#define MR_CONCAT_INNER_(a, b) a##b
#define MR_CONCAT_(a, b) MR_CONCAT_INNER_(a, b)

#define MR_RETURN_IF_ERROR(expr)            \
  do {                                      \
    ::mr::Status mr_status_ = (expr);       \
    if (!mr_status_.ok()) return mr_status_; \
  } while (0)

#define MR_CO_RETURN_IF_ERROR(expr)            \
  do {                                         \
    ::mr::Status mr_status_ = (expr);          \
    if (!mr_status_.ok()) co_return mr_status_; \
  } while (0)

#define MR_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                              \
  if (!tmp.ok()) return tmp.status();             \
  lhs = std::move(tmp).value()

#define MR_ASSIGN_OR_RETURN(lhs, expr) \
  MR_ASSIGN_OR_RETURN_IMPL_(MR_CONCAT_(mr_result_, __LINE__), lhs, expr)

#define MR_CO_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                 \
  if (!tmp.ok()) co_return tmp.status();             \
  lhs = std::move(tmp).value()

#define MR_CO_ASSIGN_OR_RETURN(lhs, expr) \
  MR_CO_ASSIGN_OR_RETURN_IMPL_(MR_CONCAT_(mr_result_, __LINE__), lhs, expr)

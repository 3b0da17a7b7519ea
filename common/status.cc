#include "common/status.h"

namespace mr {

const char* Status::CodeName(Code code) {
  switch (code) {
    case Code::kOk: return "OK";
    case Code::kNotFound: return "NotFound";
    case Code::kCorruption: return "Corruption";
    case Code::kInvalidArgument: return "InvalidArgument";
    case Code::kIOError: return "IOError";
    case Code::kAlreadyExists: return "AlreadyExists";
    case Code::kUnavailable: return "Unavailable";
    case Code::kTimedOut: return "TimedOut";
    case Code::kPermissionDenied: return "PermissionDenied";
    case Code::kFailedPrecondition: return "FailedPrecondition";
    case Code::kProtocolError: return "ProtocolError";
    case Code::kInternal: return "Internal";
    case Code::kAborted: return "Aborted";
  }
  return "Unknown";
}

std::string Status::ToString() const {
  if (ok()) return "OK";
  return std::string(CodeName(code_)) + ": " + message_;
}

Status Status::WithContext(std::string_view context) const {
  if (ok()) return *this;
  return Status(code_, std::string(context) + ": " + message_);
}

}  // namespace mr

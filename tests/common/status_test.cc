#include "common/status.h"

#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <vector>

namespace mr {
namespace {

using Code = Status::Code;

// ------------------------------------------------------------------ Status

TEST(StatusTest, DefaultIsOk) {
  // A default Status must be the cheap OK value callers return on success.
  Status s;
  EXPECT_TRUE(s.ok());
  EXPECT_EQ(s.code(), Code::kOk);
  EXPECT_TRUE(s.message().empty());
  EXPECT_TRUE(Status::OK().ok());
  EXPECT_EQ(Status::OK().ToString(), "OK");
}

TEST(StatusTest, FactoriesSetCodeAndMessage) {
  // Every named factory must produce its own code and keep the message verbatim.
  struct Case {
    Status status;
    Code code;
    const char* name;
  };
  const std::vector<Case> cases = {
      {Status::NotFound("m"), Code::kNotFound, "NotFound"},
      {Status::Corruption("m"), Code::kCorruption, "Corruption"},
      {Status::InvalidArgument("m"), Code::kInvalidArgument, "InvalidArgument"},
      {Status::IOError("m"), Code::kIOError, "IOError"},
      {Status::AlreadyExists("m"), Code::kAlreadyExists, "AlreadyExists"},
      {Status::Unavailable("m"), Code::kUnavailable, "Unavailable"},
      {Status::TimedOut("m"), Code::kTimedOut, "TimedOut"},
      {Status::PermissionDenied("m"), Code::kPermissionDenied, "PermissionDenied"},
      {Status::FailedPrecondition("m"), Code::kFailedPrecondition, "FailedPrecondition"},
      {Status::ProtocolError("m"), Code::kProtocolError, "ProtocolError"},
      {Status::Internal("m"), Code::kInternal, "Internal"},
      {Status::Aborted("m"), Code::kAborted, "Aborted"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(c.name);
    EXPECT_FALSE(c.status.ok());
    EXPECT_EQ(c.status.code(), c.code);
    EXPECT_EQ(c.status.message(), "m");
    EXPECT_STREQ(Status::CodeName(c.code), c.name);
    EXPECT_EQ(c.status.ToString(), std::string(c.name) + ": m");
  }
}

TEST(StatusTest, PredicatesMatchOnlyTheirOwnCode) {
  // A predicate that also fired for other codes would misroute error handling.
  const Status nf = Status::NotFound("x");
  EXPECT_TRUE(nf.IsNotFound());
  EXPECT_FALSE(nf.IsCorruption());
  EXPECT_FALSE(nf.IsInvalidArgument());
  EXPECT_FALSE(nf.IsIOError());
  EXPECT_FALSE(nf.IsAlreadyExists());
  EXPECT_FALSE(nf.IsUnavailable());
  EXPECT_FALSE(nf.IsTimedOut());
  EXPECT_FALSE(nf.IsPermissionDenied());
  EXPECT_FALSE(nf.IsFailedPrecondition());
  EXPECT_FALSE(nf.IsProtocolError());
  EXPECT_FALSE(nf.IsAborted());

  EXPECT_TRUE(Status::Corruption("x").IsCorruption());
  EXPECT_TRUE(Status::InvalidArgument("x").IsInvalidArgument());
  EXPECT_TRUE(Status::IOError("x").IsIOError());
  EXPECT_TRUE(Status::AlreadyExists("x").IsAlreadyExists());
  EXPECT_TRUE(Status::Unavailable("x").IsUnavailable());
  EXPECT_TRUE(Status::TimedOut("x").IsTimedOut());
  EXPECT_TRUE(Status::PermissionDenied("x").IsPermissionDenied());
  EXPECT_TRUE(Status::FailedPrecondition("x").IsFailedPrecondition());
  EXPECT_TRUE(Status::ProtocolError("x").IsProtocolError());
  EXPECT_TRUE(Status::Aborted("x").IsAborted());

  // OK answers false to every error predicate.
  const Status ok = Status::OK();
  EXPECT_FALSE(ok.IsNotFound());
  EXPECT_FALSE(ok.IsIOError());
  EXPECT_FALSE(ok.IsProtocolError());
}

TEST(StatusTest, WireCodesAreStable) {
  // The numeric codes travel in Frame.status_code; renumbering breaks old peers.
  EXPECT_EQ(static_cast<int32_t>(Code::kOk), 0);
  EXPECT_EQ(static_cast<int32_t>(Code::kNotFound), 1);
  EXPECT_EQ(static_cast<int32_t>(Code::kInvalidArgument), 3);
  EXPECT_EQ(static_cast<int32_t>(Code::kPermissionDenied), 8);
  EXPECT_EQ(static_cast<int32_t>(Code::kProtocolError), 10);
  EXPECT_EQ(static_cast<int32_t>(Code::kAborted), 12);
}

TEST(StatusTest, CodeNameOfUnknownValue) {
  // A code from a newer peer must still print, not crash.
  EXPECT_STREQ(Status::CodeName(static_cast<Code>(999)), "Unknown");
}

TEST(StatusTest, EmptyMessageStillPrintsCode) {
  // An error without a message is still recognisable in logs.
  EXPECT_EQ(Status::Internal("").ToString(), "Internal: ");
}

TEST(StatusTest, WithContextPrefixesMessageAndKeepsCode) {
  // Context is added as callers unwind, innermost message last.
  const Status s = Status::NotFound("block 7").WithContext("reading /a").WithContext("job 3");
  EXPECT_TRUE(s.IsNotFound());
  EXPECT_EQ(s.message(), "job 3: reading /a: block 7");
  EXPECT_EQ(s.ToString(), "NotFound: job 3: reading /a: block 7");
}

TEST(StatusTest, WithContextOnOkStaysOk) {
  // Adding context to success must not turn it into an error or add text.
  const Status s = Status::OK().WithContext("anything");
  EXPECT_TRUE(s.ok());
  EXPECT_TRUE(s.message().empty());
}

TEST(StatusTest, WithContextDoesNotModifyOriginal) {
  // WithContext returns a copy; the original must be reusable unchanged.
  const Status original = Status::IOError("disk");
  const Status copy = original.WithContext("ctx");
  EXPECT_EQ(original.message(), "disk");
  EXPECT_EQ(copy.message(), "ctx: disk");
}

// ------------------------------------------------------------------ Result

TEST(ResultTest, HoldsValue) {
  // The value path: ok(), value(), operator* and operator-> all reach the value.
  Result<std::string> r(std::string("hello"));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r.status().ok());
  EXPECT_EQ(r.value(), "hello");
  EXPECT_EQ(*r, "hello");
  EXPECT_EQ(r->size(), 5u);
  r.value() += "!";
  EXPECT_EQ(*r, "hello!");
}

TEST(ResultTest, HoldsError) {
  // The error path keeps the full Status.
  Result<int> r = Status::NotFound("nope");
  EXPECT_FALSE(r.ok());
  EXPECT_TRUE(r.status().IsNotFound());
  EXPECT_EQ(r.status().message(), "nope");
}

TEST(ResultTest, ConstAccess) {
  // Read-only callers get the value through the const overloads.
  const Result<std::vector<int>> r(std::vector<int>{1, 2, 3});
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(r.value().size(), 3u);
  EXPECT_EQ((*r)[1], 2);
  EXPECT_EQ(r->back(), 3);
}

TEST(ResultTest, MoveOnlyValueCanBeTakenOut) {
  // Results carry unique_ptrs (e.g. Namespace::Open); the rvalue value() moves out.
  Result<std::unique_ptr<int>> r(std::make_unique<int>(42));
  ASSERT_TRUE(r.ok());
  std::unique_ptr<int> p = std::move(r).value();
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(*p, 42);
}

TEST(ResultTest, ZeroIsAValueNotAnError) {
  // A falsy value must not be mistaken for the error alternative.
  Result<int> r(0);
  EXPECT_TRUE(r.ok());
  EXPECT_EQ(*r, 0);
}

// ------------------------------------------------------------------ macros

Status FailIf(bool fail) { return fail ? Status::IOError("boom") : Status::OK(); }

Result<int> ParsePositive(int v) {
  if (v <= 0) return Status::InvalidArgument("not positive: " + std::to_string(v));
  return v;
}

// Counts how far it got, so tests can see that the macro returned early.
Status TwoSteps(bool fail_first, bool fail_second, int* steps) {
  MR_RETURN_IF_ERROR(FailIf(fail_first));
  ++*steps;
  MR_RETURN_IF_ERROR(FailIf(fail_second));
  ++*steps;
  return Status::OK();
}

Result<int> SumOfTwo(int a, int b) {
  MR_ASSIGN_OR_RETURN(int x, ParsePositive(a));
  MR_ASSIGN_OR_RETURN(int y, ParsePositive(b));  // two uses in one scope must not clash
  return x + y;
}

Status AssignIntoExisting(int v, int* out) {
  int value = -1;
  MR_ASSIGN_OR_RETURN(value, ParsePositive(v));
  *out = value;
  return Status::OK();
}

Result<std::unique_ptr<int>> MakeBox(int v) {
  if (v < 0) return Status::InvalidArgument("negative");
  return std::make_unique<int>(v);
}

Result<int> Unbox(int v) {
  MR_ASSIGN_OR_RETURN(std::unique_ptr<int> box, MakeBox(v));
  return *box;
}

TEST(MacroTest, ReturnIfErrorPassesOk) {
  // With no errors every step runs and OK comes back.
  int steps = 0;
  EXPECT_TRUE(TwoSteps(false, false, &steps).ok());
  EXPECT_EQ(steps, 2);
}

TEST(MacroTest, ReturnIfErrorReturnsEarlyWithTheSameStatus) {
  // The first failure stops the function and is returned unchanged.
  int steps = 0;
  Status s = TwoSteps(true, false, &steps);
  EXPECT_TRUE(s.IsIOError());
  EXPECT_EQ(s.message(), "boom");
  EXPECT_EQ(steps, 0);

  steps = 0;
  s = TwoSteps(false, true, &steps);
  EXPECT_TRUE(s.IsIOError());
  EXPECT_EQ(steps, 1);
}

TEST(MacroTest, AssignOrReturnDeclaresAndAssigns) {
  // Both values flow through when both calls succeed.
  Result<int> r = SumOfTwo(2, 3);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 5);
}

TEST(MacroTest, AssignOrReturnPropagatesTheFirstError) {
  // An error from either call is returned with its message intact.
  Result<int> r = SumOfTwo(-1, 3);
  EXPECT_TRUE(r.status().IsInvalidArgument());
  EXPECT_EQ(r.status().message(), "not positive: -1");
  r = SumOfTwo(1, 0);
  EXPECT_EQ(r.status().message(), "not positive: 0");
}

TEST(MacroTest, AssignOrReturnIntoExistingVariable) {
  // The lhs may be an existing variable; on error it is left untouched.
  int out = 0;
  EXPECT_TRUE(AssignIntoExisting(7, &out).ok());
  EXPECT_EQ(out, 7);
  out = 0;
  EXPECT_TRUE(AssignIntoExisting(-7, &out).IsInvalidArgument());
  EXPECT_EQ(out, 0);
}

TEST(MacroTest, AssignOrReturnMovesMoveOnlyValues) {
  // The macro must move the value out so move-only types work.
  Result<int> r = Unbox(9);
  ASSERT_TRUE(r.ok());
  EXPECT_EQ(*r, 9);
  EXPECT_TRUE(Unbox(-1).status().IsInvalidArgument());
}

}  // namespace
}  // namespace mr

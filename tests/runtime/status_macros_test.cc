// The public TESSEL_RETURN_IF_ERROR / TESSEL_ASSIGN_OR_RETURN
// (tessel/status_macros.h, through tessel/tessel.h).
#include <gtest/gtest.h>

#include <memory>
#include <string>
#include <utility>

#include "tessel/tessel.h"

namespace tessel {
namespace {

absl::StatusOr<int> Half(int x) {
  if (x % 2 != 0) return absl::InvalidArgumentError("odd");
  return x / 2;
}

absl::Status Check(int x, int* calls) {
  ++*calls;
  return x < 0 ? absl::OutOfRangeError("negative") : absl::OkStatus();
}

// Into an existing variable, then into a declaration.
absl::StatusOr<int> Quarter(int x) {
  int half = 0;
  TESSEL_ASSIGN_OR_RETURN(half, Half(x));
  TESSEL_ASSIGN_OR_RETURN(int q, Half(half));
  return q;
}

absl::StatusOr<std::string> Describe(int x, int* calls) {
  TESSEL_RETURN_IF_ERROR(Check(x, calls));
  return std::to_string(x);
}

absl::StatusOr<int> Unwrap(absl::StatusOr<std::unique_ptr<int>> p) {
  TESSEL_ASSIGN_OR_RETURN(std::unique_ptr<int> owned,
                          std::move(p));  // move-only
  return *owned;
}

TEST(StatusMacrosTest, AssignOrReturnPassesValuesAndErrors) {
  EXPECT_EQ(*Quarter(12), 3);
  EXPECT_EQ(Quarter(6).status(), absl::InvalidArgumentError("odd"));
  EXPECT_EQ(Quarter(5).status(), absl::InvalidArgumentError("odd"));
  EXPECT_EQ(*Unwrap(std::make_unique<int>(7)), 7);
  EXPECT_EQ(Unwrap(absl::NotFoundError("x")).status(),
            absl::NotFoundError("x"));
}

TEST(StatusMacrosTest, ReturnIfErrorEvaluatesOnce) {
  int calls = 0;
  EXPECT_EQ(*Describe(4, &calls), "4");
  EXPECT_EQ(Describe(-1, &calls).status(), absl::OutOfRangeError("negative"));
  EXPECT_EQ(calls, 2);
}

}  // namespace
}  // namespace tessel

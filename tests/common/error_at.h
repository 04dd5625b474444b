// Checks that a user error points at the user's line: InvalidArgument whose
// message holds "<file>:<line>: " and every word asked for. SHOW=1 in the
// environment prints each message, to read them while writing a test.
#ifndef TESSEL_TESTS_COMMON_ERROR_AT_H_
#define TESSEL_TESTS_COMMON_ERROR_AT_H_

#include <cstdlib>
#include <initializer_list>
#include <iostream>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace tessel::testing {

inline void ExpectInvalidArgumentAt(const absl::Status& status,
                                    const std::string& file, int line,
                                    std::initializer_list<std::string> words) {
  ASSERT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << status;
  std::string message(status.message());
  if (std::getenv("SHOW")) std::cerr << message << "\n";
  EXPECT_THAT(message,
              ::testing::HasSubstr(absl::StrCat(file, ":", line, ": ")));
  for (const std::string& w : words) {
    EXPECT_THAT(message, ::testing::HasSubstr(w));
  }
}

}  // namespace tessel::testing

#endif  // TESSEL_TESTS_COMMON_ERROR_AT_H_

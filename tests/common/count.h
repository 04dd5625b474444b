// How often a piece of generated code appears in a kernel's source.
#ifndef TESSEL_TESTS_COMMON_COUNT_H_
#define TESSEL_TESTS_COMMON_COUNT_H_

#include <string_view>

namespace tessel::testing {

inline int Count(std::string_view text, std::string_view what) {
  int n = 0;
  for (size_t at = text.find(what); at != std::string_view::npos;
       at = text.find(what, at + 1)) {
    ++n;
  }
  return n;
}

}  // namespace tessel::testing

#endif  // TESSEL_TESTS_COMMON_COUNT_H_

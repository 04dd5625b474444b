// tessel's version, as a string ("0.1.0") and as numbers.
//
//   std::cout << "tessel " << tessel::version() << "\n";
#ifndef TESSEL_VERSION_H_
#define TESSEL_VERSION_H_

#include <string_view>

namespace tessel {

// The version this library was built as; part of every cache key.
std::string_view version();

}  // namespace tessel

#endif  // TESSEL_VERSION_H_

#include "tessel/version.h"

namespace tessel {

std::string_view version() { return TESSEL_VERSION_STRING; }

}  // namespace tessel

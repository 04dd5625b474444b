// Command-line conventions of tessel-warmup and tessel-cache: --version, and
// a suggestion for a mistyped command or flag.
//
//   std::fprintf(stderr, "tessel-cache: unknown command \"%s\"%s\n", word,
//                tools::DidYouMean(word, {"stats", "list"}).c_str());
//   // -> unknown command "stat" (did you mean "stats"?)
#ifndef TESSEL_TOOLS_CLI_H_
#define TESSEL_TOOLS_CLI_H_

#include <string>
#include <string_view>
#include <vector>

namespace tessel::tools {

// ` (did you mean "stats"?)` when one of `known` is within a few edits of
// `word` (the closest), else "".
std::string DidYouMean(std::string_view word,
                       const std::vector<std::string>& known);

// "tessel-cache 0.1.0 (NVRTC 12.4)".
std::string VersionLine(std::string_view tool);

}  // namespace tessel::tools

#endif  // TESSEL_TOOLS_CLI_H_

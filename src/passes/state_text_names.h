// The words the pass state's text (state_text.h) names enums with, for its
// writer and its reader.
#ifndef TESSEL_SRC_PASSES_STATE_TEXT_NAMES_H_
#define TESSEL_SRC_PASSES_STATE_TEXT_NAMES_H_

#include <string_view>
#include <utility>

#include "src/passes/fragment_layout.h"
#include "src/passes/lowering_state.h"

namespace tessel::passes {

inline constexpr std::pair<FragmentLayout::Kind, const char*> kLayoutKinds[] = {
    {FragmentLayout::Kind::kMma, "mma"},
    {FragmentLayout::Kind::kMmaRows, "mma_rows"},
    {FragmentLayout::Kind::kBlocked, "blocked"},
    {FragmentLayout::Kind::kReplicated, "replicated"},
    {FragmentLayout::Kind::kRows, "rows"},
    {FragmentLayout::Kind::kRowStats, "row_stats"},
    {FragmentLayout::Kind::kMmaCols, "mma_cols"},
    {FragmentLayout::Kind::kRowCols, "row_cols"}};
inline constexpr std::pair<GemmInstruction, const char*> kInstructions[] = {
    {GemmInstruction::kFma, "fma"},
    {GemmInstruction::kMmaSync, "mma_sync"},
    {GemmInstruction::kWgmma, "wgmma"}};
inline constexpr std::pair<OperandPath, const char*> kOperandPaths[] = {
    {OperandPath::kElements, "elements"},
    {OperandPath::kLdmatrix, "ldmatrix"},
    {OperandPath::kRegisters, "registers"},
    {OperandPath::kDescriptor, "descriptor"}};

template <typename E, size_t N>
const char* NameOf(const std::pair<E, const char*> (&table)[N], E value) {
  for (const auto& [v, name] : table)
    if (v == value) return name;
  return "?";
}

// Whether `name` is in the table; sets *value to its enum.
template <typename E, size_t N>
bool Named(const std::pair<E, const char*> (&table)[N], std::string_view name,
           E* value) {
  for (const auto& [v, n] : table) {
    if (name == n) {
      *value = v;
      return true;
    }
  }
  return false;
}

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_STATE_TEXT_NAMES_H_

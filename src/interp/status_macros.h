// Early-return helpers for absl::Status / absl::StatusOr (internal).
//
//   INTERP_ASSIGN_OR_RETURN(IntFn fn, Int(expr));
//   INTERP_RETURN_IF_ERROR(CheckSomething());
#ifndef TESSEL_SRC_INTERP_STATUS_MACROS_H_
#define TESSEL_SRC_INTERP_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"

#define INTERP_CONCAT_INNER_(a, b) a##b
#define INTERP_CONCAT_(a, b) INTERP_CONCAT_INNER_(a, b)

#define INTERP_ASSIGN_OR_RETURN(lhs, expr) \
  INTERP_ASSIGN_OR_RETURN_IMPL_(INTERP_CONCAT_(status_or_, __LINE__), lhs, expr)
#define INTERP_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                  \
  if (!tmp.ok()) return std::move(tmp).status();      \
  lhs = std::move(*tmp)

#define INTERP_RETURN_IF_ERROR(expr)                 \
  do {                                               \
    absl::Status interp_status_ = (expr);            \
    if (!interp_status_.ok()) return interp_status_; \
  } while (0)

#endif  // TESSEL_SRC_INTERP_STATUS_MACROS_H_

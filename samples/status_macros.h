// Early-return helpers for absl::Status / absl::StatusOr in the samples.
//
//   SAMPLES_ASSIGN_OR_RETURN(tessel::Program p, GemmProgram(config));
//   SAMPLES_RETURN_IF_ERROR(tessel::interpret(p, {&a, &b, &c}));
#ifndef TESSEL_SAMPLES_STATUS_MACROS_H_
#define TESSEL_SAMPLES_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"

#define SAMPLES_CONCAT_INNER_(a, b) a##b
#define SAMPLES_CONCAT_(a, b) SAMPLES_CONCAT_INNER_(a, b)

#define SAMPLES_ASSIGN_OR_RETURN(lhs, expr) \
  SAMPLES_ASSIGN_OR_RETURN_IMPL_(           \
      SAMPLES_CONCAT_(samples_status_or_, __LINE__), lhs, expr)
#define SAMPLES_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                   \
  if (!tmp.ok()) return std::move(tmp).status();       \
  lhs = std::move(*tmp)

#define SAMPLES_RETURN_IF_ERROR(expr)                  \
  do {                                                 \
    absl::Status samples_status_ = (expr);             \
    if (!samples_status_.ok()) return samples_status_; \
  } while (0)

#endif  // TESSEL_SAMPLES_STATUS_MACROS_H_

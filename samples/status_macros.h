// Early-return helpers for absl::Status / absl::StatusOr in the samples:
// the public TESSEL_ macros (tessel/status_macros.h) under the samples'
// older names.
//
//   SAMPLES_ASSIGN_OR_RETURN(tessel::Program p, GemmProgram(config));
//   SAMPLES_RETURN_IF_ERROR(tessel::interpret(p, {&a, &b, &c}));
#ifndef TESSEL_SAMPLES_STATUS_MACROS_H_
#define TESSEL_SAMPLES_STATUS_MACROS_H_

#include "tessel/status_macros.h"

#define SAMPLES_ASSIGN_OR_RETURN(lhs, expr) TESSEL_ASSIGN_OR_RETURN(lhs, expr)
#define SAMPLES_RETURN_IF_ERROR(expr) TESSEL_RETURN_IF_ERROR(expr)

#endif  // TESSEL_SAMPLES_STATUS_MACROS_H_

// Early return on errors. tessel reports every error as an absl::Status (or
// an absl::StatusOr<T> holding one), never as an exception; these two macros
// pass it up to the caller in one line.
//
// clang-format off
//   absl::StatusOr<double> Run(const tessel::Program& program) {
//     TESSEL_ASSIGN_OR_RETURN(tessel::CompiledKernel k, tessel::compile(program));
//     TESSEL_RETURN_IF_ERROR(k.launch({x}));
//     return 1.0;
//   }
// clang-format on
//
// TESSEL_RETURN_IF_ERROR(expr): `expr` is an absl::Status; when it is not OK
// the enclosing function returns it (which converts to any StatusOr<T>).
//
// TESSEL_ASSIGN_OR_RETURN(lhs, expr): `expr` is an absl::StatusOr<T>; when
// it holds an error the enclosing function returns that status, else its
// value is moved into `lhs`: a declaration (`auto v`, `tessel::Program p`)
// or an existing variable. It expands to several statements: use it inside
// braces, not as the body of an unbraced if/else. `lhs` may not contain an
// unparenthesized comma (`std::pair<int, int> p`, `auto [a, b]`): name the
// type with an alias, or assign to a variable and unpack it afterwards.
//
// Both evaluate `expr` exactly once. They work in any function that returns
// absl::Status or absl::StatusOr<U>; main() returns int, so a program puts
// its work in such a function (see docs/quickstart.md).
#ifndef TESSEL_STATUS_MACROS_H_
#define TESSEL_STATUS_MACROS_H_

#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

#define TESSEL_RETURN_IF_ERROR(expr)                     \
  do {                                                   \
    ::absl::Status tessel_status_macro_status_ = (expr); \
    if (!tessel_status_macro_status_.ok()) {             \
      return tessel_status_macro_status_;                \
    }                                                    \
  } while (false)

#define TESSEL_ASSIGN_OR_RETURN(lhs, expr)                                     \
  TESSEL_STATUS_MACROS_ASSIGN_OR_RETURN_IMPL_(                                 \
      TESSEL_STATUS_MACROS_CONCAT_(tessel_status_macro_or_, __COUNTER__), lhs, \
      expr)

// Implementation details.
#define TESSEL_STATUS_MACROS_CONCAT_INNER_(a, b) a##b
#define TESSEL_STATUS_MACROS_CONCAT_(a, b) \
  TESSEL_STATUS_MACROS_CONCAT_INNER_(a, b)
#define TESSEL_STATUS_MACROS_ASSIGN_OR_RETURN_IMPL_(tmp, lhs, expr) \
  auto tmp = (expr);                                                \
  if (!tmp.ok()) return std::move(tmp).status();                    \
  lhs = std::move(tmp).value()

#endif  // TESSEL_STATUS_MACROS_H_

// TileLang's Pipelined(order=..., stage=...): a statement-level software
// pipeline of a loop's body. Each body statement gets a stage (0: this
// iteration, 1: one iteration later) and an order (its place in the
// rotated body). The loop
//
//   for k in T.Pipelined(n, stage=[0, 0, 1], order=[0, 2, 1]):
//     A(k); B(k); C(k)
//
// runs as
//
//   if n > 0:
//     A(0); B(0)                         # prologue: stage 0 of iteration 0
//     for k in [1, n): A(k); C(k-1); B(k)  # stage 1 one iteration behind
//     C(n-1)                             # epilogue: stage 1 of the last
//
// The statements the pipeline's producer takes (global -> shared copies,
// which TileLang marks -1) keep their own schedule: their entries are not
// read. The lists must keep every dependence of the sequential loop (the
// interpreter runs that): CheckPipelineSchedule refuses lists that do not,
// naming the statements.
//
// warp_specialize applies the schedule to its consumer loop; the other
// paths (cp.async pipeline, sm_80, the interpreter) run the body in its
// sequential order, which the checked lists make equivalent.
#ifndef TESSEL_SRC_PASSES_PIPELINE_SCHEDULE_H_
#define TESSEL_SRC_PASSES_PIPELINE_SCHEDULE_H_

#include <vector>

#include "absl/status/status.h"
#include "src/ir/stmt.h"

namespace tessel::passes {

// A global -> shared copy: a pipeline producer, whose entries are ignored.
bool IsPipelineProducer(const ir::Stmt& s);

// The body's top-level statements (one entry each in order / stage).
std::vector<ir::Stmt> LoopStatements(const ir::ForNode& loop);

// Whether loop carries order / stage lists that change anything.
bool HasStatementSchedule(const ir::ForNode& loop);

// InvalidArgument naming the loop's (and the offending statements')
// file:line when the lists do not fit its body or break a dependence.
absl::Status CheckPipelineSchedule(const ir::ForNode& loop);

// One statement of a scheduled body: the loop variable is substituted by
// `var - stage` in its copy; order sorts the rotated body (ties: list order).
struct ScheduledStmt {
  ir::Stmt stmt;
  int stage = 0;
  int order = 0;
};

// The prologue, steady loop and epilogue of `stmts` over
// [min, min + extent) (stages 0 and 1), all under `extent > 0` unless
// constant.
ir::Stmt RotateLoop(const ir::Var& var, const ir::Expr& min,
                    const ir::Expr& extent,
                    const std::vector<ScheduledStmt>& stmts, ir::SourceLoc loc);

// warp_specialize's consumer loop: `body` (the consumers' statements,
// body[i] the loop body's statement index[i]) between the stage's full
// barrier wait and its release, under loop's lists when it has them:
// the wait first in the iteration that starts the stage, the release last
// in the one that runs its last stage, after every statement that reads it.
ir::Stmt ScheduledConsumerLoop(const ir::ForNode& loop,
                               const std::vector<ir::Stmt>& body,
                               const std::vector<size_t>& index,
                               const ir::Stmt& wait_full,
                               const ir::Stmt& release);

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_PIPELINE_SCHEDULE_H_

// The lets a warp-specialized loop's producer reads (warp_specialize.h).
// The producer runs none of the consumers' statements, so the lets inside
// the split (a paged gather's page rows, looked up in a block table every
// step) reach its copies as their values. Those that read only globals the
// kernel never writes are bound once per iteration ahead of the stage's
// free-slot (empty barrier) wait: their loads are in flight while the
// producer waits, where inlined into the copies they began only after it,
// and each refill paid an L2 round trip before its first TMA issue.
//
//   ProducerLets lets(kernel_body, outer_lets);
//   Expr start = lets.Bind(copy_start, {{k, Expr(pk)}}, pk.get());
//   // lets.ahead_of_loop(), lets.ahead_of_wait(): the bindings made
#ifndef TESSEL_SRC_PASSES_WARP_SPECIALIZE_PRODUCER_LETS_H_
#define TESSEL_SRC_PASSES_WARP_SPECIALIZE_PRODUCER_LETS_H_

#include <unordered_set>
#include <utility>
#include <vector>

#include "src/ir/let.h"
#include "src/ir/substitute.h"

namespace tessel::passes {

class ProducerLets {
 public:
  // `outer`: the lets every thread evaluates before the producer /
  // consumer split; they stay names.
  ProducerLets(const ir::Stmt& kernel_body,
               const std::unordered_set<const ir::VarNode*>& outer);

  // e with the lets inside the split inlined (their values keep the outer
  // lets as names).
  ir::Expr Inline(const ir::Expr& e) const;

  // A copy origin of the producer's: e with `loop` applied (the consumer's
  // loop index -> the producer's, `producer_var`), each let inside the
  // split that it names and whose value reads only unwritten globals bound
  // to a producer variable (once per value: lets of one value share it),
  // the other lets inlined.
  ir::Expr Bind(const ir::Expr& e, const ir::VarMap& loop,
                const ir::VarNode* producer_var);

  // The bindings: those that do not read the producer's loop index go
  // ahead of its loop, the others first in its body.
  const std::vector<ir::Stmt>& ahead_of_loop() const { return ahead_loop_; }
  const std::vector<ir::Stmt>& ahead_of_wait() const { return ahead_wait_; }

 private:
  const ir::Stmt& body_;
  ir::LetValues inner_;  // let -> value, inner lets inlined
  ir::VarMap bound_;     // let -> the producer's variable
  std::vector<std::pair<ir::Expr, ir::Expr>> values_;  // value, its variable
  std::vector<ir::Stmt> ahead_loop_, ahead_wait_;
};

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_WARP_SPECIALIZE_PRODUCER_LETS_H_

// T::atomic_ticket: the recorded IR (an element atomic_add with prev, the
// slot copied into a uniform variable), its text reading back, and the
// misuses refused at the user's line: a counter that is not a global i32
// tensor, a ticket in a Parallel loop or under a per-thread T::If, a
// per-thread increment.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>

#include "src/ir/parser.h"
#include "src/ir/printer.h"
#include "src/ir/structural.h"
#include "src/ir/verifier.h"
#include "tessel/tessel.h"
#include "tests/common/error_at.h"

namespace tessel {
namespace {

namespace T = tessel;
using ::testing::HasSubstr;

void ExpectErrorAt(const absl::Status& status, int line,
                   std::initializer_list<std::string> words) {
  testing::ExpectInvalidArgumentAt(status, "ticket_test.cc", line, words);
}

// Blocks (t, s) take tickets on Counters[t]; the last one writes Out[t].
absl::StatusOr<T::Program> LastOfTile() {
  T::ProgramBuilder p("last_of_tile");
  auto Counters = p.tensor("Counters", {8}, T::i32);
  auto Out = p.tensor("Out", {8}, T::i32);
  {
    T::Kernel kernel(8, 3, {.threads = 128});
    auto [t, s] = kernel.block_index();
    T::Expr ticket = T::atomic_ticket(Counters(t), 1);
    T::If(ticket == 2, [&] {
      Out(t) = s;
      Counters(t) = 0;
    });
  }
  return p.finish();
}

TEST(Ticket, RecordsAnAtomicWithPrevAndAUniformCopy) {
  absl::StatusOr<T::Program> p = LastOfTile();
  ASSERT_TRUE(p.ok()) << p.status();
  const std::string text = ir::ToString(p->ir());
  EXPECT_THAT(text, HasSubstr("Counters_ticket_slot = T.alloc_shared((1,), "
                              "i32)"));
  EXPECT_THAT(text, HasSubstr("Counters_ticket = T.alloc_uniform(i32)"));
  EXPECT_THAT(text, HasSubstr("T.atomic_add(Counters[bx], 1, "
                              "prev=Counters_ticket_slot[0])"));
  EXPECT_THAT(text, HasSubstr("Counters_ticket[0] = Counters_ticket_slot[0]"));
  EXPECT_THAT(text, HasSubstr("if Counters_ticket[0] == 2:"));
}

TEST(Ticket, TextReadsBack) {
  absl::StatusOr<T::Program> p = LastOfTile();
  ASSERT_TRUE(p.ok()) << p.status();
  const std::string text = ir::ToString(p->ir());
  absl::StatusOr<ir::Program> parsed = ir::ParseProgram(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  EXPECT_EQ(ir::ToString(*parsed), text);
  EXPECT_EQ(ir::StructuralHash(*parsed), ir::StructuralHash(p->ir()));
}

// The hash tells a ticket from a plain add of the same counter.
TEST(Ticket, HashDiffersFromAPlainAdd) {
  auto build = [](bool ticket) {
    T::ProgramBuilder p("t");
    auto C = p.tensor("C", {4}, T::i32);
    {
      T::Kernel kernel(4, {.threads = 32});
      auto [b] = kernel.block_index();
      if (ticket) {
        (void)T::atomic_ticket(C(b));
      } else {
        T::atomic_add(C(b), 1);
      }
    }
    return p.finish();
  };
  absl::StatusOr<T::Program> a = build(true), b = build(false);
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(ir::StructuralHash(a->ir()), ir::StructuralHash(b->ir()));
}

TEST(Ticket, AnF32CounterIsRefused) {
  T::ProgramBuilder p("t");
  auto C = p.tensor("C", {4}, T::f32);
  int line = 0;
  {
    T::Kernel kernel(4, {.threads = 32});
    auto [b] = kernel.block_index();
    line = __LINE__ + 1;
    (void)T::atomic_ticket(C(b));
  }
  ExpectErrorAt(p.finish().status(), line,
                {"atomic_ticket", "counter C (global f32)", "global i32"});
}

TEST(Ticket, ASharedCounterIsRefused) {
  T::ProgramBuilder p("t");
  auto G = p.tensor("G", {4}, T::i32);
  int line = 0;
  {
    T::Kernel kernel(4, {.threads = 32});
    auto [b] = kernel.block_index();
    auto S = T::alloc_shared({4}, T::i32, "S");
    T::fill(S, 0);
    line = __LINE__ + 1;
    G(b) = T::atomic_ticket(S(b));
  }
  ExpectErrorAt(p.finish().status(), line,
                {"atomic_ticket", "counter S (shared i32)", "global i32"});
}

TEST(Ticket, ATileCounterIsRefused) {
  T::ProgramBuilder p("t");
  auto G = p.tensor("G", {4}, T::i32);
  int line = 0;
  {
    T::Kernel kernel(1, {.threads = 32});
    line = __LINE__ + 1;
    (void)T::atomic_ticket(G(T::slice(0, 4)));
  }
  ExpectErrorAt(p.finish().status(), line, {"counter G", "one element"});
}

TEST(Ticket, ATicketInAParallelLoopIsRefused) {
  T::ProgramBuilder p("t");
  auto G = p.tensor("G", {64}, T::i32);
  int line = 0;
  {
    T::Kernel kernel(1, {.threads = 64});
    for (auto i : T::Parallel(64)) {
      line = __LINE__ + 1;
      G(i) = T::atomic_ticket(G(0));
    }
  }
  ExpectErrorAt(p.finish().status(), line,
                {"atomic_ticket", "Parallel loop", "once per block"});
}

TEST(Ticket, ATicketUnderAPerThreadIfIsRefused) {
  T::ProgramBuilder p("t");
  auto G = p.tensor("G", {64}, T::i32);
  int line = 0;
  {
    T::Kernel kernel(1, {.threads = 64});
    auto v = T::alloc_var(T::i32, "v");
    v = G(1);
    T::If(v > 0, [&] {
      line = __LINE__ + 1;
      (void)T::atomic_ticket(G(0));
    });
  }
  ExpectErrorAt(p.finish().status(), line,
                {"atomic_ticket", "T::If whose condition",
                 "every thread of the block must reach it"});
}

TEST(Ticket, APerThreadIncrementIsRefused) {
  T::ProgramBuilder p("t");
  auto G = p.tensor("G", {64}, T::i32);
  int line = 0;
  {
    T::Kernel kernel(1, {.threads = 64});
    auto v = T::alloc_var(T::i32, "v");
    v = G(1);
    line = __LINE__ + 1;
    (void)T::atomic_ticket(G(0), v);
  }
  ExpectErrorAt(p.finish().status(), line,
                {"atomic_ticket", "the increment", "v (var i32)"});
}

// The verifier checks parsed IR too: prev must be a shared i32 element.
TEST(Ticket, ParsedTicketIntoAGlobalSlotIsRefused) {
  absl::StatusOr<T::Program> p = LastOfTile();
  ASSERT_TRUE(p.ok()) << p.status();
  std::string text = ir::ToString(p->ir());
  const std::string from = "prev=Counters_ticket_slot[0]";
  ASSERT_NE(text.find(from), std::string::npos);
  text.replace(text.find(from), from.size(), "prev=Out[0]");
  absl::StatusOr<ir::Program> parsed = ir::ParseProgram(text);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  absl::Status s = ir::Verify(*parsed);
  EXPECT_EQ(s.code(), absl::StatusCode::kInvalidArgument) << s;
  EXPECT_THAT(s.message(), HasSubstr("one shared i32 element, not Out"));
}

}  // namespace
}  // namespace tessel

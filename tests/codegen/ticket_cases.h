// "The last block adds": a kernel of (tile, slice) blocks that write
// partials, take a ticket per tile (T::atomic_ticket) and let the block
// that draws the tile's last ticket sum the partials in slice order and
// reset the counter. Shared by ticket_test.cc (the interpreter, the
// generated code) and ticket_gpu_test.cc (the GPU).
#ifndef TESSEL_TESTS_CODEGEN_TICKET_CASES_H_
#define TESSEL_TESTS_CODEGEN_TICKET_CASES_H_

#include <limits>
#include <vector>

#include "absl/status/statusor.h"
#include "tessel/tessel.h"

namespace tessel::testing {

// Work [slices, tiles, 64] f32: block (t, s) writes (t * 64 + j) * (s + 1)
// into Work[s, t, j]; Counters [tiles] i32 (zero before and after a
// launch); Out [tiles, 64] f32 = the sum over s, by the last block;
// Drawn [tiles, slices] i32: the ticket block (t, s) drew.
inline absl::StatusOr<Program> LastBlockAddsProgram(int tiles, int slices) {
  namespace T = tessel;
  T::ProgramBuilder p("last_block_adds");
  auto Work = p.tensor("Work", {slices, tiles, 64}, T::f32);
  auto Counters = p.tensor("Counters", {tiles}, T::i32);
  auto Out = p.tensor("Out", {tiles, 64}, T::f32);
  auto Drawn = p.tensor("Drawn", {tiles, slices}, T::i32);
  {
    T::Kernel kernel(tiles, slices, {.threads = 128});
    auto [t, s] = kernel.block_index();
    for (auto j : T::Parallel(64))
      Work(s, t, j) = T::cast((t * 64 + j) * (s + 1), T::f32);
    T::Expr ticket = T::atomic_ticket(Counters(t));
    Drawn(t, s) = ticket;
    T::If(ticket == slices - 1, [&] {
      auto sum = T::alloc_fragment({64}, T::f32, "sum");
      T::clear(sum);
      for (auto q : T::Serial(slices))
        for (auto j : T::Parallel(64)) sum(j) += Work(q, t, j);
      for (auto j : T::Parallel(64)) Out(t, j) = sum(j);
      Counters(t) = 0;
    });
  }
  return p.finish();
}

// Work filled with NaN (a sum read before its partial was written shows),
// Counters zero, Out and Drawn -1.
inline std::vector<HostTensor> MakeLastBlockAddsArgs(int tiles, int slices) {
  HostTensor work(DataType::kF32, {slices, tiles, 64});
  work.fill(std::numeric_limits<double>::quiet_NaN());
  HostTensor counters(DataType::kI32, {tiles});
  counters.fill(0);
  HostTensor out(DataType::kF32, {tiles, 64});
  out.fill(-1);
  HostTensor drawn(DataType::kI32, {tiles, slices});
  drawn.fill(-1);
  return {work, counters, out, drawn};
}

}  // namespace tessel::testing

#endif  // TESSEL_TESTS_CODEGEN_TICKET_CASES_H_

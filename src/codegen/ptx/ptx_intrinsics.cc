// The intrinsics (passes/intrinsics.h) as PTX. Where the prelude
// (src/codegen/prelude/*.cuh) holds the instruction as inline asm, the line
// is that asm's text (PreludeAsm), its operands the emitter's registers
// instead of asm constraints: each instruction is spelled once, there.
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/codegen/ptx/ptx_emitter.h"
#include "src/codegen/wgmma_instruction.h"
#include "src/passes/intrinsics.h"

namespace tessel::codegen::ptx {

namespace {

// What exists from sm_90 on (the prelude defines it for sm_90 only): a
// kernel naming one for an older target is not spelled (NVRTC says why).
bool HopperOnly(passes::Intrinsic id) {
  using I = passes::Intrinsic;
  switch (id) {
    case I::kWgmma:
    case I::kWgmmaFence:
    case I::kWgmmaCommit:
    case I::kWgmmaWait:
    case I::kTmaLoad:
    case I::kTmaLoadMulticast:
    case I::kTmaPrefetch:
    case I::kTmaStore:
    case I::kTmaStoreCommit:
    case I::kTmaStoreWait:
    case I::kBulkReduceAdd:
    case I::kBulkCommit:
    case I::kBulkWaitRead:
    case I::kSetMaxNReg:
      return true;
    default:
      return false;
  }
}

// A memory operand "[addr+offset]" as the prelude's templates write it
// around their operand: "[%0]".
std::string Inside(const std::string& at) {
  return at.size() >= 2 ? at.substr(1, at.size() - 2) : at;
}

}  // namespace

std::vector<std::string> Emitter::FromPrelude(
    const std::string& function, const std::vector<std::string>& operands,
    const std::map<std::string, std::string>& locals) {
  std::vector<std::string> lines = prelude_.Spell(function, operands, locals);
  if (lines.empty()) {
    Fail(absl::StrCat("tl::", function, " of ", operands.size(),
                      " operands (none in the prelude for sm_", st_.target.sm(),
                      ")"));
  }
  return lines;
}

void Emitter::PreludeLines(const std::string& function,
                           const std::vector<std::string>& operands) {
  for (const std::string& line : FromPrelude(function, operands)) Line(line);
}

std::string Emitter::PreludeOpcode(const std::string& function) {
  std::string opcode = prelude_.Opcode(function);
  if (opcode.empty()) Fail(absl::StrCat("tl::", function, " as one opcode"));
  return opcode;
}

Value Emitter::CallExpr(const ir::CallNode& c) {
  using I = passes::Intrinsic;
  std::optional<I> id = passes::IntrinsicOf(c);
  const Value zero = Const(DataType::kI32, 0);
  if (!id) {
    Fail(absl::StrCat("call ", c.name));
    return zero;
  }
  switch (*id) {
    case I::kThreadIdx:
      return Value{.dtype = DataType::kI32, .reg = tid_, .key = tid_};
    case I::kGridDimX:
      return Emit(DataType::kI32, "mov.u32",
                  {Value{.dtype = DataType::kI32,
                         .reg = "%nctaid.x",
                         .key = "%nctaid.x"}});
    case I::kSharedAddr: {
      int64_t offset = 0;
      const std::string base =
          SharedAddress(*c.args[0].As<ir::LoadNode>(), &offset);
      if (failed()) return zero;
      const Value b{.dtype = DataType::kU32, .reg = base, .key = base};
      return offset ? Emit(DataType::kU32, "add.u32",
                           {b, Const(DataType::kU32, offset)})
                    : b;
    }
    case I::kWarpReduceSum:
    case I::kWarpReduceMax:
    case I::kWarpReduceMin:
    case I::kWarpScanExclusiveSum:
    case I::kWarpGroupLast:
    case I::kWarpUniform:
      return WarpShuffle(c, *id);
    case I::kBitcast:
      return Bitcast(Expr(c.args[0]), c.dtype);
    case I::kPackB16x2: {
      const Value lo = Expr(c.args[0]), hi = Expr(c.args[1]);
      // Two f32 values rounded: one cvt rounds and packs both.
      auto lo_src = rounded_from_.find(lo.key);
      auto hi_src = rounded_from_.find(hi.key);
      if (!lo.is_const() && !hi.is_const() && lo_src != rounded_from_.end() &&
          hi_src != rounded_from_.end() && Current(lo_src->second) &&
          Current(hi_src->second)) {
        return Emit(DataType::kU32, PreludeOpcode(PackFunction(lo.dtype)),
                    {hi_src->second, lo_src->second});
      }
      const std::string r = NewReg(DataType::kU32);
      Line(
          absl::StrCat("mov.b32 ", r, ", {", InReg(lo), ", ", InReg(hi), "};"));
      return Value{.dtype = DataType::kU32, .reg = r, .key = r};
    }
    case I::kWgmmaDescSw128: {
      // lo: (addr & 0x3FFFF) >> 4 | (atom >> 4) << 16; hi: group >> 4 | 1
      // << 30.
      const Value addr = Cast(Expr(c.args[0]), DataType::kU32);
      const bool lbo = c.args.size() == 3;
      const int64_t atom = lbo ? *ir::AsConstInt(c.args[1]) : 16;
      const int64_t group = *ir::AsConstInt(c.args[lbo ? 2 : 1]);
      const Value lo_addr =
          Emit(DataType::kU32, "bfe.u32",
               {addr, Const(DataType::kU32, 4), Const(DataType::kU32, 14)});
      const Value lo =
          Emit(DataType::kU32, "or.b32",
               {lo_addr, Const(DataType::kU32, ((atom >> 4) & 0x3FFF) << 16)});
      const int64_t hi = ((group >> 4) & 0x3FFF) | (int64_t{1} << 30);
      const std::string r = NewReg(DataType::kI64);
      Line(absl::StrCat("mov.b64 ", r, ", {", InReg(lo), ", ",
                        InReg(Const(DataType::kU32, hi)), "};"));
      return Value{.dtype = DataType::kI64, .reg = r, .key = r};
    }
    case I::kWgmmaDescAdd: {
      const Value desc = Expr(c.args[0]);
      const int64_t units = *ir::AsConstInt(c.args[1]);
      if (units == 0) return desc;
      // The low word plus units, the high word kept.
      return Emit(DataType::kI64, "add.s64",
                  {desc, Const(DataType::kI64, units)});
    }
    default:
      Fail(absl::StrCat("expression intrinsic ", c.name));
      return zero;
  }
}

void Emitter::Wgmma(const ir::CallNode& c) {
  const std::string& type = c.args[0].As<ir::CallNode>()->name;
  const int n = static_cast<int>(*ir::AsConstInt(c.args[1]));
  const int64_t trans_a = *ir::AsConstInt(c.args[2]);
  const int64_t trans_b = *ir::AsConstInt(c.args[3]);
  const int64_t n0 = *ir::AsConstInt(c.args[5]);
  const bool a_in_registers = trans_a < 0;
  const bool accumulate = c.args.size() < 9 || !ir::IsConstInt(c.args[8], 0);
  if (a_in_registers && !ldmatrix_filled_.count(RefBuffer(c.args[6]))) {
    // Would be spelled as below and is correct on the GPU, but flash
    // attention's forward (P V, P computed in registers) ran 5-8 % slower
    // from this PTX than from NVVM's on the H200 (session 18): NVRTC keeps
    // such wgmmas until that is understood. With A loaded by ldmatrix (GEMM
    // tiles whose rows are too narrow for a descriptor) the PTX ran as fast
    // on an H100 (session 24: 32-wide k tiles 0.99-1.01, split-k 0.92).
    return Fail("wgmma with A in registers");
  }
  std::vector<std::string> d;
  for (int i = 0; i < n / 2; ++i) {
    d.push_back(RefElement(c.args[4], {n0 + i / 4, i % 4}));
    Reassigned(d.back());
  }
  std::string a;
  if (a_in_registers) {
    std::vector<std::string> regs;
    for (int r = 0; r < 4; ++r) regs.push_back(RefElement(c.args[6], {r}));
    a = absl::StrCat("{", absl::StrJoin(regs, ", "), "}");
  } else {
    a = InReg(Expr(c.args[6]));
  }
  const std::string b = InReg(Expr(c.args[7]));
  if (failed()) return;
  const std::string p = InReg(Const(DataType::kBool, accumulate ? 1 : 0));
  Line(absl::StrCat(WgmmaOpcode(type, n), " {", absl::StrJoin(d, ", "), "}, ",
                    a, ", ", b, ", ", p, ", ",
                    WgmmaImmediates(type, trans_a, trans_b), ";"));
}

void Emitter::Intrinsic(const ir::CallNode& c) {
  using I = passes::Intrinsic;
  std::optional<I> id = passes::IntrinsicOf(c);
  if (!id || (passes::InfoOf(*id).effects & passes::kExpression)) {
    return Fail(absl::StrCat("statement intrinsic ", c.name));
  }
  auto arg = [&](int i) { return Operand(Expr(c.args[i])); };
  auto reg = [&](int i) { return InReg(Expr(c.args[i])); };
  auto constant = [&](int i) { return *ir::AsConstInt(c.args[i]); };
  auto address = [&](int i, bool* shared) {
    return AddressOperand(c.args[i], shared);
  };
  auto shared_at = [&](int i) {
    bool shared = false;
    const std::string a = address(i, &shared);
    if (!shared) Fail(absl::StrCat(c.name, " on global memory"));
    return a;
  };
  const bool sm90 = st_.target.sm() >= 90;
  if (!sm90 && HopperOnly(*id)) {
    return Fail(absl::StrCat(c.name, " before sm_90"));
  }
  switch (*id) {
    case I::kLet: {
      const auto* v = c.args[0].As<ir::VarNode>();
      Value value = Expr(c.args[1]);
      // A register assigned again later (a local array element) is read
      // now: the let keeps this value.
      if (!value.is_const() && value.key != value.reg) {
        const std::string r = NewReg(value.dtype);
        Line(absl::StrCat("mov", RegType(value.dtype), " ", r, ", ", value.reg,
                          ";"));
        Remember(r, r);
        value = Value{.dtype = value.dtype, .reg = r, .key = r};
      }
      vars_[v] = value;
      return;
    }
    case I::kWgmma:
      return Wgmma(c);
    case I::kWgmmaFence:
      return PreludeLines("wgmma_fence", {});
    case I::kWgmmaCommit:
      return PreludeLines("wgmma_commit", {});
    case I::kWgmmaWait:
      return PreludeLines("wgmma_wait", {absl::StrCat(constant(0))});
    case I::kFenceOperand:
      // Only NVVM needed it: PTX names the registers, ptxas orders them.
      return;
    case I::kFenceProxyAsync:
      return PreludeLines("fence_proxy_async", {});
    case I::kMbarrierInit: {
      const std::string at = shared_at(0);
      return PreludeLines("mbarrier_init", {Inside(at), reg(1)});
    }
    case I::kFenceBarrierInit:
      // None before sm_90: the prelude's fence_barrier_init is empty there.
      for (const std::string& line : prelude_.Spell("fence_barrier_init", {}))
        Line(line);
      return;
    case I::kMbarrierArrive: {
      const std::string at = shared_at(0);
      return PreludeLines("mbarrier_arrive",
                          {NewReg(DataType::kI64), Inside(at)});
    }
    case I::kMbarrierWaitParity: {
      const std::string at = shared_at(0);
      const std::string parity = reg(1);
      const std::string p = NewReg(DataType::kBool), again = NewLabel();
      Line(again + ":");
      // The poll of the prelude's mbarrier_test_parity (try_wait on sm_90,
      // test_wait before) into p: its first instruction. Its %0 (the
      // result as a u32) is not needed: the loop is the emitter's.
      const std::vector<std::string> poll = FromPrelude(
          "mbarrier_test_parity", {"", Inside(at), parity}, {{"p", p}});
      if (poll.empty()) return;
      Line(poll[0]);
      return Line(absl::StrCat("@!", p, " bra ", again, ";"));
    }
    case I::kMbarrierExpectTx: {
      const std::string at = shared_at(0);
      return PreludeLines("mbarrier_expect_tx", {Inside(at), reg(1)});
    }
    case I::kTmaLoad: {
      // tl::tma_load(dst, map, bar, c0, ...): the overload of as many
      // coordinates.
      const std::string& map = tensor_map_params_.at(constant(0));
      const std::string dst = reg(1);
      const std::string bar = shared_at(2);
      std::vector<std::string> operands = {dst, map, Inside(bar)};
      for (size_t i = 3; i < c.args.size(); ++i)
        operands.push_back(reg(static_cast<int>(i)));
      return PreludeLines("tma_load", operands);
    }
    case I::kTmaPrefetch:
      return PreludeLines("tma_prefetch_descriptor",
                          {tensor_map_params_.at(constant(0))});
    case I::kTmaStore: {
      const std::string& map = tensor_map_params_.at(constant(0));
      const std::string src = reg(1);
      std::vector<std::string> operands = {map, src};
      for (size_t i = 2; i < c.args.size(); ++i)
        operands.push_back(reg(static_cast<int>(i)));
      return PreludeLines("tma_store", operands);
    }
    case I::kTmaStoreCommit:
    case I::kBulkCommit:
      return PreludeLines("tma_store_commit", {});
    case I::kTmaStoreWait:
      return PreludeLines(
          constant(0) == 0 ? "tma_store_wait" : "tma_store_wait_read",
          {absl::StrCat(constant(1))});
    case I::kBulkWaitRead:
      return PreludeLines("tma_store_wait_read", {absl::StrCat(constant(0))});
    case I::kSetMaxNReg:
      return PreludeLines(
          constant(0) == 0 ? "setmaxnreg_dec" : "setmaxnreg_inc",
          {absl::StrCat(constant(1))});
    case I::kNamedBarrierSync:
    case I::kNamedBarrierArrive: {
      const std::string barrier = arg(0);
      const std::string count = arg(1);
      return PreludeLines(*id == I::kNamedBarrierSync ? "named_barrier_sync"
                                                      : "named_barrier_arrive",
                          {barrier, count});
    }
    case I::kCpAsync: {
      const int64_t bytes = constant(0);
      const std::string dst = reg(1);
      bool shared = false;
      int64_t offset = 0;
      const std::string src = ElementAddress(c.args[2], &offset, &shared);
      const Value pred = Expr(c.args[3]);
      if (failed()) return;
      // Out of bounds: zero bytes read from the tensor's base.
      std::string at = At(src, offset), size = absl::StrCat(bytes);
      if (!pred.int_const || *pred.int_const == 0) {
        const auto* l = c.args[2].As<ir::LoadNode>();
        const std::string base = global_base_.at(l->buffer.get());
        std::string full = src;
        if (offset) {
          full = Emit(DataType::kI64, "add.s64",
                      {Value{.dtype = DataType::kI64, .reg = src, .key = src},
                       Const(DataType::kI64, offset)})
                     .reg;
        }
        const std::string safe = NewReg(DataType::kI64);
        const std::string n = NewReg(DataType::kU32);
        const std::string p = InReg(pred);
        Line(absl::StrCat("selp.b64 ", safe, ", ", full, ", ", base, ", ", p,
                          ";"));
        Line(absl::StrCat("selp.b32 ", n, ", ", bytes, ", 0, ", p, ";"));
        at = absl::StrCat("[", safe, "]");
        size = n;
      }
      // tl::cp_async<bytes>: 16 bytes are its .cg asm (the size a literal
      // there), 4 and 8 its .ca one.
      if (bytes == 16) return PreludeLines("cp_async", {dst, Inside(at), size});
      return PreludeLines("cp_async",
                          {dst, Inside(at), absl::StrCat(bytes), size});
    }
    case I::kCpAsyncCommit:
      return PreludeLines("cp_async_commit", {});
    case I::kCpAsyncWait:
      return PreludeLines("cp_async_wait", {absl::StrCat(constant(0))});
    case I::kLdmatrix: {
      const int64_t count = constant(0);
      std::vector<std::string> regs;
      for (int64_t r = 0; r < count; ++r) {
        regs.push_back(RefElement(c.args[2], {r}));
        Reassigned(regs.back());
      }
      ldmatrix_filled_.insert(RefBuffer(c.args[2]));
      regs.push_back(reg(3));  // the address
      return PreludeLines(
          absl::StrCat("ldmatrix_x", count, constant(1) == 1 ? "_trans" : ""),
          regs);
    }
    case I::kMma: {
      const std::string& kind = c.args[0].As<ir::CallNode>()->name;
      std::vector<std::string> d, a, b;
      const bool f16_acc = kind == "f16_f16";
      for (int i = 0; i < (f16_acc ? 2 : 4); ++i) {
        d.push_back(RefElement(c.args[1], {i}));
        Reassigned(d.back());
      }
      for (int i = 0; i < 4; ++i) a.push_back(RefElement(c.args[2], {i}));
      for (int i = 0; i < 2; ++i) b.push_back(RefElement(c.args[3], {i}));
      if (kind != "f16_f32" && kind != "bf16_f32" && !f16_acc) {
        return Fail(absl::StrCat("mma ", kind));
      }
      // tl::mma_m16n8k16_<kind>(d, a, b): operands d..., a..., b...
      std::vector<std::string> operands = d;
      operands.insert(operands.end(), a.begin(), a.end());
      operands.insert(operands.end(), b.begin(), b.end());
      return PreludeLines(absl::StrCat("mma_m16n8k16_", kind), operands);
    }
    case I::kVecCopy:
    case I::kVecZero:
    case I::kStorePair:
    case I::kLoadVec:
    case I::kStoreVec:
      return VectorMove(c, *id);
    case I::kAtomicAddVec:
      return AtomicAddVec(c);
    case I::kAtomicTicket: {
      // prelude/atomics.cuh's asm, then the old value into the slot.
      const std::string slot = shared_at(0);
      bool shared = false;
      const std::string counter = address(1, &shared);
      if (shared) return Fail("atomic_ticket on a shared counter");
      const std::string inc = reg(2);
      if (failed()) return;
      const std::string old = NewReg(DataType::kI32);
      for (const std::string& line :
           FromPrelude("atomic_ticket", {old, Inside(counter), inc}))
        Line(line);
      return Line(absl::StrCat("st.shared.u32 ", slot, ", ", old, ";"));
    }
    case I::kAtomicAdd: {
      bool shared = false;
      const std::string to = address(0, &shared);
      const Value v = Expr(c.args[1]);
      if (v.dtype != DataType::kF32) return Fail("atomic_add of this dtype");
      return Line(absl::StrCat("red.", shared ? "shared" : "global",
                               ".add.f32 ", to, ", ", InReg(v), ";"));
    }
    default:
      return Fail(absl::StrCat("intrinsic ", c.name));
  }
}

}  // namespace tessel::codegen::ptx

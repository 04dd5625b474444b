// Memory as PTX: local arrays as registers, addresses as a variable part
// plus an immediate offset, loads (read-only ones once per address and
// scope), and vector atomic adds.
#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/codegen/ptx/ptx_emitter.h"

namespace tessel::codegen::ptx {

std::string Emitter::LocalElement(const ir::BufferNode* b,
                                  const std::vector<int64_t>& idx) {
  auto regs = local_.find(b);
  if (regs == local_.end()) {
    Fail(absl::StrCat("local ", b->name, " used outside its allocation"));
    return "";
  }
  const std::vector<int64_t>& extents = extents_.at(b);
  int64_t offset = 0;
  for (size_t k = 0; k < extents.size(); ++k)
    offset = offset * extents[k] + (k < idx.size() ? idx[k] : 0);
  if (idx.size() > extents.size() || offset < 0 ||
      offset >= static_cast<int64_t>(regs->second.size())) {
    Fail(absl::StrCat("local ", b->name, " indexed out of its bounds: [",
                      absl::StrJoin(idx, ", "), "] of [",
                      absl::StrJoin(extents, ", "), "]"));
    return "";
  }
  return regs->second[offset];
}

const ir::LoadNode* Emitter::RefLoad(const ir::Expr& ref) {
  const ir::Expr& arg =
      ref.As<ir::CallNode>() ? ref.As<ir::CallNode>()->args[0] : ref;
  return arg.As<ir::LoadNode>();
}

const ir::BufferNode* Emitter::RefBuffer(const ir::Expr& ref) {
  const ir::LoadNode* l = RefLoad(ref);
  return l != nullptr ? l->buffer.get() : nullptr;
}

// The printer reads a reference as a pointer to its element: further
// indices count from there, over the array's trailing dimensions where they
// fit, else as [..][4] (wgmma's accumulators) or flat.
std::string Emitter::RefElement(const ir::Expr& ref,
                                const std::vector<int64_t>& more) {
  const ir::LoadNode* l = RefLoad(ref);
  if (l == nullptr || !local_.count(l->buffer.get())) {
    Fail("a register operand that is not a local array");
    return "";
  }
  const std::vector<int64_t>& extents = extents_.at(l->buffer.get());
  std::vector<int64_t> idx;
  for (const ir::Expr& i : l->indices) {
    const Value c = Expr(i);
    if (!c.int_const) {
      Fail("a register operand at a variable index");
      return "";
    }
    idx.push_back(*c.int_const);
  }
  if (idx.size() + more.size() <= extents.size()) {
    idx.resize(extents.size() - more.size(), 0);
    idx.insert(idx.end(), more.begin(), more.end());
    return LocalElement(l->buffer.get(), idx);
  }
  int64_t offset = 0;
  for (size_t k = 0; k < extents.size(); ++k)
    offset = offset * extents[k] + (k < idx.size() ? idx[k] : 0);
  int64_t step = 0;
  for (int64_t m : more) step = step * 4 + m;
  if (more.size() == 1) step = more[0];
  const std::vector<std::string>& regs = local_.at(l->buffer.get());
  if (offset + step < 0 || offset + step >= static_cast<int64_t>(regs.size())) {
    Fail(absl::StrCat("a register operand past the end of ", l->buffer->name));
    return "";
  }
  return regs[offset + step];
}

// An integer index as variable part + constant: sums, differences and
// products by constants are taken apart (as NVVM reassociates them), so the
// constant goes into the address's immediate offset and the copies of an
// unrolled access share one variable part. Exact in two's complement.
std::pair<std::optional<Value>, int64_t> Emitter::Linear(const ir::Expr& e) {
  const DataType t = e.dtype();
  if (const auto* b = e.As<ir::BinaryNode>()) {
    if (b->op == ir::BinaryOp::kAdd || b->op == ir::BinaryOp::kSub) {
      auto [va, ca] = Linear(b->a);
      auto [vb, cb] = Linear(b->b);
      const bool add = b->op == ir::BinaryOp::kAdd;
      const int64_t c = add ? ca + cb : ca - cb;
      if (!vb) return {va, c};
      if (!va) {
        if (add) return {vb, c};
        return {Emit(t, absl::StrCat("neg.", ValueType(t)), {*vb}), c};
      }
      return {Emit(t, absl::StrCat(add ? "add." : "sub.", ValueType(t)),
                   {*va, *vb}),
              c};
    }
    if (b->op == ir::BinaryOp::kMul) {
      const Value k = Expr(b->b);
      if (k.int_const) {
        auto [va, ca] = Linear(b->a);
        if (!va) return {std::nullopt, ca * *k.int_const};
        if (*k.int_const == 0) return {std::nullopt, 0};
        if (*k.int_const == 1) return {va, ca};
        return {Emit(t, absl::StrCat("mul.lo.", ValueType(t)), {*va, k}),
                ca * *k.int_const};
      }
    }
  }
  const Value v = Expr(e);
  if (v.int_const) return {std::nullopt, *v.int_const};
  return {v, 0};
}

std::string Emitter::SharedAddress(const ir::LoadNode& l, int64_t* offset) {
  const ir::BufferNode* b = l.buffer.get();
  auto planned = st_.smem.offset.find(b);
  if (planned == st_.smem.offset.end() || l.indices.size() != 1) {
    Fail(absl::StrCat("shared ", b->name, " without a planned flat offset"));
    return "";
  }
  const int64_t bytes =
      b->scope == ir::Scope::kBarrier ? 8 : dtype_bytes(b->dtype);
  auto [var, c] = Linear(l.indices[0]);
  *offset = planned->second + c * bytes;
  if (!var) return smem_base_;
  const Value v = Cast(*var, DataType::kU32);
  const Value scaled = bytes == 1
                           ? v
                           : Emit(DataType::kU32, "shl.b32",
                                  {v, Const(DataType::kU32, Log2(bytes))});
  return Emit(DataType::kU32, "add.u32",
              {Value{.dtype = DataType::kU32,
                     .reg = smem_base_,
                     .key = smem_base_},
               scaled})
      .reg;
}

std::string Emitter::GlobalAddress(const ir::LoadNode& l, int64_t* offset) {
  const ir::BufferNode* b = l.buffer.get();
  auto base_reg = global_base_.find(b);
  if (base_reg == global_base_.end() || l.indices.size() != 1) {
    Fail(absl::StrCat("global ", b->name, " not a flat kernel parameter"));
    return "";
  }
  const int64_t bytes = dtype_bytes(b->dtype);
  auto [var, c] = Linear(l.indices[0]);
  *offset = c * bytes;
  const Value ptr{.dtype = DataType::kI64,
                  .reg = base_reg->second,
                  .key = base_reg->second};
  if (!var) {
    if (*offset < 0) {
      const Value r = Emit(DataType::kI64, "add.s64",
                           {ptr, Const(DataType::kI64, *offset)});
      *offset = 0;
      return r.reg;
    }
    return ptr.reg;
  }
  const Value v = *var;
  Value wide;
  if (v.dtype == DataType::kI64) {
    wide =
        Emit(DataType::kI64, "mul.lo.s64", {v, Const(DataType::kI64, bytes)});
  } else {
    wide = Emit(DataType::kI64,
                v.dtype == DataType::kU32 ? "mul.wide.u32" : "mul.wide.s32",
                {v, Const(v.dtype, bytes)});
  }
  const Value r = Emit(DataType::kI64, "add.s64", {ptr, wide});
  if (*offset < 0) {
    const Value shifted =
        Emit(DataType::kI64, "add.s64", {r, Const(DataType::kI64, *offset)});
    *offset = 0;
    return shifted.reg;
  }
  return r.reg;
}

std::string Emitter::ElementAddress(const ir::Expr& load, int64_t* offset,
                                    bool* shared) {
  const auto* l = load.As<ir::LoadNode>();
  if (l == nullptr) {
    Fail("an address of something not a buffer element");
    return "";
  }
  const ir::Scope scope = l->buffer->scope;
  *shared = scope == ir::Scope::kShared || scope == ir::Scope::kBarrier;
  if (*shared) return SharedAddress(*l, offset);
  if (scope == ir::Scope::kGlobal) return GlobalAddress(*l, offset);
  Fail("an address of a register array");
  return "";
}

std::string Emitter::AddressOperand(const ir::Expr& load, bool* shared) {
  int64_t offset = 0;
  const std::string addr = ElementAddress(load, &offset, shared);
  return At(addr, offset);
}

std::string Emitter::LoadKey(const ir::BufferNode& b, bool shared,
                             const std::string& addr, int64_t offset) {
  const bool b16 = dtype_bytes(b.dtype) == 2;
  return absl::StrCat("ld.", shared ? "shared" : "global",
                      !shared && read_only_.count(&b) ? ".nc" : "", ".",
                      b16 ? "b16" : ValueType(b.dtype), " [", addr,
                      offset ? absl::StrCat("+", offset) : "", "]");
}

bool Emitter::LoadedBefore(const ir::LoadNode& l) {
  if (l.buffer->scope != ir::Scope::kGlobal ||
      !read_only_.count(l.buffer.get()))
    return false;
  int64_t offset = 0;
  bool shared = false;
  const std::string addr =
      ElementAddress(ir::Load(l.buffer, l.indices), &offset, &shared);
  return !failed() &&
         !Lookup(LoadKey(*l.buffer.get(), shared, addr, offset)).empty();
}

Value Emitter::Load(const ir::LoadNode& l) {
  const ir::BufferNode* b = l.buffer.get();
  if (b->scope == ir::Scope::kLocal || ir::IsScalarVar(b->scope)) {
    std::vector<int64_t> idx;
    for (const ir::Expr& i : l.indices) {
      const Value c = Expr(i);
      if (!c.int_const) {
        Fail("a local array indexed by a variable");
        return Const(DataType::kI32, 0);
      }
      idx.push_back(*c.int_const);
    }
    if (ir::IsScalarVar(b->scope)) idx.assign(1, 0);
    const std::string r = LocalElement(b, idx);
    return Value{
        .dtype = b->dtype, .reg = r, .key = absl::StrCat(r, "@", versions_[r])};
  }
  if (!Spelled(b->dtype) || b->dtype == DataType::kBool) {
    Fail("a load of an 8-bit, bool or f64 element");
    return Const(DataType::kI32, 0);
  }
  int64_t offset = 0;
  bool shared = false;
  const std::string addr =
      ElementAddress(ir::Load(l.buffer, l.indices), &offset, &shared);
  if (failed()) return Const(DataType::kI32, 0);
  const bool read_only = !shared && read_only_.count(b);
  const std::string key = LoadKey(*b, shared, addr, offset);
  const std::string op = key.substr(0, key.find(' '));
  const std::string at = key.substr(key.find(' ') + 1);
  // Memory the kernel never writes reads the same every time: one load per
  // address and scope (not hoisted: the branch may guard its bounds).
  if (read_only) {
    if (std::string r = Lookup(key); !r.empty())
      return Value{.dtype = b->dtype, .reg = r, .key = r};
  }
  const std::string r = NewReg(b->dtype);
  Line(absl::StrCat(op, " ", r, ", ", at, ";"));
  if (read_only) Remember(key, r);
  return Value{.dtype = b->dtype, .reg = r, .key = r};
}

// prelude/atomics.cuh's atomic_add_f32x{2,4} / f16x2 / bf16x2 (n, dst, v...):
// one vector red on sm_90's global memory, else one red per f32 (as the
// prelude falls back before sm_90); two halves packed into one red.
void Emitter::AtomicAddVec(const ir::CallNode& c) {
  const int64_t n = *ir::AsConstInt(c.args[0]);
  const DataType t = c.args[1].dtype();
  int64_t offset = 0;
  bool shared = false;
  const std::string addr = ElementAddress(c.args[1], &offset, &shared);
  std::vector<std::string> v;
  for (size_t i = 2; i < c.args.size(); ++i) {
    v.push_back(InReg(Expr(c.args[i])));
  }
  if (failed()) return;
  const std::string space = shared ? "shared" : "global";
  if (t == DataType::kF32) {
    if (shared || st_.target.sm() < 90) {
      for (int64_t i = 0; i < n; ++i) {
        Line(absl::StrCat("red.", space, ".add.f32 ", At(addr, offset + 4 * i),
                          ", ", v[i], ";"));
      }
      return;
    }
    ptx_isa_needed_ = std::max(ptx_isa_needed_, 81);
    return Line(absl::StrCat("red.global.add.v", n, ".f32 ", At(addr, offset),
                             ", {", absl::StrJoin(v, ", "), "};"));
  }
  if ((t != DataType::kF16 && t != DataType::kBF16) || n != 2) {
    return Fail("a vector atomic_add of this dtype");
  }
  // red.add.noftz.bf16x2 is sm_90's; NVRTC spells a CAS loop before.
  if (t == DataType::kBF16 && st_.target.sm() < 90) {
    return Fail("a bf16x2 atomic_add before sm_90");
  }
  const std::string packed = NewReg(DataType::kU32);
  Line(absl::StrCat("mov.b32 ", packed, ", {", v[0], ", ", v[1], "};"));
  Line(absl::StrCat("red.", space, ".add.noftz.", ValueType(t), "x2 ",
                    At(addr, offset), ", ", packed, ";"));
}

}  // namespace tessel::codegen::ptx

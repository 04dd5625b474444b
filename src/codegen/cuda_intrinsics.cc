// The statement intrinsics (passes/intrinsics.h), one case each: what the
// lowering's calls look like in CUDA C++.
#include <algorithm>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "src/codegen/cuda_codegen.h"
#include "src/codegen/cuda_printer.h"
#include "src/codegen/wgmma_instruction.h"
#include "src/ir/op.h"
#include "src/passes/intrinsics.h"

namespace tessel::codegen {

std::string Printer::Addr(const ir::Expr& load) {
  return absl::StrCat("&", Access(*load.As<ir::LoadNode>()));
}

const char* Printer::VecType(int64_t bytes) {
  switch (bytes) {
    case 16:
      return "uint4";
    case 8:
      return "uint2";
    case 4:
      return "tl::u32";
    default:
      return "unsigned short";
  }
}

// wgmma.mma_async m64nNk16 (m64nNk32 for fp8), f32 += A * B: args (type,
// N, A M-major or -1 for A in registers, B N-major, accumulator [..][4]
// from n8 tile n0 on, n0, A's [4] registers or descriptor, B's
// descriptor[, accumulate]). The type is "f16" / "bf16" for A and B, or fp8
// "e4m3.e5m2" (A's, B's), which reads K-major only: no transpose
// immediates. accumulate 0 (scale-d 0): D = A B; an accumulator register
// the statement's first write to overwrites so is an output only ("=&f":
// its old value is dead, and no input shares its register).
//
// A run of wgmmas with nothing between them (a k step's m64 blocks and k16
// slices) is one asm statement: each instruction in its own { } scope as
// before, the accumulators named once however many instructions write them,
// equal inputs once. NVVM's time grows faster than linearly with the number
// of asm operands in a kernel (an sm_90a gemm's eight wgmmas of 64 "+f"
// each were 512 operands, now 128 and 8 descriptors); the PTX instructions
// and their order are the same (docs/benchmarks.md, "Compile latency").
void Printer::Wgmmas(const std::vector<const ir::CallNode*>& calls) {
  std::vector<std::string> outs, ins;
  absl::flat_hash_map<std::string, int> out_index, in_index;
  // Per output: whether the first instruction writing it overwrites it.
  std::vector<bool> overwritten;
  // The operand index of `op` in `list`, appending it if new; inputs come
  // after every output, so their indices are offset once all are known.
  // (A hash index: a k step's wgmmas name hundreds of accumulators.)
  auto index_of = [](std::vector<std::string>& list,
                     absl::flat_hash_map<std::string, int>& index,
                     std::string op) {
    auto [it, added] = index.try_emplace(op, static_cast<int>(list.size()));
    if (added) list.push_back(std::move(op));
    return it->second;
  };
  struct Instruction {
    std::string opcode;  // wgmma_instruction.h
    std::vector<int> d, a;
    int b = 0, scale_d = 0;
    std::string imms;
  };
  // The accumulators by (array, offset): each k step names the same ones,
  // and their text is built once.
  absl::flat_hash_map<std::pair<const ir::BufferNode*, int64_t>, int> out_slot;
  auto out_of = [&](const ir::Expr& ref, int64_t row, int64_t col) {
    const std::optional<std::pair<const ir::BufferNode*, int64_t>> e =
        FlatElement(ref, {row, col});
    if (!e) return index_of(outs, out_index, Element(ref, {row, col}));
    auto [it, added] = out_slot.try_emplace(*e, static_cast<int>(outs.size()));
    if (added) {
      outs.push_back(absl::StrCat(BufName(e->first), "[", e->second, "]"));
    }
    return it->second;
  };
  std::vector<Instruction> instructions;
  for (const ir::CallNode* c : calls) {
    const std::string& type = c->args[0].As<ir::CallNode>()->name;
    const int n = static_cast<int>(*ir::AsConstInt(c->args[1]));
    const int64_t trans_a = *ir::AsConstInt(c->args[2]);
    const int64_t trans_b = *ir::AsConstInt(c->args[3]);
    const int64_t n0 = *ir::AsConstInt(c->args[5]);
    const bool a_in_registers = trans_a < 0;
    const bool accumulate =
        c->args.size() < 9 || !ir::IsConstInt(c->args[8], 0);
    Instruction in;
    in.opcode = WgmmaOpcode(type, n);
    for (int i = 0; i < n / 2; ++i) {
      in.d.push_back(out_of(c->args[4], n0 + i / 4, i % 4));
      if (overwritten.size() < outs.size()) overwritten.push_back(!accumulate);
    }
    if (a_in_registers) {
      for (int r = 0; r < 4; ++r) {
        in.a.push_back(
            index_of(ins, in_index,
                     absl::StrCat("\"r\"(", Element(c->args[6], {r}), ")")));
      }
    } else {
      in.a.push_back(index_of(ins, in_index,
                              absl::StrCat("\"l\"(", Expr(c->args[6]), ")")));
    }
    in.b =
        index_of(ins, in_index, absl::StrCat("\"l\"(", Expr(c->args[7]), ")"));
    in.scale_d = index_of(ins, in_index, accumulate ? "\"r\"(1)" : "\"r\"(0)");
    in.imms = WgmmaImmediates(type, trans_a, trans_b);
    instructions.push_back(std::move(in));
  }
  const int first_in = static_cast<int>(outs.size());
  auto ops = [](const std::vector<int>& indices, int offset) {
    std::vector<std::string> names;
    for (int i : indices) names.push_back(absl::StrCat("%", i + offset));
    return absl::StrJoin(names, ", ");
  };
  Line("asm volatile(");
  for (const Instruction& in : instructions) {
    Line("    \"{\\n.reg .pred p;\\n\"");
    Line(absl::StrCat("    \"setp.ne.b32 p, %", in.scale_d + first_in,
                      ", 0;\\n\""));
    Line(absl::StrCat("    \"", in.opcode, " \""));
    Line(absl::StrCat("    \"{", ops(in.d, 0), "}, \""));
    const std::string a = in.a.size() == 1
                              ? ops(in.a, first_in)
                              : absl::StrCat("{", ops(in.a, first_in), "}");
    Line(absl::StrCat("    \"", a, ", %", in.b + first_in, ", p, ", in.imms,
                      ";\\n}\\n\""));
  }
  for (size_t i = 0; i < outs.size(); ++i)
    outs[i] =
        absl::StrCat(overwritten[i] ? "\"=&f\"(" : "\"+f\"(", outs[i], ")");
  Line(absl::StrCat("    : ", absl::StrJoin(outs, ", ")));
  Line(absl::StrCat("    : ", absl::StrJoin(ins, ", "), ");"));
}

// An empty asm that "writes" registers: the compiler keeps their reads
// after it (the accumulators of a wgmma are final only after its wait).
void Printer::FenceOperand(const ir::CallNode& c) {
  const int64_t n = *ir::AsConstInt(c.args[1]);
  std::vector<std::string> outs;
  for (int64_t i = 0; i < n; ++i)
    outs.push_back(
        absl::StrCat("\"+f\"(", Element(c.args[0], {i / 4, i % 4}), ")"));
  Line(absl::StrCat("asm volatile(\"\" : ", absl::StrJoin(outs, ", "),
                    " :: \"memory\");"));
}

void Printer::Intrinsic(const ir::CallNode& c) {
  using I = passes::Intrinsic;
  std::optional<I> id = passes::IntrinsicOf(c);
  if (!id || (passes::InfoOf(*id).effects & passes::kExpression)) {
    error_ = absl::StrCat("codegen: unknown intrinsic ", c.name);
    return;
  }
  auto arg = [&](int i) { return Expr(c.args[i]); };
  switch (*id) {
    case I::kLet: {
      const auto* v = c.args[0].As<ir::VarNode>();
      Line(absl::StrCat("const ", CudaType(c.args[1].dtype()), " ", VarName(v),
                        " = ", arg(1), ";"));
      return;
    }
    case I::kCpAsync: {
      const auto* l = c.args[2].As<ir::LoadNode>();
      std::string src = Addr(c.args[2]);
      if (ir::IsConstInt(c.args[3], 1)) {
        Line(absl::StrCat("tl::cp_async<", arg(0), ">(", arg(1), ", ", src,
                          ");"));
      } else {
        std::string pred = arg(3);
        Line(absl::StrCat("tl::cp_async<", arg(0), ">(", arg(1), ", ", pred,
                          " ? static_cast<const void*>(", src,
                          ") : static_cast<const void*>(",
                          BufName(l->buffer.get()), "), ", pred, ");"));
      }
      return;
    }
    case I::kCpAsyncCommit:
      Line("tl::cp_async_commit();");
      return;
    case I::kCpAsyncWait:
      Line(absl::StrCat("tl::cp_async_wait<", arg(0), ">();"));
      return;
    case I::kLdmatrix:
      Line(absl::StrCat("tl::ldmatrix_x", arg(0),
                        ir::IsConstInt(c.args[1], 1) ? "_trans" : "",
                        "(*reinterpret_cast<tl::u32(*)[", arg(0), "]>(", arg(2),
                        "), ", arg(3), ");"));
      return;
    case I::kMma:
      Line(absl::StrCat("tl::mma_m16n8k16_", c.args[0].As<ir::CallNode>()->name,
                        "(", arg(1), ", ", arg(2), ", ", arg(3), ");"));
      return;
    case I::kWgmma:
      Wgmmas({&c});
      return;
    case I::kFenceOperand:
      FenceOperand(c);
      return;
    case I::kWgmmaFence:
      Line("tl::wgmma_fence();");
      return;
    case I::kWgmmaCommit:
      Line("tl::wgmma_commit();");
      return;
    case I::kWgmmaWait:
      Line(absl::StrCat("tl::wgmma_wait<", arg(0), ">();"));
      return;
    case I::kFenceProxyAsync:
      Line("tl::fence_proxy_async();");
      return;
    case I::kVecCopy: {
      const char* t = VecType(*ir::AsConstInt(c.args[0]));
      Line(absl::StrCat("*reinterpret_cast<", t, "*>(", Addr(c.args[1]),
                        ") = *reinterpret_cast<const ", t, "*>(",
                        Addr(c.args[2]), ");"));
      return;
    }
    case I::kVecZero: {
      int64_t bytes = *ir::AsConstInt(c.args[0]);
      const char* t = VecType(bytes);
      std::string zero = bytes == 16  ? "make_uint4(0u, 0u, 0u, 0u)"
                         : bytes == 8 ? "make_uint2(0u, 0u)"
                                      : "0u";
      Line(absl::StrCat("*reinterpret_cast<", t, "*>(", Addr(c.args[1]),
                        ") = ", zero, ";"));
      return;
    }
    case I::kLoadVec:
    case I::kStoreVec:
      Line(absl::StrCat("tl::", c.name, "<", arg(0), ">(", Addr(c.args[1]),
                        ", ", Addr(c.args[2]), ");"));
      return;
    case I::kStorePair:
      StorePair(c);
      return;
    case I::kAtomicAdd:
      Line(
          absl::StrCat("tl::atomic_add(", Addr(c.args[0]), ", ", arg(1), ");"));
      return;
    case I::kAtomicMax:
    case I::kAtomicMin:
      Line(absl::StrCat(
          *id == I::kAtomicMax ? "tl::atomic_max(" : "tl::atomic_min(",
          Addr(c.args[0]), ", ", arg(1), ");"));
      return;
    case I::kAtomicAddVec:
      AtomicAddVec(c);
      return;
    case I::kAtomicTicket:
      Line(absl::StrCat("tl::atomic_ticket(", Addr(c.args[0]), ", ",
                        Addr(c.args[1]), ", ", arg(2), ");"));
      return;
    case I::kBulkReduceAdd:
      Line(absl::StrCat("tl::bulk_reduce_add_f32(", Addr(c.args[1]), ", ",
                        Addr(c.args[2]), ", ", arg(0), ");"));
      return;
    case I::kBulkCommit:
      Line("tl::tma_store_commit();");
      return;
    case I::kBulkWaitRead:
      Line(absl::StrCat("tl::tma_store_wait_read<", arg(0), ">();"));
      return;
    case I::kMbarrierInit:
      Line(absl::StrCat("tl::mbarrier_init(", Addr(c.args[0]), ", ", arg(1),
                        ");"));
      return;
    case I::kFenceBarrierInit:
      Line("tl::fence_barrier_init();");
      return;
    case I::kMbarrierArrive:
      Line(absl::StrCat("tl::mbarrier_arrive(", Addr(c.args[0]), ");"));
      return;
    case I::kMbarrierWaitParity:
      Line(absl::StrCat("tl::mbarrier_wait_parity(", Addr(c.args[0]), ", ",
                        arg(1), ");"));
      return;
    case I::kMbarrierExpectTx:
      Line(absl::StrCat("tl::mbarrier_expect_tx(", Addr(c.args[0]), ", ",
                        arg(1), ");"));
      return;
    case I::kTmaLoad: {
      const passes::TensorMapParam& map =
          st_.tensor_maps.at(*ir::AsConstInt(c.args[0]));
      std::string line =
          absl::StrCat("tl::tma_load(", arg(1), ", &", Name(&map, map.name),
                       ", ", Addr(c.args[2]));
      for (size_t i = 3; i < c.args.size(); ++i)
        absl::StrAppend(&line, ", ", arg(i));
      Line(line + ");");
      return;
    }
    case I::kTmaLoadMulticast: {
      const passes::TensorMapParam& map =
          st_.tensor_maps.at(*ir::AsConstInt(c.args[0]));
      std::string line = absl::StrCat(
          "tl::tma_load_multicast(", arg(1), ", &", Name(&map, map.name), ", ",
          Addr(c.args[2]), ", static_cast<tl::u16>(", arg(3), ")");
      for (size_t i = 4; i < c.args.size(); ++i)
        absl::StrAppend(&line, ", ", arg(i));
      Line(line + ");");
      return;
    }
    case I::kMbarrierArrivePair:
      Line(absl::StrCat("tl::mbarrier_arrive_pair(", Addr(c.args[0]), ");"));
      return;
    case I::kClusterSync:
      Line("tl::cluster_sync();");
      return;
    case I::kTmaPrefetch: {
      const passes::TensorMapParam& map =
          st_.tensor_maps.at(*ir::AsConstInt(c.args[0]));
      Line(absl::StrCat("tl::tma_prefetch_descriptor(&", Name(&map, map.name),
                        ");"));
      return;
    }
    case I::kTmaStore: {
      const passes::TensorMapParam& map =
          st_.tensor_maps.at(*ir::AsConstInt(c.args[0]));
      std::string line =
          absl::StrCat("tl::tma_store(&", Name(&map, map.name), ", ", arg(1));
      for (size_t i = 2; i < c.args.size(); ++i)
        absl::StrAppend(&line, ", ", arg(i));
      Line(line + ");");
      return;
    }
    case I::kTmaStoreCommit:
      Line("tl::tma_store_commit();");
      return;
    case I::kTmaStoreWait:
      Line(absl::StrCat("tl::tma_store_wait",
                        ir::IsConstInt(c.args[0], 0) ? "" : "_read", "<",
                        arg(1), ">();"));
      return;
    case I::kSetMaxNReg:
      Line(absl::StrCat("tl::setmaxnreg_",
                        ir::IsConstInt(c.args[0], 0) ? "dec" : "inc", "<",
                        arg(1), ">();"));
      return;
    case I::kNamedBarrierSync:
      Line(absl::StrCat("tl::named_barrier_sync(", arg(0), ", ", arg(1), ");"));
      return;
    case I::kNamedBarrierArrive:
      Line(absl::StrCat("tl::named_barrier_arrive(", arg(0), ", ", arg(1),
                        ");"));
      return;
    case I::kPrint:
      Print(c);
      return;
    default:  // the expressions, refused above
      return;
  }
}

void Printer::StorePair(const ir::CallNode& c) {
  DataType t = c.args[0].dtype();
  std::string dst = Addr(c.args[0]);
  std::string lo = Expr(c.args[1]), hi = Expr(c.args[2]);
  if (t == DataType::kF16 || t == DataType::kBF16) {
    Line(absl::StrCat("*reinterpret_cast<tl::u32*>(", dst, ") = tl::pack_",
                      t == DataType::kF16 ? "f16x2" : "bf16x2",
                      "(static_cast<float>(", lo, "), static_cast<float>(", hi,
                      "));"));
  } else if (t == DataType::kF32) {
    Line(absl::StrCat("*reinterpret_cast<float2*>(", dst, ") = make_float2(",
                      lo, ", ", hi, ");"));
  } else {
    Line(absl::StrCat("(", dst, ")[0] = ", lo, ";"));
    Line(absl::StrCat("(", dst, ")[1] = ", hi, ";"));
  }
}

void Printer::AtomicAddVec(const ir::CallNode& c) {
  int64_t v = *ir::AsConstInt(c.args[0]);
  DataType t = c.args[1].dtype();
  std::vector<std::string> vals;
  for (size_t i = 2; i < c.args.size(); ++i) vals.push_back(Expr(c.args[i]));
  std::string joined = absl::StrJoin(vals, ", ");
  if (t == DataType::kF32) {
    Line(absl::StrCat("tl::atomic_add_f32x", v, "(", Addr(c.args[1]),
                      ", make_float", v, "(", joined, "));"));
  } else if (t == DataType::kF16) {
    Line(absl::StrCat("tl::atomic_add_f16x2(", Addr(c.args[1]),
                      ", __halves2half2(", joined, "));"));
  } else {
    Line(absl::StrCat("tl::atomic_add_bf16x2(", Addr(c.args[1]),
                      ", __halves2bfloat162(", joined, "));"));
  }
}

namespace {

// `text` inside a printf format literal: quotes, backslashes and % escaped,
// control and non-ASCII bytes as octal escapes (three digits, so a digit
// after one stays a digit). A NUL would end printf's format early: it
// prints as the two characters \0.
std::string FormatLiteral(const std::string& text) {
  std::string out;
  for (unsigned char ch : text) {
    if (ch == '\\' || ch == '"') {
      out += '\\';
      out += static_cast<char>(ch);
    } else if (ch == '%') {
      out += "%%";
    } else if (ch == 0) {
      out += "\\\\0";
    } else if (ch < 0x20 || ch >= 0x7f) {
      out += absl::StrFormat("\\%03o", ch);
    } else {
      out += static_cast<char>(ch);
    }
  }
  return out;
}

}  // namespace

void Printer::Print(const ir::CallNode& c) {
  const std::string msg = FormatLiteral(c.args[0].As<ir::CallNode>()->name);
  const ir::Expr& v = c.args.back();
  const bool fl = IsFloat(v.dtype());
  const std::string value = absl::StrCat(
      fl ? "static_cast<double>(" : "static_cast<long long>(", Expr(v), ")");
  if (c.args.size() == 3) {  // an element of a buffer: (tag, index, value)
    Line(absl::StrCat("printf(\"", msg, "[%lld] =", fl ? " %f" : " %lld",
                      "\\n\", static_cast<long long>(", Expr(c.args[1]), "), ",
                      value, ");"));
    return;
  }
  Line(absl::StrCat("printf(\"", msg, fl ? " %f" : " %lld", "\\n\", ", value,
                    ");"));
}

}  // namespace tessel::codegen

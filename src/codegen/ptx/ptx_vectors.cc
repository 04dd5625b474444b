// The vector moves (vec_copy, vec_zero, store_pair, load_vec, store_vec)
// as PTX: one ld / st of up to 16 bytes, the elements converted between the
// two dtypes in registers.
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/codegen/ptx/ptx_emitter.h"
#include "src/passes/intrinsics.h"

namespace tessel::codegen::ptx {
namespace {

// The ld / st vector suffix and the number of 32-bit words of a move.
std::string Words(int64_t bytes, int* n) {
  *n = bytes >= 4 ? static_cast<int>(bytes / 4) : 1;
  if (bytes == 16) return ".v4.b32";
  if (bytes == 8) return ".v2.b32";
  if (bytes == 4) return ".b32";
  return ".b16";
}

}  // namespace

void Emitter::VectorMove(const ir::CallNode& c, passes::Intrinsic id) {
  using I = passes::Intrinsic;
  auto reg = [&](int i) { return InReg(Expr(c.args[i])); };
  auto constant = [&](int i) { return *ir::AsConstInt(c.args[i]); };
  auto address = [&](int i, bool* shared) {
    return AddressOperand(c.args[i], shared);
  };
  switch (id) {
    case I::kVecCopy:
    case I::kVecZero: {
      const int64_t bytes = constant(0);
      int n = 0;
      const std::string suffix = Words(bytes, &n);
      const DataType word = bytes == 2 ? DataType::kI16 : DataType::kU32;
      std::vector<std::string> regs;
      if (id == I::kVecCopy) {
        bool shared = false;
        const std::string from = address(2, &shared);
        for (int i = 0; i < n; ++i) regs.push_back(NewReg(word));
        const std::string list =
            n == 1 ? regs[0]
                   : absl::StrCat("{", absl::StrJoin(regs, ", "), "}");
        const auto* l = c.args[2].As<ir::LoadNode>();
        Line(absl::StrCat(
            "ld.", shared ? "shared" : "global",
            !shared && read_only_.count(l->buffer.get()) ? ".nc" : "", suffix,
            " ", list, ", ", from, ";"));
      } else {
        for (int i = 0; i < n; ++i)
          regs.push_back(InReg(Const(
              word == DataType::kI16 ? DataType::kI32 : DataType::kU32, 0)));
        if (word == DataType::kI16) {
          regs[0] = NewReg(DataType::kI16);
          Line(absl::StrCat("mov.b16 ", regs[0], ", 0;"));
        }
      }
      bool shared = false;
      const std::string to = address(1, &shared);
      const std::string list =
          n == 1 ? regs[0] : absl::StrCat("{", absl::StrJoin(regs, ", "), "}");
      return Line(absl::StrCat("st.", shared ? "shared" : "global", suffix, " ",
                               to, ", ", list, ";"));
    }
    case I::kStorePair: {
      const DataType t = c.args[0].dtype();
      bool shared = false;
      if (t == DataType::kF16 || t == DataType::kBF16) {
        // tl::pack_f16x2's cvt.rn.f16x2.f32 d, hi, lo from the f32 values
        // (a rounding of the f16-rounded value gives the same f16).
        auto as_f32 = [&](int i) {
          const ir::Expr& e = c.args[i];
          if (const auto* cast = e.As<ir::CastNode>()) {
            if (cast->value.dtype() == DataType::kF32)
              return InReg(Expr(cast->value));
          }
          return InReg(Cast(Expr(e), DataType::kF32));
        };
        const std::string lo = as_f32(1), hi = as_f32(2);
        const std::string r = NewReg(DataType::kU32);
        PreludeLines(PackFunction(t), {r, hi, lo});
        const std::string to = address(0, &shared);
        return Line(absl::StrCat("st.", shared ? "shared" : "global", ".b32 ",
                                 to, ", ", r, ";"));
      }
      if (t == DataType::kF32) {
        const std::string lo = reg(1), hi = reg(2);
        const std::string to = address(0, &shared);
        return Line(absl::StrCat("st.", shared ? "shared" : "global",
                                 ".v2.f32 ", to, ", {", lo, ", ", hi, "};"));
      }
      return Fail("store_pair of this dtype");
    }
    case I::kLoadVec:
    case I::kStoreVec: {
      // (n, registers, memory) for load_vec; (n, memory, registers) for
      // store_vec: n elements, converted between the two dtypes, in words
      // of at most 16 bytes.
      const bool load = id == I::kLoadVec;
      const int64_t n = constant(0);
      const ir::Expr& regs_arg = c.args[load ? 1 : 2];
      const ir::Expr& mem_arg = c.args[load ? 2 : 1];
      const DataType mem_t = mem_arg.dtype(), reg_t = regs_arg.dtype();
      const int64_t eb = dtype_bytes(mem_t);
      if (!Spelled(mem_t) || !Spelled(reg_t) || eb < 2) {
        return Fail("load_vec / store_vec of these dtypes");
      }
      const int64_t piece = n * eb >= 16 ? 16 / eb : n;
      bool shared = false;
      int64_t offset = 0;
      const std::string base = ElementAddress(mem_arg, &offset, &shared);
      if (failed()) return;
      const auto* l = mem_arg.As<ir::LoadNode>();
      for (int64_t p = 0; p < n; p += piece) {
        int words = 0;
        const std::string suffix = Words(piece * eb, &words);
        std::vector<std::string> w;
        for (int i = 0; i < words; ++i)
          w.push_back(
              NewReg(piece * eb == 2 ? DataType::kI16 : DataType::kU32));
        const std::string list =
            words == 1 ? w[0] : absl::StrCat("{", absl::StrJoin(w, ", "), "}");
        const std::string at = At(base, offset + p * eb);
        if (load) {
          Line(absl::StrCat(
              "ld.", shared ? "shared" : "global",
              !shared && read_only_.count(l->buffer.get()) ? ".nc" : "", suffix,
              " ", list, ", ", at, ";"));
        }
        for (int64_t i = 0; i < piece; ++i) {
          const std::string r = RefElement(regs_arg, {p + i});
          if (failed()) return;
          // The element's bits within its word.
          const std::string& word = w[(i * eb) / 4];
          if (load) {
            Value raw;
            if (eb == 4) {
              raw = Value{.dtype = mem_t, .reg = word, .key = word};
              if (mem_t == DataType::kF32) {
                const std::string f = NewReg(DataType::kF32);
                Line(absl::StrCat("mov.b32 ", f, ", ", word, ";"));
                raw = Value{.dtype = mem_t, .reg = f, .key = f};
              }
            } else {  // two 16-bit halves
              const std::string h = NewReg(mem_t);
              if (piece * eb == 2) {
                Line(absl::StrCat("mov.b16 ", h, ", ", word, ";"));
              } else {
                const std::string other = NewReg(mem_t);
                Line(absl::StrCat("mov.b32 {", i % 2 ? other : h, ", ",
                                  i % 2 ? h : other, "}, ", word, ";"));
              }
              raw = Value{.dtype = mem_t, .reg = h, .key = h};
            }
            const Value v =
                reg_t == mem_t ? raw : Cast(Cast(raw, DataType::kF32), reg_t);
            Line(absl::StrCat("mov", RegType(reg_t), " ", r, ", ", InReg(v),
                              ";"));
            Reassigned(r);
          } else {
            const Value src{.dtype = reg_t,
                            .reg = r,
                            .key = absl::StrCat(r, "@", versions_[r])};
            const Value v =
                reg_t == mem_t ? src : Cast(Cast(src, DataType::kF32), mem_t);
            if (eb == 4) {
              Line(absl::StrCat("mov.b32 ", word, ", ", InReg(v), ";"));
            } else if (piece * eb == 2) {
              Line(absl::StrCat("mov.b16 ", word, ", ", InReg(v), ";"));
            } else if (i % 2 == 1) {
              Line(absl::StrCat("mov.b32 ", word, ", {", InReg(pending_half_),
                                ", ", InReg(v), "};"));
            } else {
              pending_half_ = v;
            }
          }
        }
        if (!load) {
          Line(absl::StrCat("st.", shared ? "shared" : "global", suffix, " ",
                            at, ", ", list, ";"));
        }
      }
      return;
    }
    default:
      return Fail(absl::StrCat("intrinsic ", c.name));
  }
}

}  // namespace tessel::codegen::ptx

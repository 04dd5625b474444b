#include "src/runtime/check_tensors.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/ir/op.h"
#include "src/ir/printer.h"
#include "src/ir/walk.h"

namespace tessel::runtime {
namespace {

std::string Expected(const ir::Buffer& b) {
  std::vector<std::string> dims;
  for (const ir::Expr& d : b->shape) dims.push_back(ir::ToString(d));
  return absl::StrCat(std::string(dtype_name(b->dtype)), "[",
                      absl::StrJoin(dims, ","), "]");
}

// A strided view: one positive stride per dimension (dims of extent 1 take
// any), no two elements at one address (outputs would race), and within
// the int32 a kernel parameter holds.
absl::Status CheckStrides(const KernelImpl& k, const ir::Buffer& p,
                          const TensorView& t) {
  if (t.strides.empty()) return absl::OkStatus();
  auto bad = [&](absl::string_view why) {
    return absl::InvalidArgumentError(absl::StrCat(
        k.name, ": ", p->name, " ", t.ToString(), " with strides [",
        absl::StrJoin(t.strides, ","), "]: ", why));
  };
  if (t.strides.size() != t.shape.size()) {
    return bad(absl::StrCat("one stride per dimension (", t.shape.size(),
                            ") is needed"));
  }
  std::vector<int> dims;
  for (size_t d = 0; d < t.shape.size(); ++d) {
    if (t.shape[d] == 1) continue;
    if (t.strides[d] <= 0) return bad("strides must be positive");
    if (t.strides[d] > INT32_MAX) return bad("a stride above 2^31 - 1");
    dims.push_back(static_cast<int>(d));
  }
  std::stable_sort(dims.begin(), dims.end(),
                   [&](int a, int b) { return t.strides[a] < t.strides[b]; });
  for (size_t i = 1; i < dims.size(); ++i) {
    const int inner = dims[i - 1], outer = dims[i];
    if (t.strides[outer] < t.strides[inner] * t.shape[inner]) {
      return bad(absl::StrCat("dimensions ", inner, " and ", outer,
                              " overlap (two indices reach one element)"));
    }
  }
  return absl::OkStatus();
}

// Checks one view against its parameter, binding symbolic sizes in values.
absl::Status CheckTensor(const KernelImpl& k, const ir::Buffer& p,
                         const TensorView& t, SizeBindings& values) {
  auto mismatch = [&]() {
    return absl::InvalidArgumentError(absl::StrCat(k.name, ": ", p->name,
                                                   ": expected ", Expected(p),
                                                   ", got ", t.ToString()));
  };
  if (t.dtype != p->dtype || t.shape.size() != p->shape.size())
    return mismatch();
  for (size_t d = 0; d < t.shape.size(); ++d) {
    const ir::Expr& want = p->shape[d];
    if (const auto* v = want.As<ir::VarNode>()) {
      auto [it, fresh] = values.emplace(v, t.shape[d]);
      if (!fresh && it->second != t.shape[d]) {
        return absl::InvalidArgumentError(
            absl::StrCat(k.name, ": ", p->name, ": expected ", Expected(p),
                         ", got ", t.ToString(), " (", v->name, " is ",
                         it->second, " from an earlier tensor)"));
      }
      if (t.shape[d] <= 0 || t.shape[d] > INT32_MAX) return mismatch();
    } else if (std::optional<int64_t> c = ir::AsConstInt(want)) {
      if (*c != t.shape[d]) return mismatch();
    }
  }
  if (absl::Status s = CheckStrides(k, p, t); !s.ok()) return s;
  if (t.data == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(k.name, ": ", p->name, ": null ",
                     k.interpreter ? "host" : "device", " pointer"));
  }
  // Every element access is as wide as the element (GPU loads fault on a
  // misaligned address); the dtype matched above, so it is valid.
  if (t.data % dtype_bytes(t.dtype) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat(k.name, ": ", p->name, ": address 0x", absl::Hex(t.data),
                     " is not a multiple of the ", dtype_bytes(t.dtype),
                     "-byte ", std::string(dtype_name(t.dtype)), " element"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<SizeBindings> CheckTensors(
    const KernelImpl& k, const std::vector<TensorView>& tensors,
    bool alignment) {
  if (tensors.size() != k.params.size()) {
    std::vector<std::string> names;
    for (const ir::Buffer& b : k.params) names.push_back(b->name);
    return absl::InvalidArgumentError(
        absl::StrCat(k.name, ": expected ", k.params.size(), " tensors (",
                     absl::StrJoin(names, ", "), "), got ", tensors.size()));
  }
  SizeBindings values;
  for (size_t i = 0; i < tensors.size(); ++i) {
    absl::Status s = CheckTensor(k, k.params[i], tensors[i], values);
    if (!s.ok()) return s;
  }
  // Dims declared as expressions of sizes (K / 2), once every size is bound.
  for (size_t i = 0; i < tensors.size(); ++i) {
    const ir::Buffer& p = k.params[i];
    for (size_t d = 0; d < p->shape.size(); ++d) {
      const ir::Expr& want = p->shape[d];
      if (want.As<ir::VarNode>() || ir::AsConstInt(want)) continue;
      absl::StatusOr<int64_t> n = EvalInt(want, values);
      if (!n.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat(k.name, ": ", p->name, ": dimension ", d, " is ",
                         ir::ToString(want), ": ", n.status().message()));
      }
      if (*n != tensors[i].shape[d]) {
        std::vector<std::string> sizes;
        for (const auto& [v, value] : values)
          if (ir::UsesVar(want, v))
            sizes.push_back(absl::StrCat(v->name, " = ", value));
        std::sort(sizes.begin(), sizes.end());
        return absl::InvalidArgumentError(absl::StrCat(
            k.name, ": ", p->name, ": expected ", Expected(p), ", got ",
            tensors[i].ToString(), ": dimension ", d, " is ",
            tensors[i].shape[d], ", but ", ir::ToString(want), " = ", *n, " (",
            absl::StrJoin(sizes, ", "), ")"));
      }
    }
  }
  for (const passes::AlignmentRequirement& a : k.alignment) {
    if (!alignment) break;
    const TensorView& t = tensors[a.param];
    const int64_t bytes = int64_t{a.multiple} * dtype_bytes(t.dtype);
    if (!MeetsAlignment(a, t)) {
      return absl::InvalidArgumentError(absl::StrCat(
          k.name, ": ", k.params[a.param]->name, " ", t.ToString(),
          ": this kernel's ", a.reason, " need the last dimension to be a ",
          "multiple of ", a.multiple, " and the pointer aligned to ", bytes,
          " bytes",
          t.strides.empty()
              ? ""
              : absl::StrCat(", and every outer stride a multiple of ",
                             a.multiple)));
    }
  }
  return values;
}

bool MeetsAlignment(const passes::AlignmentRequirement& a,
                    const TensorView& t) {
  const int64_t bytes = int64_t{a.multiple} * dtype_bytes(t.dtype);
  bool strides_ok = true;  // the rows of a strided view start aligned too
  for (size_t d = 0; d + 1 < t.strides.size(); ++d) {
    strides_ok &= t.shape[d] == 1 || t.strides[d] % a.multiple == 0;
  }
  return !t.shape.empty() && t.shape.back() % a.multiple == 0 &&
         t.data % bytes == 0 && strides_ok;
}

bool IsRowMajor(const TensorView& t) {
  if (t.strides.empty()) return true;
  if (t.strides.size() != t.shape.size()) return false;  // CheckTensors says
  int64_t expect = 1;
  for (int d = static_cast<int>(t.strides.size()) - 1; d >= 0; --d) {
    if (t.shape[d] != 1 && t.strides[d] != expect) return false;
    expect *= t.shape[d];
  }
  return true;
}

absl::StatusOr<int64_t> EvalInt(const ir::Expr& e, const SizeBindings& values) {
  if (auto c = ir::AsConstInt(e)) return *c;
  if (const auto* v = e.As<ir::VarNode>()) {
    auto it = values.find(v);
    if (it == values.end())
      return absl::InvalidArgumentError(
          absl::StrCat("size ", v->name, " is not bound"));
    return it->second;
  }
  if (const auto* c = e.As<ir::CastNode>()) return EvalInt(c->value, values);
  if (const auto* b = e.As<ir::BinaryNode>()) {
    absl::StatusOr<int64_t> x = EvalInt(b->a, values),
                            y = EvalInt(b->b, values);
    if (!x.ok()) return x;
    if (!y.ok()) return y;
    switch (b->op) {
      case ir::BinaryOp::kAdd:
        return *x + *y;
      case ir::BinaryOp::kSub:
        return *x - *y;
      case ir::BinaryOp::kMul:
        return *x * *y;
      case ir::BinaryOp::kDiv:
        if (*y == 0) break;
        return ir::FloorDiv(*x, *y);
      case ir::BinaryOp::kMod:
        if (*y == 0) break;
        return ir::FloorMod(*x, *y);
      case ir::BinaryOp::kCeilDiv:
        if (*y == 0) break;
        return -ir::FloorDiv(-*x, *y);
      case ir::BinaryOp::kMin:
        return std::min(*x, *y);
      case ir::BinaryOp::kMax:
        return std::max(*x, *y);
      default:
        break;
    }
  }
  return absl::InvalidArgumentError(
      absl::StrCat("cannot evaluate ", ir::ToString(e), " at launch"));
}

}  // namespace tessel::runtime

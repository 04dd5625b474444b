#include "src/runtime/strided_views.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "src/runtime/lower.h"

namespace tessel::runtime {
namespace {

char Mode(const TensorView& t) {
  if (IsRowMajor(t)) return 'c';
  return t.strides.back() == 1 || t.shape.back() == 1 ? 'u' : 's';
}

}  // namespace

bool AllRowMajor(const std::vector<TensorView>& tensors) {
  return std::all_of(tensors.begin(), tensors.end(), IsRowMajor);
}

std::string StridePattern(const std::vector<TensorView>& tensors) {
  std::string pattern;
  for (const TensorView& t : tensors) pattern += Mode(t);
  return pattern;
}

absl::StatusOr<std::shared_ptr<KernelImpl>> CompileStridedVariant(
    const ir::Program& base, const CompileOptions& options,
    const std::string& pattern) {
  if (pattern.size() != base.params.size()) {
    return absl::InvalidArgumentError(absl::StrCat("stride pattern ", pattern,
                                                   " for ", base.params.size(),
                                                   " parameters"));
  }
  ir::Program program = base;
  StrideMap strides;
  std::vector<StrideParam> params;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == 'c') continue;
    const ir::Buffer& b = program.params[i];
    StrideParam param{static_cast<int>(i), {}};
    std::vector<ir::Expr> exprs;
    for (int d = 0; d < b->rank(); ++d) {
      if (pattern[i] == 'u' && d == b->rank() - 1) {
        param.strides.emplace_back();  // the constant 1
        exprs.push_back(ir::Expr(1));
        continue;
      }
      ir::Var v(absl::StrCat(b->name, "_stride", d));
      program.dims.push_back(v);
      param.strides.push_back(v);
      exprs.push_back(v);
    }
    strides[b.get()] = std::move(exprs);
    params.push_back(std::move(param));
  }
  absl::StatusOr<std::shared_ptr<KernelImpl>> variant =
      CompileCuda(program, options, std::move(strides));
  if (!variant.ok()) {
    return absl::Status(
        variant.status().code(),
        absl::StrCat(base.name, ": compiling it for strided views (pattern ",
                     pattern, "): ", variant.status().message()));
  }
  (*variant)->stride_params = std::move(params);
  return variant;
}

absl::StatusOr<std::shared_ptr<const KernelImpl>> StridedVariant(
    const KernelImpl& k, const std::string& pattern) {
  if (k.program == nullptr || k.specializations == nullptr) {
    return absl::InternalError(
        absl::StrCat(k.name,
                     ": a launch with strided or unaligned views of a kernel "
                     "with no program to specialize (a tessel bug)"));
  }
  StridedSpecializations& cache = *k.specializations;
  // Held while compiling: threads launching one new pattern compile it once.
  absl::MutexLock lock(&cache.mu);
  if (auto it = cache.by_pattern.find(pattern); it != cache.by_pattern.end())
    return it->second;
  absl::StatusOr<std::shared_ptr<KernelImpl>> variant =
      CompileStridedVariant(*k.program, k.options, pattern);
  if (!variant.ok()) return variant.status();
  cache.by_pattern[pattern] = *variant;
  return std::shared_ptr<const KernelImpl>(*std::move(variant));
}

namespace {

// Marks 's' (one element at a time) each view that misses an alignment
// kernel k needs of it; whether any was marked.
bool MarkUnaligned(const KernelImpl& k, const std::vector<TensorView>& tensors,
                   std::string& pattern) {
  bool marked = false;
  for (const passes::AlignmentRequirement& a : k.alignment) {
    if (pattern[a.param] != 's' && !MeetsAlignment(a, tensors[a.param])) {
      pattern[a.param] = 's';
      marked = true;
    }
  }
  return marked;
}

}  // namespace

absl::StatusOr<std::shared_ptr<const KernelImpl>> VariantForViews(
    const KernelImpl& k, const std::vector<TensorView>& tensors) {
  std::string pattern = StridePattern(tensors);
  const std::string row_major(pattern.size(), 'c');
  if (pattern == row_major && !MarkUnaligned(k, tensors, pattern)) {
    return std::shared_ptr<const KernelImpl>();
  }
  absl::StatusOr<std::shared_ptr<const KernelImpl>> variant =
      StridedVariant(k, pattern);
  // A 'u' view's needs are the variant's own.
  if (variant.ok() && MarkUnaligned(**variant, tensors, pattern)) {
    variant = StridedVariant(k, pattern);
  }
  return variant;
}

void BindStrides(const KernelImpl& variant,
                 const std::vector<TensorView>& tensors, SizeBindings& values) {
  for (const StrideParam& p : variant.stride_params) {
    const TensorView& t = tensors[p.param];
    // A row-major view run one element at a time has its strides implied.
    std::vector<int64_t> strides = t.strides;
    if (strides.empty()) {
      strides.assign(t.shape.size(), 1);
      for (int d = static_cast<int>(t.shape.size()) - 2; d >= 0; --d)
        strides[d] = strides[d + 1] * t.shape[d + 1];
    }
    for (size_t d = 0; d < p.strides.size(); ++d) {
      if (!p.strides[d].defined()) continue;
      // A dimension of extent 1 is never stepped: any stride does.
      values[p.strides[d].get()] = t.shape[d] == 1 ? 0 : strides[d];
    }
  }
}

}  // namespace tessel::runtime

#include "src/interp/interpreter.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <map>
#include <memory>
#include <mutex>
#include <numeric>
#include <string>
#include <thread>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/interp/compiler.h"
#include "src/interp/status_macros.h"
#include "src/interp/tile_ops.h"
#include "src/ir/limits.h"
#include "src/ir/op.h"
#include "src/ir/printer.h"

namespace tessel::interp {

void Fail(Frame& f, const Site& site, absl::StatusCode code,
          const std::string& message) {
  if (f.failed) return;
  f.failed = true;
  f.status =
      absl::Status(code, absl::StrCat(site.op, " at ", ir::FormatLoc(site.loc),
                                      ": ", message, " (block (",
                                      absl::StrJoin(f.block, ", "), "))"));
}

std::string ElementName(const BufferInstance& b,
                        const std::vector<int64_t>& index) {
  return absl::StrCat(b.node->name, "[", absl::StrJoin(index, ", "), "]");
}

absl::StatusOr<std::shared_ptr<const Executable>> Compile(
    const ir::Program& program) {
  auto exe = std::make_shared<Executable>();
  Compiler compiler(exe.get());
  INTERP_RETURN_IF_ERROR(compiler.CompileProgram(program));
  return std::shared_ptr<const Executable>(std::move(exe));
}

namespace {

std::string Describe(const Executable& exe, size_t i) {
  return absl::StrCat("argument ", i, " ('",
                      exe.buffers[exe.param_slots[i]].node->name, "')");
}

std::string ExpectedShape(const ir::BufferNode* node) {
  std::vector<std::string> dims;
  for (const ir::Expr& d : node->shape) {
    if (const auto* v = d.As<ir::VarNode>()) {
      dims.push_back(v->name);
    } else if (std::optional<int64_t> c = ir::AsConstInt(d)) {
      dims.push_back(absl::StrCat(*c));
    } else {
      dims.push_back(ir::ToString(d));
    }
  }
  return absl::StrCat(DtypeName(node->dtype), "[", absl::StrJoin(dims, ", "),
                      "]");
}

std::string TypeString(const TensorRef& t) {
  return absl::StrCat(DtypeName(t.dtype), "[", absl::StrJoin(t.shape, ", "),
                      "]");
}

int64_t NumElements(const TensorRef& t) {
  int64_t n = 1;
  for (int64_t d : t.shape) n *= d;
  return n;
}

absl::Status CheckCount(const Executable& exe, size_t count) {
  const size_t n = exe.param_slots.size();
  if (count == n) return absl::OkStatus();
  std::vector<std::string> names;
  for (int slot : exe.param_slots)
    names.push_back(exe.buffers[slot].node->name);
  return absl::InvalidArgumentError(
      absl::StrCat("program '", exe.name, "' takes ", n, " tensors (",
                   absl::StrJoin(names, ", "), "), got ", count));
}

// Binds the symbolic sizes and the global tensors of `proto` from args.
absl::Status BindArguments(const Executable& exe,
                           const std::vector<TensorRef>& args, Frame& proto) {
  INTERP_RETURN_IF_ERROR(CheckCount(exe, args.size()));
  const size_t n = args.size();
  std::vector<bool> bound(exe.num_vars, false);
  std::map<int, std::string> bound_by;
  for (size_t i = 0; i < n; ++i) {
    const BufferInstance& param = exe.buffers[exe.param_slots[i]];
    const TensorRef& t = args[i];
    if (absl::c_any_of(t.shape, [](int64_t d) { return d < 0; })) {
      return absl::InvalidArgumentError(absl::StrCat(
          Describe(exe, i), " has a negative dimension: ", TypeString(t)));
    }
    if (t.data == nullptr && NumElements(t) > 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(Describe(exe, i), " has no data (a null pointer)"));
    }
    const int rank = static_cast<int>(t.shape.size());
    if (t.dtype != param.dtype || rank != param.node->rank()) {
      return absl::InvalidArgumentError(
          absl::StrCat(Describe(exe, i), " is ", TypeString(t), ", expected ",
                       ExpectedShape(param.node)));
    }
    for (int d = 0; d < rank; ++d) {
      const int slot = exe.param_dim_vars[i][d];
      if (slot < 0 || bound[slot]) continue;
      bound[slot] = true;
      proto.vars[slot] = t.shape[d];
      bound_by[slot] = absl::StrCat(Describe(exe, i), " dimension ", d);
    }
  }
  for (size_t k = 0; k < exe.dim_slots.size(); ++k) {
    if (!bound[exe.dim_slots[k]]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "symbolic size '", exe.program.dims[k].name(), "' of program '",
          exe.name,
          "' is not the whole dimension of any parameter, so no argument "
          "binds it"));
    }
  }
  for (size_t i = 0; i < n; ++i) {
    const TensorRef& t = args[i];
    for (size_t d = 0; d < t.shape.size(); ++d) {
      const int64_t expected = exe.param_shapes[i][d](proto);
      if (proto.failed) return proto.status;
      if (expected != t.shape[d]) {
        const int slot = exe.param_dim_vars[i][d];
        std::string why;
        if (slot >= 0) {
          why = absl::StrCat(
              " (", exe.program.params[i]->shape[d].As<ir::VarNode>()->name,
              " = ", expected, " from ", bound_by[slot], ")");
        }
        return absl::InvalidArgumentError(
            absl::StrCat(Describe(exe, i), " is ", TypeString(t), ", expected ",
                         ExpectedShape(exe.buffers[exe.param_slots[i]].node),
                         ": dimension ", d, " must be ", expected, why));
      }
    }
  }
  for (size_t i = 0; i < n; ++i) {
    BufferInstance& b = proto.buffers[exe.param_slots[i]];
    const TensorRef& t = args[i];
    b.shape = t.shape;
    if (!t.strides.empty()) {
      if (t.strides.size() != t.shape.size()) {
        return absl::InvalidArgumentError(
            absl::StrCat(Describe(exe, i), " has ", t.strides.size(),
                         " strides for ", t.shape.size(), " dimensions"));
      }
      b.strides = t.strides;
    } else {
      b.strides.assign(b.shape.size(), 1);
      for (int d = static_cast<int>(b.shape.size()) - 2; d >= 0; --d) {
        b.strides[d] = b.strides[d + 1] * b.shape[d + 1];
      }
    }
    b.size = NumElements(t);
    b.raw = t.data;
  }
  return absl::OkStatus();
}

// The i-th block a program with tickets runs: i * stride + offset modulo
// the block count, stride coprime to it and near 0.618 of it (a spread-out
// permutation, the same on every run); reversed for one or two blocks.
int64_t BlockOrder(int64_t i, int64_t blocks) {
  if (blocks <= 2) return blocks - 1 - i;
  int64_t stride = std::max<int64_t>(1, blocks * 618 / 1000);
  while (std::gcd(stride, blocks) != 1) ++stride;
  return (i * stride + blocks / 3) % blocks;
}

void SetBlock(const CompiledKernel& k, const std::vector<int64_t>& grid,
              int64_t linear, Frame& f) {
  f.block.resize(grid.size());
  for (size_t d = 0; d < grid.size(); ++d) {
    f.block[d] = linear % grid[d];
    linear /= grid[d];
    f.vars[k.block_var_slots[d]] = f.block[d];
  }
}

absl::Status RunKernel(const Executable& exe, const CompiledKernel& k,
                       Frame& proto, const RunOptions& options) {
  std::vector<int64_t> grid;
  int64_t blocks = 1;
  for (const IntFn& g : k.grid) {
    const int64_t extent = g(proto);
    if (proto.failed) return proto.status;
    const int64_t most = ir::kMaxGridDim[std::min<size_t>(grid.size(), 2)];
    if (extent < 0 || extent > most) {
      // The GPU could not launch it either (and a product of such dims
      // overflows the block count).
      return absl::InvalidArgumentError(absl::StrCat(
          "kernel at ", ir::FormatLoc(k.site.loc), ": grid dimension ",
          grid.size(), " is ", extent,
          extent < 0 ? "" : absl::StrCat("; CUDA's grid limit is ", most)));
    }
    grid.push_back(extent);
    blocks *= extent;
  }
  if (blocks == 0) return absl::OkStatus();
  proto.threads = k.threads;
  proto.print = options.print;

  int workers = options.num_threads > 0
                    ? options.num_threads
                    : static_cast<int>(std::thread::hardware_concurrency());
  workers = static_cast<int>(std::clamp<int64_t>(workers, 1, blocks));
  if (exe.serial_only) workers = 1;
  // Threaded runs keep one atomic log per block (below); past this many
  // blocks that bookkeeping alone would exhaust memory, so run in order.
  constexpr int64_t kMaxLoggedBlocks = int64_t{1} << 22;
  if (blocks > kMaxLoggedBlocks) workers = 1;

  if (workers == 1) {
    Frame f = proto;
    for (int64_t b = 0; b < blocks; ++b) {
      SetBlock(k, grid, exe.takes_tickets ? BlockOrder(b, blocks) : b, f);
      k.body(f);
      if (f.failed) return f.status;
    }
    return absl::OkStatus();
  }

  // Threaded: blocks are taken in order; once a block fails, later blocks
  // are skipped but earlier ones finish, so the error reported is the one a
  // serial run would report.
  std::vector<std::vector<AtomicRecord>> logs(blocks);
  std::atomic<int64_t> next{0};
  std::atomic<int64_t> first_failed{std::numeric_limits<int64_t>::max()};
  std::mutex mu;
  std::map<int64_t, absl::Status> errors;
  auto work = [&] {
    Frame f = proto;
    for (;;) {
      const int64_t b = next.fetch_add(1);
      if (b >= blocks || b > first_failed.load()) return;
      SetBlock(k, grid, b, f);
      f.atomic_log = &logs[b];
      k.body(f);
      if (f.failed) {
        std::lock_guard<std::mutex> lock(mu);
        errors.emplace(b, f.status);
        int64_t cur = first_failed.load();
        while (b < cur && !first_failed.compare_exchange_weak(cur, b)) {
        }
        return;
      }
    }
  };
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) threads.emplace_back(work);
  for (std::thread& t : threads) t.join();
  if (!errors.empty()) return errors.begin()->second;
  for (const std::vector<AtomicRecord>& log : logs) {
    for (const AtomicRecord& r : log) {
      ApplyAtomic(proto.buffers[r.slot], r.index, r.op, r.value, r.int_value);
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status Run(const Executable& exe, std::vector<HostTensor*> args,
                 const RunOptions& options) {
  INTERP_RETURN_IF_ERROR(CheckCount(exe, args.size()));
  std::vector<TensorRef> refs;
  refs.reserve(args.size());
  for (size_t i = 0; i < args.size(); ++i) {
    HostTensor* t = args[i];
    if (t == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat(Describe(exe, i), " is null"));
    }
    if (!t->status().ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          Describe(exe, i), " is not a valid tensor: ", t->status().message()));
    }
    refs.push_back({t->dtype(), t->shape(), t->data()});
  }
  return RunOnRefs(exe, refs, options);
}

absl::Status RunOnRefs(const Executable& exe,
                       const std::vector<TensorRef>& args,
                       const RunOptions& options) {
  Frame proto;
  proto.vars.assign(exe.num_vars, 0);
  proto.buffers = exe.buffers;
  INTERP_RETURN_IF_ERROR(BindArguments(exe, args, proto));
  for (const CompiledKernel& k : exe.kernels) {
    INTERP_RETURN_IF_ERROR(RunKernel(exe, k, proto, options));
  }
  return absl::OkStatus();
}

absl::Status Run(const ir::Program& program, std::vector<HostTensor*> args,
                 const RunOptions& options) {
  INTERP_ASSIGN_OR_RETURN(std::shared_ptr<const Executable> exe,
                          Compile(program));
  return Run(*exe, std::move(args), options);
}

}  // namespace tessel::interp

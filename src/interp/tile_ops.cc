#include "src/interp/tile_ops.h"
#include "src/ir/tile_op_rules.h"

#include <cmath>
#include <cstdlib>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/interp/numeric.h"

namespace tessel::interp {
namespace {

std::vector<int> NonUnitDims(const Box& box) {
  std::vector<int> dims;
  for (int d = 0; d < static_cast<int>(box.extent.size()); ++d) {
    if (box.extent[d] != 1) dims.push_back(d);
  }
  return dims;
}

std::vector<int64_t> Extents(const Box& box, const std::vector<int>& dims) {
  std::vector<int64_t> out;
  for (int d : dims) out.push_back(box.extent[d]);
  return out;
}

// "A[0:128, 32:64]" (half-open ranges, as in TileLang).
std::string BoxString(const Box& box) {
  std::vector<std::string> parts;
  for (size_t d = 0; d < box.start.size(); ++d) {
    parts.push_back(
        absl::StrCat(box.start[d], ":", box.start[d] + box.extent[d]));
  }
  return absl::StrCat(box.buffer->node->name, "[", absl::StrJoin(parts, ", "),
                      "]");
}

std::string ShapeString(const std::vector<int64_t>& shape) {
  return absl::StrCat("[", absl::StrJoin(shape, ", "), "]");
}

int64_t Product(const std::vector<int64_t>& v) {
  int64_t n = 1;
  for (int64_t x : v) n *= x;
  return n;
}

// Walks the positions of a box in row-major order of its non-unit dims, so
// that two boxes whose squeezed extents agree are walked in lockstep.
class BoxWalker {
 public:
  BoxWalker(const Box& box, std::vector<int> dims)
      : box_(box), dims_(std::move(dims)), coord_(box.start) {}

  const std::vector<int64_t>& coord() const { return coord_; }
  bool InBounds() const {
    const BufferInstance& b = *box_.buffer;
    for (size_t d = 0; d < coord_.size(); ++d) {
      if (coord_[d] < 0 || coord_[d] >= b.shape[d]) return false;
    }
    return true;
  }
  int64_t Flat() const {
    int64_t flat = 0;
    for (size_t d = 0; d < coord_.size(); ++d) {
      flat += coord_[d] * box_.buffer->strides[d];
    }
    return flat;
  }
  void Advance() {
    for (int k = static_cast<int>(dims_.size()) - 1; k >= 0; --k) {
      const int d = dims_[k];
      if (++coord_[d] < box_.start[d] + box_.extent[d]) return;
      coord_[d] = box_.start[d];
    }
  }

 private:
  const Box& box_;
  std::vector<int> dims_;
  std::vector<int64_t> coord_;
};

void FailUninitialized(Frame& f, const Site& site, const BufferInstance& b,
                       const std::vector<int64_t>& coord) {
  Fail(f, site, absl::StatusCode::kFailedPrecondition,
       absl::StrCat("reads ", ElementName(b, coord),
                    " before anything wrote it"));
}

std::vector<int64_t> Unflatten(const BufferInstance& b, int64_t flat) {
  std::vector<int64_t> index(b.shape.size());
  for (size_t d = 0; d < b.shape.size(); ++d) {
    index[d] = b.strides[d] == 0 ? 0 : (flat / b.strides[d]) % b.shape[d];
  }
  return index;
}

bool CheckInitializedFlat(Frame& f, const Site& site, const BufferInstance& b,
                          int64_t flat) {
  if (b.Initialized(flat)) return true;
  FailUninitialized(f, site, b, Unflatten(b, flat));
  return false;
}

// Matching squeezed extents of two boxes, or a failure naming both.
bool SqueezedMatch(Frame& f, const Site& site, const Box& a, const Box& b,
                   std::vector<int>* a_dims, std::vector<int>* b_dims) {
  *a_dims = NonUnitDims(a);
  *b_dims = NonUnitDims(b);
  const std::vector<int64_t> ea = Extents(a, *a_dims);
  const std::vector<int64_t> eb = Extents(b, *b_dims);
  if (ea == eb) return true;
  Fail(f, site, absl::StatusCode::kInvalidArgument,
       absl::StrCat(BoxString(a), " and ", BoxString(b),
                    " differ in shape: ", ShapeString(ea), " vs ",
                    ShapeString(eb), " (unit dimensions dropped)"));
  return false;
}

// A 2-D view of a gemm operand: the two dims that carry rows and columns.
struct MatrixView {
  int row_dim = -1;  // -1: a virtual unit dimension
  int col_dim = -1;
  int64_t rows = 1;
  int64_t cols = 1;
};

bool ViewAsMatrix(Frame& f, const Site& site, const Box& box, const char* role,
                  MatrixView* view) {
  const int rank = static_cast<int>(box.extent.size());
  std::vector<int> dims = NonUnitDims(box);
  if (dims.size() > 2 || rank == 0) {
    Fail(f, site, absl::StatusCode::kInvalidArgument,
         absl::StrCat("operand ", role, " ", BoxString(box),
                      " is not a matrix (more than 2 non-unit dimensions)"));
    return false;
  }
  bool within_last_two = true;
  for (int d : dims) within_last_two &= d >= rank - 2;
  if (within_last_two) {
    view->row_dim = rank >= 2 ? rank - 2 : -1;
    view->col_dim = rank - 1;
  } else if (dims.size() == 2) {
    view->row_dim = dims[0];
    view->col_dim = dims[1];
  } else {
    view->row_dim = dims[0];
    view->col_dim = rank - 1;
  }
  view->rows = view->row_dim < 0 ? 1 : box.extent[view->row_dim];
  view->cols = box.extent[view->col_dim];
  return true;
}

// Reads a matrix operand into a dense array, element (r, c) at r * cols + c
// (or transposed, at c * rows + r, when `transposed`).
bool Gather(Frame& f, const Site& site, const Box& box, const MatrixView& v,
            bool transposed, std::vector<double>* out) {
  const BufferInstance& b = *box.buffer;
  out->resize(v.rows * v.cols);
  int64_t base = 0;
  for (size_t d = 0; d < box.start.size(); ++d)
    base += box.start[d] * b.strides[d];
  const int64_t rs = v.row_dim < 0 ? 0 : b.strides[v.row_dim];
  const int64_t cs = b.strides[v.col_dim];
  for (int64_t r = 0; r < v.rows; ++r) {
    for (int64_t c = 0; c < v.cols; ++c) {
      const int64_t flat = base + r * rs + c * cs;
      if (!CheckInitializedFlat(f, site, b, flat)) return false;
      (*out)[transposed ? c * v.rows + r : r * v.cols + c] = b.Get(flat);
    }
  }
  return true;
}

// The combiner of a reduction (ir::ReduceCombiner), on the host.
double Combine(ir::ReduceKind kind, double acc, double x) {
  switch (ir::ReduceCombiner(kind)) {
    case ir::BinaryOp::kMax:
      return MaxNum(acc, x);
    case ir::BinaryOp::kMin:
      return MinNum(acc, x);
    default:
      return acc + x;
  }
}

int64_t CombineInt(ir::ReduceKind kind, int64_t acc, int64_t x) {
  switch (ir::ReduceCombiner(kind)) {
    case ir::BinaryOp::kMax:
      return std::max(acc, x);
    case ir::BinaryOp::kMin:
      return std::min(acc, x);
    default:
      return static_cast<int64_t>(static_cast<uint64_t>(acc) +
                                  static_cast<uint64_t>(x));
  }
}

// outer x len x inner split of a buffer around `dim`.
struct Lines {
  int64_t outer = 1, len = 1, inner = 1;
};

Lines SplitAround(const std::vector<int64_t>& shape, int dim) {
  Lines l;
  for (int d = 0; d < static_cast<int>(shape.size()); ++d) {
    if (d < dim) l.outer *= shape[d];
    if (d == dim) l.len = shape[d];
    if (d > dim) l.inner *= shape[d];
  }
  return l;
}

}  // namespace

bool CheckBox(Frame& f, const Site& site, const Box& box, const char* role) {
  const BufferInstance& b = *box.buffer;
  for (size_t d = 0; d < box.extent.size(); ++d) {
    if (box.extent[d] < 0) {
      Fail(f, site, absl::StatusCode::kInvalidArgument,
           absl::StrCat(role, " region ", BoxString(box),
                        " has a negative extent in dimension ", d));
      return false;
    }
  }
  if (b.global) return true;  // the boundary rule covers global regions
  for (size_t d = 0; d < box.extent.size(); ++d) {
    if (box.extent[d] == 0) continue;
    if (box.start[d] < 0 || box.start[d] + box.extent[d] > b.shape[d]) {
      Fail(f, site, absl::StatusCode::kOutOfRange,
           absl::StrCat(role, " region ", BoxString(box),
                        " is out of bounds of ", b.node->name,
                        ShapeString(b.shape), " in dimension ", d));
      return false;
    }
  }
  return true;
}

void RunCopy(Frame& f, const Site& site, const Box& src, const Box& dst) {
  if (!CheckBox(f, site, src, "source") ||
      !CheckBox(f, site, dst, "destination")) {
    return;
  }
  std::vector<int> src_dims, dst_dims;
  if (!SqueezedMatch(f, site, src, dst, &src_dims, &dst_dims)) return;
  const int64_t total = Product(Extents(src, src_dims));
  BufferInstance& s = *src.buffer;
  BufferInstance& d = *dst.buffer;
  const bool int_path = s.is_int && d.is_int;
  BoxWalker ws(src, src_dims), wd(dst, dst_dims);
  for (int64_t n = 0; n < total; ++n, ws.Advance(), wd.Advance()) {
    if (d.global && !wd.InBounds()) continue;  // boundary rule: no store
    const bool src_in = !s.global || ws.InBounds();
    const int64_t sf = src_in ? ws.Flat() : 0;
    if (src_in && !s.Initialized(sf)) {
      FailUninitialized(f, site, s, ws.coord());
      return;
    }
    const int64_t df = wd.Flat();
    if (int_path) {
      d.SetInt(df, src_in ? s.GetInt(sf) : 0);
    } else {
      d.Set(df, src_in ? s.Get(sf) : 0.0);
    }
  }
}

void RunGemm(Frame& f, const Site& site, const Box& a, const Box& b,
             const Box& c, bool transpose_a, bool transpose_b,
             bool clear_accum) {
  if (!CheckBox(f, site, a, "A") || !CheckBox(f, site, b, "B") ||
      !CheckBox(f, site, c, "C")) {
    return;
  }
  for (const Box* box : {&a, &b, &c}) {
    if (box->buffer->global) {
      Fail(f, site, absl::StatusCode::kInvalidArgument,
           absl::StrCat("gemm operand ", BoxString(*box),
                        " is a global tensor; copy it to shared memory or a "
                        "fragment first"));
      return;
    }
  }
  MatrixView va, vb, vc;
  if (!ViewAsMatrix(f, site, a, "A", &va) ||
      !ViewAsMatrix(f, site, b, "B", &vb) ||
      !ViewAsMatrix(f, site, c, "C", &vc)) {
    return;
  }
  const int64_t m = transpose_a ? va.cols : va.rows;
  const int64_t k = transpose_a ? va.rows : va.cols;
  const int64_t kb = transpose_b ? vb.cols : vb.rows;
  const int64_t n = transpose_b ? vb.rows : vb.cols;
  if (k != kb || vc.rows != m || vc.cols != n) {
    Fail(f, site, absl::StatusCode::kInvalidArgument,
         absl::StrCat("shapes do not agree: A ", BoxString(a),
                      transpose_a ? " (transposed)" : "", " is ", m, "x", k,
                      ", B ", BoxString(b), transpose_b ? " (transposed)" : "",
                      " is ", kb, "x", n, ", C ", BoxString(c), " is ", vc.rows,
                      "x", vc.cols));
    return;
  }
  // A as [m][k] and B as [n][k], so the inner product walks both densely.
  std::vector<double> am, bm;
  if (!Gather(f, site, a, va, transpose_a, &am)) return;
  if (!Gather(f, site, b, vb, !transpose_b, &bm)) return;
  BufferInstance& cb = *c.buffer;
  int64_t c_base = 0;
  for (size_t d = 0; d < c.start.size(); ++d) {
    c_base += c.start[d] * cb.strides[d];
  }
  const int64_t crs = vc.row_dim < 0 ? 0 : cb.strides[vc.row_dim];
  const int64_t ccs = cb.strides[vc.col_dim];
  const DataType t = cb.dtype;
  for (int64_t i = 0; i < m; ++i) {
    const double* arow = am.data() + i * k;
    for (int64_t j = 0; j < n; ++j) {
      const double* bcol = bm.data() + j * k;
      const int64_t flat = c_base + i * crs + j * ccs;
      if (!clear_accum && !CheckInitializedFlat(f, site, cb, flat)) return;
      if (t == DataType::kF32) {
        // Products and the running sum in f32, as the tensor cores accumulate.
        float acc = clear_accum ? 0.0f : static_cast<float>(cb.Get(flat));
        for (int64_t p = 0; p < k; ++p) {
          acc += static_cast<float>(arow[p] * bcol[p]);
        }
        cb.Set(flat, acc);
      } else if (t == DataType::kF64) {
        double acc = clear_accum ? 0.0 : cb.Get(flat);
        for (int64_t p = 0; p < k; ++p) acc += arow[p] * bcol[p];
        cb.Set(flat, acc);
      } else if (cb.is_int) {
        uint64_t acc = clear_accum ? 0 : static_cast<uint64_t>(cb.GetInt(flat));
        for (int64_t p = 0; p < k; ++p) {
          acc += static_cast<uint64_t>(static_cast<int64_t>(arow[p])) *
                 static_cast<uint64_t>(static_cast<int64_t>(bcol[p]));
        }
        cb.SetInt(flat, static_cast<int64_t>(acc));
      } else {
        // Narrow accumulators (f16 ...): every product and sum rounded.
        double acc = clear_accum ? 0.0 : cb.Get(flat);
        for (int64_t p = 0; p < k; ++p) {
          acc = RoundToDtype(t, acc + RoundToDtype(t, arow[p] * bcol[p]));
        }
        cb.Set(flat, acc);
      }
    }
  }
}

void RunFill(Frame& f, const Site& site, const Box& dst, double value,
             int64_t int_value) {
  if (!CheckBox(f, site, dst, "destination")) return;
  const std::vector<int> dims = NonUnitDims(dst);
  const int64_t total = Product(Extents(dst, dims));
  BufferInstance& d = *dst.buffer;
  BoxWalker w(dst, dims);
  for (int64_t n = 0; n < total; ++n, w.Advance()) {
    if (d.global && !w.InBounds()) continue;
    if (d.is_int) {
      d.SetInt(w.Flat(), int_value);
    } else {
      d.Set(w.Flat(), value);
    }
  }
}

void RunReduce(Frame& f, const Site& site, BufferInstance& src,
               BufferInstance& dst, ir::ReduceKind kind, int dim, bool clear) {
  const int rank = static_cast<int>(src.shape.size());
  if (dim < 0 || dim >= rank) {
    Fail(f, site, absl::StatusCode::kInvalidArgument,
         absl::StrCat("dimension ", dim, " out of range for ", src.node->name,
                      ShapeString(src.shape)));
    return;
  }
  std::vector<int64_t> expected;
  for (int d = 0; d < rank; ++d) {
    if (d != dim) expected.push_back(src.shape[d]);
  }
  const bool shape_ok =
      expected.empty() ? dst.size == 1 : dst.shape == expected;
  if (!shape_ok) {
    Fail(
        f, site, absl::StatusCode::kInvalidArgument,
        absl::StrCat("reducing ", src.node->name, ShapeString(src.shape),
                     " over dimension ", dim, " gives ", ShapeString(expected),
                     ", but ", dst.node->name, " is ", ShapeString(dst.shape)));
    return;
  }
  const Lines l = SplitAround(src.shape, dim);
  const DataType t = dst.dtype;
  const bool abs = ir::ReduceTakesAbs(kind);
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t i = 0; i < l.inner; ++i) {
      const int64_t out = o * l.inner + i;
      if (!clear && !CheckInitializedFlat(f, site, dst, out)) return;
      if (dst.is_int) {
        int64_t acc = 0;
        for (int64_t r = 0; r < l.len; ++r) {
          const int64_t flat = (o * l.len + r) * l.inner + i;
          if (!CheckInitializedFlat(f, site, src, flat)) return;
          int64_t x = src.GetInt(flat);
          if (abs) x = x < 0 ? -x : x;
          acc = r == 0 ? WrapInt(t, x) : WrapInt(t, CombineInt(kind, acc, x));
        }
        if (!clear) acc = CombineInt(kind, dst.GetInt(out), acc);
        dst.SetInt(out, acc);
      } else {
        // Accumulated in dst's dtype, one rounding per step.
        double acc = 0;
        for (int64_t r = 0; r < l.len; ++r) {
          const int64_t flat = (o * l.len + r) * l.inner + i;
          if (!CheckInitializedFlat(f, site, src, flat)) return;
          double x = src.Get(flat);
          if (abs) x = std::fabs(x);
          acc = RoundToDtype(t, r == 0 ? x : Combine(kind, acc, x));
        }
        if (!clear) acc = Combine(kind, dst.Get(out), acc);
        dst.Set(out, acc);
      }
    }
  }
}

void RunCumsum(Frame& f, const Site& site, BufferInstance& src,
               BufferInstance& dst, int dim, bool reverse) {
  const int rank = static_cast<int>(src.shape.size());
  if (dim < 0 || dim >= rank) {
    Fail(f, site, absl::StatusCode::kInvalidArgument,
         absl::StrCat("dimension ", dim, " out of range for ", src.node->name,
                      ShapeString(src.shape)));
    return;
  }
  if (dst.shape != src.shape) {
    Fail(f, site, absl::StatusCode::kInvalidArgument,
         absl::StrCat(dst.node->name, ShapeString(dst.shape),
                      " does not have the shape of ", src.node->name,
                      ShapeString(src.shape)));
    return;
  }
  const Lines l = SplitAround(src.shape, dim);
  const DataType t = dst.dtype;
  for (int64_t o = 0; o < l.outer; ++o) {
    for (int64_t i = 0; i < l.inner; ++i) {
      double acc = 0;
      int64_t iacc = 0;
      for (int64_t s = 0; s < l.len; ++s) {
        const int64_t r = reverse ? l.len - 1 - s : s;
        const int64_t flat = (o * l.len + r) * l.inner + i;
        if (!CheckInitializedFlat(f, site, src, flat)) return;
        if (dst.is_int) {
          iacc = WrapInt(
              t, CombineInt(ir::ReduceKind::kSum, iacc, src.GetInt(flat)));
          dst.SetInt(flat, iacc);
        } else {
          acc = RoundToDtype(t, acc + src.Get(flat));
          dst.Set(flat, acc);
        }
      }
    }
  }
}

void ApplyAtomic(BufferInstance& dst, int64_t index, ir::AtomicOp op,
                 double value, int64_t int_value) {
  if (dst.is_int) {
    const int64_t old = dst.GetInt(index);
    int64_t v = int_value;
    switch (op) {
      case ir::AtomicOp::kAdd:
        v = static_cast<int64_t>(static_cast<uint64_t>(old) +
                                 static_cast<uint64_t>(int_value));
        break;
      case ir::AtomicOp::kMax:
        v = std::max(old, int_value);
        break;
      case ir::AtomicOp::kMin:
        v = std::min(old, int_value);
        break;
    }
    dst.SetInt(index, v);
    return;
  }
  const double old = dst.Get(index);
  double v = value;
  switch (op) {
    case ir::AtomicOp::kAdd:
      v = old + value;
      break;
    case ir::AtomicOp::kMax:
      v = MaxNum(old, value);
      break;
    case ir::AtomicOp::kMin:
      v = MinNum(old, value);
      break;
  }
  dst.Set(index, v);  // one rounding to dst's dtype, as the hardware's RMW
}

namespace {

// Applies (or logs, for global dst in a threaded run) one atomic update.
void AtomicUpdate(Frame& f, const Site& site, int slot, BufferInstance& d,
                  int64_t flat, ir::AtomicOp op, double value,
                  int64_t int_value) {
  if (d.is_int) {
    value = 0;
  } else {
    value = RoundToDtype(d.dtype, value);  // converted to dst's dtype first
  }
  if (d.global && f.atomic_log != nullptr) {
    f.atomic_log->push_back({slot, flat, op, value, int_value});
  } else {
    ApplyAtomic(d, flat, op, value, int_value);
  }
}

}  // namespace

void RunAtomicTile(Frame& f, const Site& site, ir::AtomicOp op, const Box& dst,
                   const Box& src) {
  if (!CheckBox(f, site, src, "source") ||
      !CheckBox(f, site, dst, "destination")) {
    return;
  }
  std::vector<int> src_dims, dst_dims;
  if (!SqueezedMatch(f, site, src, dst, &src_dims, &dst_dims)) return;
  const int64_t total = Product(Extents(src, src_dims));
  BufferInstance& s = *src.buffer;
  BufferInstance& d = *dst.buffer;
  BoxWalker ws(src, src_dims), wd(dst, dst_dims);
  for (int64_t n = 0; n < total; ++n, ws.Advance(), wd.Advance()) {
    if (d.global && !wd.InBounds()) continue;  // boundary rule
    const bool src_in = !s.global || ws.InBounds();
    const int64_t sf = src_in ? ws.Flat() : 0;
    if (src_in && !s.Initialized(sf)) {
      FailUninitialized(f, site, s, ws.coord());
      return;
    }
    const int64_t df = wd.Flat();
    if (!d.Initialized(df)) {
      FailUninitialized(f, site, d, wd.coord());
      return;
    }
    const double v = src_in ? s.Get(sf) : 0.0;
    int64_t iv = 0;
    if (d.is_int)
      iv = src_in ? (s.is_int ? s.GetInt(sf) : FloatToInt(d.dtype, v)) : 0;
    AtomicUpdate(f, site, dst.slot, d, df, op, v, iv);
  }
}

void RunAtomicElement(Frame& f, const Site& site, ir::AtomicOp op,
                      const Box& dst, double value, int64_t int_value) {
  BufferInstance& d = *dst.buffer;
  for (size_t k = 0; k < dst.extent.size(); ++k) {
    if (dst.extent[k] != 1) {
      Fail(f, site, absl::StatusCode::kInvalidArgument,
           absl::StrCat("the element form needs one element, got ",
                        BoxString(dst)));
      return;
    }
  }
  for (size_t k = 0; k < dst.extent.size(); ++k) {
    if (dst.start[k] >= 0 && dst.start[k] < d.shape[k]) continue;
    // Boundary rule: an element outside a global tensor is not updated.
    if (d.global) return;
    Fail(f, site, absl::StatusCode::kOutOfRange,
         absl::StrCat("element ", ElementName(d, dst.start),
                      " is out of bounds of ", d.node->name,
                      ShapeString(d.shape)));
    return;
  }
  int64_t flat = 0;
  for (size_t k = 0; k < dst.start.size(); ++k)
    flat += dst.start[k] * d.strides[k];
  if (!d.Initialized(flat)) {
    FailUninitialized(f, site, d, dst.start);
    return;
  }
  AtomicUpdate(f, site, dst.slot, d, flat, op, value, int_value);
}

}  // namespace tessel::interp

#include "src/passes/fragment_layout.h"

#include <cmath>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/ir/op.h"

namespace tessel::passes {

FragmentLayout FragmentLayout::Mma(std::vector<int64_t> shape, int threads,
                                   int warps_m, int warps_n) {
  FragmentLayout l;
  l.kind_ = Kind::kMma;
  l.shape_ = std::move(shape);
  l.threads_ = threads;
  l.warps_m_ = warps_m;
  l.warps_n_ = warps_n;
  l.mi_ = static_cast<int>(l.shape_[0] / warps_m / 16);
  l.ni_ = static_cast<int>(l.shape_[1] / warps_n / 8);
  return l;
}

FragmentLayout FragmentLayout::Wgmma(std::vector<int64_t> shape, int threads) {
  FragmentLayout l = Mma(std::move(shape), threads, threads / 32, 1);
  l.warpgroup_rows_ = l.mi_ > 1;
  return l;
}

FragmentLayout FragmentLayout::WgmmaCols(std::vector<int64_t> shape,
                                         int threads) {
  FragmentLayout l = Mma(std::move(shape), threads, 4, threads / 128);
  l.warpgroup_cols_ = true;
  return l;
}

ir::Expr FragmentLayout::WarpCol(const ir::Expr& warp) const {
  return warpgroup_cols_ ? warp / 4 : warp % warps_n_;
}

FragmentLayout FragmentLayout::Padded(std::vector<int64_t> shape, int threads) {
  const int warps = threads / 32;
  FragmentLayout l;
  l.kind_ = Kind::kMma;
  l.shape_ = std::move(shape);
  l.threads_ = threads;
  l.warps_m_ = warps;
  l.warps_n_ = 1;
  l.padded_rows_ = 16 * warps;
  l.mi_ = 1;
  l.ni_ = static_cast<int>(l.shape_[1] / 8);
  return l;
}

ir::Expr FragmentLayout::TileRow(const ir::Expr& warp,
                                 const ir::Expr& mi) const {
  if (warpgroup_cols_) return mi * 64 + warp % 4 * 16;
  if (warpgroup_rows_) {
    int group_rows = static_cast<int>(shape_[0] / (warps_m_ / 4));
    return warp / 4 * group_rows + mi * 64 + warp % 4 * 16;
  }
  return warp / warps_n_ * static_cast<int>(tile_rows() / warps_m_) + mi * 16;
}

FragmentLayout FragmentLayout::Blocked(std::vector<int64_t> shape, int threads,
                                       int vec) {
  FragmentLayout l;
  l.kind_ = Kind::kBlocked;
  l.shape_ = std::move(shape);
  l.threads_ = threads;
  l.vec_ = vec;
  return l;
}

FragmentLayout FragmentLayout::Replicated(std::vector<int64_t> shape,
                                          int threads) {
  FragmentLayout l;
  l.kind_ = Kind::kReplicated;
  l.shape_ = std::move(shape);
  l.threads_ = threads;
  return l;
}

FragmentLayout FragmentLayout::Rows(std::vector<int64_t> shape, int threads,
                                    int vec, int group) {
  FragmentLayout l;
  l.kind_ = Kind::kRows;
  l.shape_ = std::move(shape);
  l.threads_ = threads;
  l.vec_ = vec;
  l.group_ = group;
  return l;
}

std::optional<FragmentLayout> FragmentLayout::ForRowReduce(
    std::vector<int64_t> shape, int threads, int vec) {
  if (shape.size() != 2 || threads % 32 != 0 || shape[0] <= 0) {
    return std::nullopt;
  }
  while (vec > 1 && shape[1] % vec != 0) vec /= 2;
  const int64_t chunks = shape[1] / vec;  // per row
  // The widest power-of-two group that divides both the block and a row's
  // chunks; narrower (down to a warp) while the rows still fill the groups:
  // rows within a warp reduce without shared memory or barriers.
  int group = 1;
  while (threads % (group * 2) == 0 && chunks % (group * 2) == 0) group *= 2;
  while (group > 32 && threads / (group / 2) <= shape[0]) group /= 2;
  return Rows(std::move(shape), threads, vec, group);
}

FragmentLayout FragmentLayout::RowsOf() const {
  FragmentLayout l = *this;
  l.kind_ = kind_ == Kind::kRows ? Kind::kRowStats : Kind::kMmaRows;
  l.shape_ = {shape_[0]};
  return l;
}

FragmentLayout FragmentLayout::ColsOf() const {
  FragmentLayout l = *this;
  l.kind_ = kind_ == Kind::kRows ? Kind::kRowCols : Kind::kMmaCols;
  l.shape_ = {shape_[1]};
  return l;
}

namespace {
int64_t NumElements(const std::vector<int64_t>& s) {
  int64_t n = 1;
  for (int64_t d : s) n *= d;
  return n;
}
}  // namespace

std::vector<int64_t> FragmentLayout::local_shape() const {
  switch (kind_) {
    case Kind::kMma:
      return {mi_, ni_, 4};
    case Kind::kMmaRows:
      return {mi_, 2};
    case Kind::kBlocked: {
      int64_t chunks = NumElements(shape_) / vec_;
      return {(chunks + threads_ - 1) / threads_, vec_};
    }
    case Kind::kReplicated:
      return {NumElements(shape_)};
    case Kind::kRows:
      return {(shape_[0] + row_groups() - 1) / row_groups(),
              shape_[1] / (group_ * vec_), vec_};
    case Kind::kRowStats:
      return {(shape_[0] + row_groups() - 1) / row_groups()};
    case Kind::kMmaCols:
      return {ni_, 2};
    case Kind::kRowCols:
      return {shape_[0] / (group_ * vec_), vec_};
  }
  return {};
}

std::vector<ir::Expr> FragmentLayout::Logical(
    const ir::Expr& tx, const std::vector<ir::Expr>& local) const {
  switch (kind_) {
    case Kind::kMma:
    case Kind::kMmaRows: {
      ir::Expr lane = tx % 32, warp = tx / 32;
      ir::Expr wn = WarpCol(warp);
      ir::Expr h = kind_ == Kind::kMma ? local[2] / 2 : local[1];
      ir::Expr row = TileRow(warp, local[0]) + lane / 4 + h * 8;
      if (kind_ == Kind::kMmaRows) return {row};
      int64_t wtn = shape_[1] / warps_n_;
      ir::Expr col = wn * static_cast<int>(wtn) + local[1] * 8 +
                     (lane % 4) * 2 + local[2] % 2;
      return {row, col};
    }
    case Kind::kBlocked:
    case Kind::kReplicated: {
      ir::Expr p = kind_ == Kind::kReplicated
                       ? local[0]
                       : (local[0] * threads_ + tx) * vec_ + local[1];
      std::vector<ir::Expr> out(shape_.size());
      for (int d = static_cast<int>(shape_.size()) - 1; d >= 0; --d) {
        if (d == 0) {
          out[d] = p;
        } else {
          out[d] = p % static_cast<int>(shape_[d]);
          p = p / static_cast<int>(shape_[d]);
        }
      }
      return out;
    }
    case Kind::kRows:
    case Kind::kRowStats: {
      ir::Expr row = local[0] * row_groups() + tx / group_;
      if (kind_ == Kind::kRowStats) return {row};
      return {row, (local[1] * group_ + tx % group_) * vec_ + local[2]};
    }
    case Kind::kMmaCols: {
      ir::Expr wn = WarpCol(tx / 32);
      int wtn = static_cast<int>(shape_[0] / warps_n_);
      return {wn * wtn + local[0] * 8 + (tx % 32 % 4) * 2 + local[1]};
    }
    case Kind::kRowCols:
      return {(local[0] * group_ + tx % group_) * vec_ + local[1]};
  }
  return {};
}

ir::Expr FragmentLayout::Valid(const ir::Expr& tx,
                               const std::vector<ir::Expr>& local) const {
  if (kind_ == Kind::kRows || kind_ == Kind::kRowStats) {
    if (shape_[0] % row_groups() == 0) return ir::Expr();
    return local[0] * row_groups() + tx / group_ < static_cast<int>(shape_[0]);
  }
  if ((kind_ == Kind::kMma || kind_ == Kind::kMmaRows) && padded_rows_ != 0)
    return Logical(tx, local)[0] < static_cast<int>(shape_[0]);
  if (kind_ != Kind::kBlocked) return ir::Expr();
  int64_t chunks = NumElements(shape_) / vec_;
  if (chunks % threads_ == 0) return ir::Expr();
  return local[0] * threads_ + tx < static_cast<int>(chunks);
}

ir::Expr FragmentLayout::Leader(const ir::Expr& tx) const {
  if (kind_ == Kind::kReplicated) return tx == 0;
  if (kind_ == Kind::kRowStats) {
    return group_ > 1 ? tx % group_ == 0 : ir::Expr();
  }
  if (kind_ == Kind::kRowCols) {
    return row_groups() > 1 ? tx / group_ == 0 : ir::Expr();
  }
  if (kind_ == Kind::kMmaCols) {
    // Lanes 0-3 of the warps of grid row 0.
    if (warpgroup_cols_) return tx % 32 < 4 && tx / 32 % 4 == 0;
    return tx % 32 < 4 && tx / 32 < warps_n_;
  }
  if (kind_ != Kind::kMmaRows) return ir::Expr();
  ir::Expr lead = tx % 4 == 0;
  if (warps_n_ > 1) lead = lead && (WarpCol(tx / 32) == 0);
  return lead;
}

int FragmentLayout::contiguous() const {
  switch (kind_) {
    case Kind::kMma:
      return 2;
    case Kind::kMmaRows:
      return 1;
    case Kind::kBlocked:
      return vec_;
    case Kind::kReplicated:
      return 1;
    case Kind::kRows:
      return vec_;
    case Kind::kRowStats:
      return 1;
    case Kind::kMmaCols:
      return 2;
    case Kind::kRowCols:
      return vec_;
  }
  return 1;
}

bool FragmentLayout::operator==(const FragmentLayout& o) const {
  return kind_ == o.kind_ && shape_ == o.shape_ && threads_ == o.threads_ &&
         warps_m_ == o.warps_m_ && warps_n_ == o.warps_n_ && vec_ == o.vec_ &&
         warpgroup_rows_ == o.warpgroup_rows_ && group_ == o.group_ &&
         padded_rows_ == o.padded_rows_ && warpgroup_cols_ == o.warpgroup_cols_;
}

FragmentLayout::Fields FragmentLayout::fields() const {
  return {kind_,           shape_, threads_,     warps_m_,
          warps_n_,        mi_,    ni_,          vec_,
          warpgroup_rows_, group_, padded_rows_, warpgroup_cols_};
}

FragmentLayout FragmentLayout::FromFields(const Fields& f) {
  FragmentLayout l;
  l.kind_ = f.kind;
  l.shape_ = f.shape;
  l.threads_ = f.threads;
  l.warps_m_ = f.warps_m;
  l.warps_n_ = f.warps_n;
  l.mi_ = f.mi;
  l.ni_ = f.ni;
  l.vec_ = f.vec;
  l.warpgroup_rows_ = f.warpgroup_rows;
  l.group_ = f.group;
  l.padded_rows_ = f.padded_rows;
  l.warpgroup_cols_ = f.warpgroup_cols;
  return l;
}

std::string FragmentLayout::ToString() const {
  std::string shape = absl::StrJoin(shape_, ", ");
  std::string padded =
      padded_rows_ != 0 ? absl::StrCat(" rows padded to ", padded_rows_) : "";
  if (warpgroup_cols_) padded += " warpgroups along N";
  switch (kind_) {
    case Kind::kMma:
      return absl::StrCat(
          warpgroup_rows_ || warpgroup_cols_ ? "wgmma[" : "mma[", shape,
          "] warps ", warps_m_, "x", warps_n_, " local [", mi_, "][", ni_,
          "][4]", padded);
    case Kind::kMmaRows:
      return absl::StrCat(
          warpgroup_rows_ || warpgroup_cols_ ? "wgmma_rows[" : "mma_rows[",
          shape, "] warps ", warps_m_, "x", warps_n_, " local [", mi_, "][2]",
          padded);
    case Kind::kReplicated:
      return absl::StrCat("replicated[", shape, "]");
    case Kind::kMmaCols:
      return absl::StrCat("mma_cols[", shape, "] warps ", warps_m_, "x",
                          warps_n_, " local [", ni_, "][2]");
    case Kind::kRows:
    case Kind::kRowStats:
    case Kind::kRowCols: {
      std::vector<int64_t> l = local_shape();
      const char* name = kind_ == Kind::kRows       ? "rows["
                         : kind_ == Kind::kRowStats ? "row_stats["
                                                    : "row_cols[";
      return absl::StrCat(name, shape, "] vec ", vec_, " group ", group_,
                          " local [", absl::StrJoin(l, "]["), "]");
    }
    case Kind::kBlocked: {
      std::vector<int64_t> l = local_shape();
      return absl::StrCat("blocked[", shape, "] vec ", vec_, " local [", l[0],
                          "][", l[1], "]");
    }
  }
  return "";
}

std::pair<int, int> ChooseWarpGrid(int64_t m, int64_t n, int warps,
                                   int policy) {
  auto fits = [&](int wm, int wn) {
    return wm * wn == warps && m % (16 * wm) == 0 && n % (16 * wn) == 0;
  };
  if (policy == 1 && fits(warps, 1)) return {warps, 1};
  if (policy == 2 && fits(1, warps)) return {1, warps};
  // Square: the warp tile closest to square (ties: more warps along m, as
  // the probe's 4x2 for a 256x128 tile).
  std::pair<int, int> best{0, 0};
  double best_score = 1e30;
  for (int wm = 1; wm <= warps; ++wm) {
    if (warps % wm != 0) continue;
    int wn = warps / wm;
    if (!fits(wm, wn)) continue;
    double ratio = std::fabs(std::log(double(m / wm) / double(n / wn)));
    if (ratio < best_score - 1e-9) {
      best_score = ratio;
      best = {wm, wn};
    }
  }
  return best;
}

}  // namespace tessel::passes

// How a fragment (a block-level register tile) is spread over the threads
// of a block: which thread holds logical element (i, j, ...) and where in
// its local array.
//
//   FragmentLayout acc = FragmentLayout::Mma({128, 128}, 256, 4, 2);
//   acc.local_shape();                    // {2, 8, 4}: float acc[2][8][4]
//   std::vector<ir::Expr> ij = acc.Logical(tx, {mi, ni, e});
//   FragmentLayout m = acc.RowsOf();        // [128] row-wise reduce result
//
// Kinds:
//  - kMma: the mma.m16n8k16 accumulator layout. The block's warps form a
//    warps_m x warps_n grid; warp (wm, wn) owns rows wm*M/warps_m.. and
//    columns wn*N/warps_n..; local [mi][ni][e] is row mi*16 + lane/4 +
//    (e/2)*8, column ni*8 + (lane%4)*2 + e%2 of the warp tile.
//    Wgmma(): the warpgroup variant (warps_m = warps, warps_n = 1):
//    warpgroup g owns rows g*M/groups.. and issues one m64 wgmma per 64
//    rows, in which warp q of the group owns 16 rows, so m16 tile mi of
//    warp 4g + q starts at row g*M/groups + mi*64 + q*16. With one m16
//    tile per warp this is the plain kMma layout (and equal to it).
//    WgmmaCols(): the warpgroup grid along N (FlashMLA's 64 x 512 output
//    over two warpgroups): warpgroup g owns columns g*N/groups.. of every
//    row (wn = warp / 4); within it warp q owns rows q*16.. of each m64
//    block (wm = warp % 4), so m16 tile mi of warp 4g + q starts at row
//    mi*64 + q*16; every warpgroup reads all of A.
//    Padded(): a small-M accumulator (small_m_gemm.h): M rows of a tile of
//    padded_rows = 16 x warps, one m16 tile per warp (warps x 1); rows
//    from M on hold padding, which Valid() excludes.
//  - kMmaRows: a rank-1 [M] tile holding one value per row of an kMma
//    layout, in the threads that hold that row (replicated over the 4 lanes
//    of a row group and over warps_n); local [mi][h] is row mi*16 + lane/4 +
//    h*8 of the warp tile.
//  - kBlocked: element p (row-major) belongs to chunk p / vec; chunk c goes
//    to thread c % threads, local [c / threads][p % vec].
//  - kReplicated: every thread holds every element (row statistics of a
//    blocked tile); local [p]. Side effects run in thread 0.
//  - kRows: a [M, N] tile reduced along its rows. Groups of `group`
//    consecutive threads (a power of two) own rows, threads / group rows at
//    a time; each thread holds vec contiguous elements of a row per chunk,
//    chunks strided by group * vec (coalesced 16-byte accesses). Local
//    [mr][nc][v] is row mr * (threads / group) + tx / group, column
//    (nc * group + tx % group) * vec + v. Rows reduce in registers, then by
//    shuffles within a warp, then through shared memory across warps.
//  - kRowStats: a rank-1 [M] tile of one value per row of a kRows layout,
//    held by every thread of the row's group; local [mr].
//  - kMmaCols / kRowCols: a rank-1 [N] tile broadcast over the rows of a
//    kMma / kRows layout (a bias, column statistics): each thread holds the
//    columns its row elements have; local [ni][2] (columns wn * N/warps_n +
//    ni * 8 + (lane % 4) * 2 + j), or [nc][v] (column (nc * group + tx %
//    group) * vec + v).
#ifndef TESSEL_SRC_PASSES_FRAGMENT_LAYOUT_H_
#define TESSEL_SRC_PASSES_FRAGMENT_LAYOUT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "src/ir/expr.h"

namespace tessel::passes {

class FragmentLayout {
 public:
  enum class Kind {
    kMma,
    kMmaRows,
    kBlocked,
    kReplicated,
    kRows,
    kRowStats,
    kMmaCols,
    kRowCols
  };

  static FragmentLayout Mma(std::vector<int64_t> shape, int threads,
                            int warps_m, int warps_n);
  // The m64nN wgmma accumulator of a block of threads/128 warpgroups.
  static FragmentLayout Wgmma(std::vector<int64_t> shape, int threads);
  // The m64nN wgmma accumulator split along N over the threads/128
  // warpgroups (M a multiple of 64, N of 8 x warpgroups).
  static FragmentLayout WgmmaCols(std::vector<int64_t> shape, int threads);
  // [M, N] with M below 16 x warps: the accumulator (or register A operand)
  // of a 16 x warps-row tile, warps x 1; also the wgmma accumulator of one
  // m64 per warpgroup.
  static FragmentLayout Padded(std::vector<int64_t> shape, int threads);
  static FragmentLayout Blocked(std::vector<int64_t> shape, int threads,
                                int vec);
  // Every thread holds the whole (small) tile; local [numel].
  static FragmentLayout Replicated(std::vector<int64_t> shape, int threads);
  // Rows of [M, N] over groups of `group` threads (kRows above).
  static FragmentLayout Rows(std::vector<int64_t> shape, int threads, int vec,
                             int group);
  // The kRows layout for a [M, N] tile reduced along its rows, vec elements
  // per access at most; nullopt when the block is not whole warps.
  static std::optional<FragmentLayout> ForRowReduce(std::vector<int64_t> shape,
                                                    int threads, int vec);
  // The row-wise layout of this kMma (kMmaRows) or kRows (kRowStats)
  // layout's rows.
  FragmentLayout RowsOf() const;
  // The column-wise layout of this kMma (kMmaCols) or kRows (kRowCols)
  // layout's columns.
  FragmentLayout ColsOf() const;

  Kind kind() const { return kind_; }
  const std::vector<int64_t>& shape() const { return shape_; }
  int threads() const { return threads_; }
  int warps_m() const { return warps_m_; }
  int warps_n() const { return warps_n_; }
  int vec() const { return vec_; }
  // kRows/kRowStats: threads per row, and rows per pass of the block.
  int group() const { return group_; }
  int row_groups() const { return threads_ / group_; }
  // mma: m16 tiles and n8 tiles per warp.
  int mi() const { return mi_; }
  int ni() const { return ni_; }

  // kMma/kMmaRows: whether m16 tiles are spread as wgmma's (Wgmma()).
  bool warpgroup_rows() const { return warpgroup_rows_; }
  // kMma/kMmaRows/kMmaCols: the warpgroups split N (WgmmaCols()).
  bool warpgroup_cols() const { return warpgroup_cols_; }
  // The warp-grid column of warp `warp` (warp / 4 or warp % warps_n).
  ir::Expr WarpCol(const ir::Expr& warp) const;
  // kMma/kMmaRows: the rows of the tensor-core tile, shape()[0] or more
  // (Padded()); 0 in padded_rows() when not padded.
  int64_t padded_rows() const { return padded_rows_; }
  int64_t tile_rows() const {
    return padded_rows_ != 0 ? padded_rows_ : shape_[0];
  }
  // kMma/kMmaRows: the first row of m16 tile mi of warp `warp`.
  ir::Expr TileRow(const ir::Expr& warp, const ir::Expr& mi) const;

  // The per-thread array: float acc[local_shape...].
  std::vector<int64_t> local_shape() const;
  // Logical indices of local element `local` of thread `tx`.
  std::vector<ir::Expr> Logical(const ir::Expr& tx,
                                const std::vector<ir::Expr>& local) const;
  // Whether local element `local` of thread tx exists (blocked tails);
  // undefined when always.
  ir::Expr Valid(const ir::Expr& tx, const std::vector<ir::Expr>& local) const;
  // Among threads holding the same element, true for exactly one (for
  // effects that must happen once: global stores, atomics); undefined when
  // the layout does not replicate.
  ir::Expr Leader(const ir::Expr& tx) const;
  // Number of consecutive local elements along the last local dim that are
  // consecutive along the last logical dim (2 for mma pairs, vec blocked).
  int contiguous() const;

  bool operator==(const FragmentLayout& o) const;
  std::string ToString() const;

  // Every field, for the pass state's text (state_text.h), which must read
  // back the same layout.
  struct Fields {
    Kind kind = Kind::kBlocked;
    std::vector<int64_t> shape;
    int threads = 0, warps_m = 1, warps_n = 1, mi = 0, ni = 0, vec = 1;
    bool warpgroup_rows = false;
    int group = 1;
    int64_t padded_rows = 0;
    bool warpgroup_cols = false;
  };
  Fields fields() const;
  static FragmentLayout FromFields(const Fields& f);

 private:
  Kind kind_ = Kind::kBlocked;
  std::vector<int64_t> shape_;
  int threads_ = 0;
  int warps_m_ = 1, warps_n_ = 1, mi_ = 0, ni_ = 0;
  int vec_ = 1;
  bool warpgroup_rows_ = false;
  int group_ = 1;
  int64_t padded_rows_ = 0;
  bool warpgroup_cols_ = false;
};

// The warp grid (warps_m x warps_n) a gemm with C [m, n] uses, for the
// policy (0 square, 1 full row, 2 full col), or {0, 0} when the tile does
// not fit the mma.sync path (m % (16 warps_m), n % (16 warps_n)).
std::pair<int, int> ChooseWarpGrid(int64_t m, int64_t n, int warps, int policy);

}  // namespace tessel::passes

#endif  // TESSEL_SRC_PASSES_FRAGMENT_LAYOUT_H_

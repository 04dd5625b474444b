#include "src/dsl/region.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/dsl/access.h"
#include "src/ir/op.h"
#include "src/ir/printer.h"

namespace tessel::dsl {
namespace {

absl::Status CheckRank(const ir::Buffer& b, size_t n) {
  if (static_cast<int>(n) != b->rank()) {
    return absl::InvalidArgumentError(absl::StrCat(b->name, "(...) has ", n,
                                                   " indices but ", Describe(b),
                                                   " has rank ", b->rank()));
  }
  return absl::OkStatus();
}

absl::Status CheckIndex(const ir::Buffer& b, const ir::Expr& e, size_t d) {
  if (!e.defined()) {
    return absl::InvalidArgumentError(
        absl::StrCat(b->name, ": index ", d, " is an undefined expression"));
  }
  if (!is_int(e.dtype())) {
    return absl::InvalidArgumentError(absl::StrCat(
        b->name, ": index ", d, " (", ir::ToString(e), ") has dtype ",
        std::string(dtype_name(e.dtype())), "; indices are integers"));
  }
  return absl::OkStatus();
}

std::string ExtentsText(const std::vector<ir::Expr>& v) {
  std::vector<std::string> parts;
  for (const ir::Expr& e : v) parts.push_back(ir::ToString(e));
  return absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
}

absl::Status ResolveExtents(PartialRegion& p,
                            const std::vector<ir::Expr>& other) {
  int r = p.region.rank(), e = static_cast<int>(other.size());
  if (e > r) {
    return absl::InvalidArgumentError(absl::StrCat(
        "start point ", p.region.buffer->name, "(...) has ", r,
        " dims but the other operand has extents ", ExtentsText(other),
        "; use T::slice(start, stop) to say which dims the tile spans"));
  }
  p.region.extent.clear();
  for (int d = 0; d < r - e; ++d)
    p.region.extent.push_back(ir::IntImm(DataType::kI32, 1));
  for (const ir::Expr& x : other) p.region.extent.push_back(x);
  // With fewer tile dims than start indices the alignment is a guess; a tile
  // wider than the whole dimension it landed on means the guess was wrong
  // (e.g. X(b, s, h, d) with a [C, D] tile meant dims 1 and 3).
  if (r > e) {
    for (int d = r - e; d < r; ++d) {
      std::optional<int64_t> size = ir::AsConstInt(p.region.buffer->shape[d]);
      std::optional<int64_t> ext = ir::AsConstInt(p.region.extent[d]);
      if (size && ext && *ext > *size) {
        return absl::InvalidArgumentError(
            absl::StrCat("start point ", p.region.buffer->name,
                         "(...) takes the tile extents ", ExtentsText(other),
                         " on its last ", e, " dims, but dim ", d, " of ",
                         Describe(p.region.buffer), " has only ", *size,
                         " elements; use T::slice(start, stop) to say which "
                         "dims the tile spans"));
      }
    }
  }
  p.needs_extent = false;
  return absl::OkStatus();
}

// The extents a start point takes from the other operand: all of them when
// they fit its rank (a [64, 1] column stays a column), else without their
// unit dims (a [1, 64] fragment onto a vector).
std::vector<ir::Expr> TileExtents(const ir::Region& other,
                                  const PartialRegion& start) {
  if (other.rank() <= start.region.rank()) return other.extent;
  return other.SqueezedExtents();
}

}  // namespace

std::string Describe(const ir::Buffer& b) {
  return absl::StrCat(b->name, " (", ir::ScopeName(b->scope), " ",
                      std::string(dtype_name(b->dtype)), " ",
                      ExtentsText(b->shape), ")");
}

absl::StatusOr<std::vector<ir::Expr>> ElementIndices(const BufferRef& ref) {
  ir::Buffer b = Access::ToIr(ref.buffer());
  if (!b.defined())
    return absl::InvalidArgumentError("use of an undefined buffer");
  if (!ref.is_element()) {
    return absl::InvalidArgumentError(
        absl::StrCat(b->name,
                     "(...) with a slice is a region, not an element; use it "
                     "in T::copy / T::fill"));
  }
  if (absl::Status s = CheckRank(b, ref.indices().size()); !s.ok()) return s;
  std::vector<ir::Expr> out;
  for (size_t d = 0; d < ref.indices().size(); ++d) {
    ir::Expr e = Access::ToIr(ref.indices()[d].expr());
    if (absl::Status s = CheckIndex(b, e, d); !s.ok()) return s;
    out.push_back(e);
  }
  return out;
}

absl::StatusOr<PartialRegion> ToPartial(const TileArg& arg) {
  ir::Buffer b = Access::ToIr(arg.buffer());
  if (!b.defined())
    return absl::InvalidArgumentError("use of an undefined buffer");
  PartialRegion p;
  if (arg.ref() == nullptr) {
    p.region = ir::Region::Full(b);
    return p;
  }
  const BufferRef& ref = *arg.ref();
  if (absl::Status s = CheckRank(b, ref.indices().size()); !s.ok()) return s;
  p.region.buffer = b;
  p.needs_extent = ref.is_element();
  for (size_t d = 0; d < ref.indices().size(); ++d) {
    const Index& index = ref.indices()[d];
    ir::Expr start = Access::ToIr(index.expr());
    if (index.is_slice() && !start.defined()) {  // T::all
      p.region.start.push_back(ir::IntImm(DataType::kI32, 0));
      p.region.extent.push_back(b->shape[d]);
      continue;
    }
    if (absl::Status s = CheckIndex(b, start, d); !s.ok()) return s;
    p.region.start.push_back(start);
    if (index.is_slice()) {
      ir::Expr stop = Access::ToIr(index.stop());
      if (absl::Status s = CheckIndex(b, stop, d); !s.ok()) return s;
      p.region.extent.push_back(stop - start);
    } else {
      p.region.extent.push_back(ir::IntImm(DataType::kI32, 1));
    }
  }
  return p;
}

absl::StatusOr<std::pair<ir::Region, ir::Region>> ResolvePair(
    const TileArg& a, const TileArg& b) {
  absl::StatusOr<PartialRegion> pa = ToPartial(a);
  if (!pa.ok()) return pa.status();
  absl::StatusOr<PartialRegion> pb = ToPartial(b);
  if (!pb.ok()) return pb.status();
  if (pa->needs_extent && pb->needs_extent) {
    return absl::InvalidArgumentError(
        absl::StrCat("both operands (", pa->region.buffer->name, "(...) and ",
                     pb->region.buffer->name,
                     "(...)) are start points, so the tile's extent is "
                     "unknown; give one as a whole "
                     "buffer or with T::slice"));
  }
  if (pa->needs_extent) {
    if (absl::Status s = ResolveExtents(*pa, TileExtents(pb->region, *pa));
        !s.ok())
      return s;
  }
  if (pb->needs_extent) {
    if (absl::Status s = ResolveExtents(*pb, TileExtents(pa->region, *pb));
        !s.ok())
      return s;
  }
  return std::make_pair(pa->region, pb->region);
}

absl::StatusOr<ir::Region> ResolveWhole(const TileArg& arg) {
  absl::StatusOr<PartialRegion> p = ToPartial(arg);
  if (!p.ok()) return p.status();
  if (p->needs_extent) {
    return absl::InvalidArgumentError(absl::StrCat(
        p->region.buffer->name,
        "(...) is a start point; pass the whole buffer or use T::slice"));
  }
  return p->region;
}

}  // namespace tessel::dsl

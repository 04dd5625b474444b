// tessel::Buffer and tessel::BufferRef: element access records loads/stores.
#include "absl/strings/str_cat.h"
#include "src/dsl/access.h"
#include "src/dsl/builder_state.h"
#include "src/dsl/region.h"
#include "src/ir/op.h"
#include "tessel/builder.h"

namespace tessel {

using dsl::Access;

// An undefined Buffer (default-constructed or moved-from) answers with
// empty values; ops given one record an error.
const std::string& Buffer::name() const {
  static const auto* empty = new std::string();
  return node_ ? node_->name : *empty;
}
DataType Buffer::dtype() const { return node_ ? node_->dtype : DataType::kF32; }
int Buffer::rank() const { return node_ ? node_->rank() : 0; }
std::vector<Expr> Buffer::shape() const {
  std::vector<Expr> out;
  if (!node_) return out;
  for (const ir::Expr& d : node_->shape) out.push_back(Access::FromIr(d));
  return out;
}

BufferRef Buffer::operator()(Index i0) const {
  return BufferRef(*this, {i0}, i0.loc());
}
BufferRef Buffer::operator()(Index i0, Index i1) const {
  return BufferRef(*this, {i0, i1}, i0.loc());
}
BufferRef Buffer::operator()(Index i0, Index i1, Index i2) const {
  return BufferRef(*this, {i0, i1, i2}, i0.loc());
}
BufferRef Buffer::operator()(Index i0, Index i1, Index i2, Index i3) const {
  return BufferRef(*this, {i0, i1, i2, i3}, i0.loc());
}
BufferRef Buffer::operator()(Index i0, Index i1, Index i2, Index i3,
                             Index i4) const {
  return BufferRef(*this, {i0, i1, i2, i3, i4}, i0.loc());
}
BufferRef Buffer::operator()(Index i0, Index i1, Index i2, Index i3, Index i4,
                             Index i5) const {
  return BufferRef(*this, {i0, i1, i2, i3, i4, i5}, i0.loc());
}
BufferRef Buffer::operator[](Index i0) const {
  return BufferRef(*this, {i0}, i0.loc());
}

bool BufferRef::is_element() const {
  for (const Index& i : indices_) {
    if (i.is_slice()) return false;
  }
  return true;
}

BufferRef& BufferRef::Store(const Expr& value, SourceLocation loc) {
  std::string op =
      buffer_.defined() ? absl::StrCat("store to ", buffer_.name()) : "store";
  dsl::BuilderState* state = dsl::BuilderState::ForOp(loc, op);
  if (state == nullptr) return *this;
  if (!state->BeginOp(loc, op)) return *this;
  absl::StatusOr<std::vector<ir::Expr>> idx = dsl::ElementIndices(*this);
  if (!idx.ok()) {
    state->Error(loc, op, std::string(idx.status().message()));
    return *this;
  }
  ir::Buffer b = Access::ToIr(buffer_);
  if (b->scope == ir::Scope::kBarrier) {
    state->Error(loc, op, "mbarriers are not data; use the T::mbarrier_* ops");
    return *this;
  }
  ir::Expr v = Access::ToIr(value);
  if (!v.defined()) {
    state->Error(loc, op, "the stored value is an undefined expression");
    return *this;
  }
  state->Append(ir::MakeStmt<ir::StoreNode>(b, *std::move(idx),
                                            ir::Cast(b->dtype, v), loc));
  return *this;
}

BufferRef::operator Expr() const {
  ir::Buffer b = Access::ToIr(buffer_);
  absl::StatusOr<std::vector<ir::Expr>> idx = dsl::ElementIndices(*this);
  if (!idx.ok() || b->scope == ir::Scope::kBarrier) {
    if (dsl::BuilderState* state = dsl::BuilderState::Current()) {
      state->Error(loc_,
                   absl::StrCat("load from ", b.defined() ? b->name : "?"),
                   idx.ok() ? std::string("mbarriers are not data")
                            : std::string(idx.status().message()));
    }
    return Access::FromIr(ir::Zero(b.defined() ? b->dtype : DataType::kI32));
  }
  return Access::FromIr(ir::Load(b, *std::move(idx)));
}

}  // namespace tessel

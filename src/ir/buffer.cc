#include "src/ir/buffer.h"

#include <limits>

#include "src/ir/op.h"

namespace tessel::ir {

const char* ScopeName(Scope scope) {
  switch (scope) {
    case Scope::kGlobal:
      return "global";
    case Scope::kShared:
      return "shared";
    case Scope::kFragment:
      return "fragment";
    case Scope::kLocal:
      return "local";
    case Scope::kVar:
      return "var";
    case Scope::kBarrier:
      return "barrier";
    case Scope::kUniform:
      return "uniform";
  }
  return "?";
}

std::optional<int64_t> BufferNode::ConstNumElements() const {
  int64_t n = 1;
  for (const Expr& d : shape) {
    std::optional<int64_t> c = AsConstInt(d);
    if (!c) return std::nullopt;
    // Saturates rather than wrap: a count past int64 is only ever "too big".
    if (*c > 0 && n > std::numeric_limits<int64_t>::max() / *c)
      return std::numeric_limits<int64_t>::max();
    n *= *c;
  }
  return n;
}

Buffer MakeBuffer(std::string name, DataType dtype, std::vector<Expr> shape,
                  Scope scope, Layout layout) {
  return Buffer(std::make_shared<BufferNode>(std::move(name), dtype,
                                             std::move(shape), scope, layout));
}

Region Region::Full(const Buffer& buffer) {
  Region r;
  r.buffer = buffer;
  for (const Expr& d : buffer->shape) {
    r.start.push_back(IntImm(DataType::kI32, 0));
    r.extent.push_back(d);
  }
  return r;
}

bool Region::IsFull() const {
  if (static_cast<int>(start.size()) != buffer->rank()) return false;
  for (size_t d = 0; d < start.size(); ++d) {
    if (!IsConstInt(start[d], 0)) return false;
    if (!ExprDeepEqual(extent[d], buffer->shape[d])) {
      std::optional<int64_t> diff =
          ConstDifference(extent[d], buffer->shape[d]);
      if (!diff || *diff != 0) return false;
    }
  }
  return true;
}

std::vector<Expr> Region::SqueezedExtents() const {
  std::vector<Expr> out;
  for (const Expr& e : extent) {
    if (!IsConstInt(e, 1)) out.push_back(e);
  }
  return out;
}

}  // namespace tessel::ir

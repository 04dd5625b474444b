#include "src/passes/intrinsics.h"

namespace tessel::passes {

ir::Stmt Intrin(std::string name, std::vector<ir::Expr> args) {
  return ir::MakeStmt<ir::EvaluateNode>(
      ir::Call(DataType::kI32, std::move(name), std::move(args)),
      ir::SourceLoc());
}

ir::Stmt Let(const ir::Var& var, ir::Expr value) {
  return Intrin("let", {var, std::move(value)});
}

ir::Expr ThreadIdx() { return ir::Call(DataType::kI32, "thread_idx", {}); }

ir::Expr Ref(const ir::Buffer& buffer, std::vector<ir::Expr> indices) {
  return ir::Call(buffer->dtype, "ref", {ir::Load(buffer, std::move(indices))});
}

ir::Expr SharedAddr(const ir::Buffer& flat_shared, ir::Expr offset) {
  return ir::Call(DataType::kU32, "shared_addr",
                  {ir::Load(flat_shared, {std::move(offset)})});
}

ir::Expr AddressOf(const ir::Buffer& buffer, ir::Expr flat_index) {
  return ir::Call(DataType::kI64, "address_of",
                  {ir::Load(buffer, {std::move(flat_index)})});
}

const ir::CallNode* AsIntrin(const ir::Stmt& s) {
  const auto* e = s.As<ir::EvaluateNode>();
  if (e == nullptr) return nullptr;
  return e->value.As<ir::CallNode>();
}

const ir::CallNode* AsIntrin(const ir::Stmt& s, std::string_view name) {
  const ir::CallNode* c = AsIntrin(s);
  return c != nullptr && c->name == name ? c : nullptr;
}

}  // namespace tessel::passes

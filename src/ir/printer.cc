#include "src/ir/printer.h"

#include <charconv>
#include <cmath>
#include <sstream>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "src/ir/op.h"

namespace tessel::ir {
namespace {

std::string FormatDouble(double v) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof(buf), v);
  std::string s(buf, end);
  if (s.find_first_of(".eE") == std::string::npos) s += ".0";
  return s;
}

std::string_view Basename(std::string_view path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string_view::npos ? path : path.substr(slash + 1);
}

// Precedence of infix binary operators (C-like); 0 = printed as a call.
int Precedence(BinaryOp op) {
  switch (op) {
    case BinaryOp::kOr:
      return 1;
    case BinaryOp::kAnd:
      return 2;
    case BinaryOp::kBitOr:
      return 3;
    case BinaryOp::kBitXor:
      return 4;
    case BinaryOp::kBitAnd:
      return 5;
    case BinaryOp::kEQ:
    case BinaryOp::kNE:
      return 6;
    case BinaryOp::kLT:
    case BinaryOp::kLE:
    case BinaryOp::kGT:
    case BinaryOp::kGE:
      return 7;
    case BinaryOp::kShl:
    case BinaryOp::kShr:
      return 8;
    case BinaryOp::kAdd:
    case BinaryOp::kSub:
      return 9;
    case BinaryOp::kMul:
    case BinaryOp::kDiv:
    case BinaryOp::kMod:
      return 10;
    default:
      return 0;
  }
}
constexpr int kUnaryPrecedence = 11;
constexpr int kAtomPrecedence = 12;

class Printer {
 public:
  explicit Printer(PrintOptions options) : options_(options) {}

  std::string Name(const void* node, const std::string& wanted) {
    auto it = names_.find(node);
    if (it != names_.end()) return it->second;
    std::string name = wanted.empty() ? "v" : wanted;
    for (int i = 1; used_.count(name); ++i) name = absl::StrCat(wanted, "_", i);
    used_.insert(name);
    names_.emplace(node, name);
    return name;
  }
  std::string VarName(const Var& v) { return Name(v.get(), v.name()); }
  std::string BufferName(const Buffer& b) { return Name(b.get(), b->name); }

  std::string Shape(const std::vector<Expr>& shape) {
    std::string s = "(";
    for (size_t i = 0; i < shape.size(); ++i) {
      if (i) s += ", ";
      s += Print(shape[i]);
    }
    if (shape.size() == 1) s += ",";
    return s + ")";
  }

  std::string Print(const Expr& e) { return PrintPrec(e, 0); }

  std::string PrintPrec(const Expr& e, int parent_prec) {
    int prec = kAtomPrecedence;
    std::string s = PrintInner(e, &prec);
    return prec < parent_prec ? absl::StrCat("(", s, ")") : s;
  }

  std::string Args(const std::vector<Expr>& args) {
    std::vector<std::string> parts;
    for (const Expr& a : args) parts.push_back(Print(a));
    return absl::StrJoin(parts, ", ");
  }

  std::string PrintInner(const Expr& e, int* prec) {
    if (!e.defined()) return "<undefined>";
    switch (e->kind) {
      case ExprKind::kIntImm: {
        int64_t v = e.As<IntImmNode>()->value;
        if (e.dtype() == DataType::kBool) return v ? "True" : "False";
        if (e.dtype() == DataType::kI32) {
          if (v < 0) *prec = kUnaryPrecedence;
          return absl::StrCat(v);
        }
        return absl::StrCat("T.", std::string(dtype_name(e.dtype())), "(", v,
                            ")");
      }
      case ExprKind::kFloatImm: {
        double v = e.As<FloatImmNode>()->value;
        std::string body;
        if (std::isnan(v))
          return absl::StrCat("T.nan(", std::string(dtype_name(e.dtype())),
                              ")");
        if (std::isinf(v)) {
          if (v < 0) *prec = kUnaryPrecedence;
          return absl::StrCat(v < 0 ? "-" : "", "T.infinity(",
                              std::string(dtype_name(e.dtype())), ")");
        }
        if (e.dtype() == DataType::kF32) {
          if (v < 0) *prec = kUnaryPrecedence;
          return FormatDouble(v);
        }
        return absl::StrCat("T.", std::string(dtype_name(e.dtype())), "(",
                            FormatDouble(v), ")");
      }
      case ExprKind::kVar: {
        const auto* v = e.As<VarNode>();
        return Name(v, v->name);
      }
      case ExprKind::kBinary: {
        const auto* b = e.As<BinaryNode>();
        int p = Precedence(b->op);
        if (p == 0) {
          return absl::StrCat("T.", BinaryOpName(b->op), "(", Print(b->a), ", ",
                              Print(b->b), ")");
        }
        *prec = p;
        return absl::StrCat(PrintPrec(b->a, p), " ", BinaryOpName(b->op), " ",
                            PrintPrec(b->b, p + 1));
      }
      case ExprKind::kUnary: {
        const auto* u = e.As<UnaryNode>();
        *prec = kUnaryPrecedence;
        const char* sym = u->op == UnaryOp::kNeg   ? "-"
                          : u->op == UnaryOp::kNot ? "!"
                                                   : "~";
        return absl::StrCat(sym, PrintPrec(u->a, kUnaryPrecedence));
      }
      case ExprKind::kSelect: {
        const auto* s = e.As<SelectNode>();
        return absl::StrCat("T.if_then_else(", Print(s->cond), ", ",
                            Print(s->true_value), ", ", Print(s->false_value),
                            ")");
      }
      case ExprKind::kCast:
        return absl::StrCat("T.cast(", Print(e.As<CastNode>()->value), ", ",
                            std::string(dtype_name(e.dtype())), ")");
      case ExprKind::kMath: {
        const auto* m = e.As<MathNode>();
        return absl::StrCat("T.", MathOpName(m->op), "(", Print(m->a), ")");
      }
      case ExprKind::kCall: {
        const auto* c = e.As<CallNode>();
        std::string s =
            absl::StrCat("T.call_intrin(", std::string(dtype_name(c->dtype)),
                         ", \"", c->name, "\"");
        for (const Expr& a : c->args) absl::StrAppend(&s, ", ", Print(a));
        return s + ")";
      }
      case ExprKind::kLoad: {
        const auto* l = e.As<LoadNode>();
        return absl::StrCat(BufferName(l->buffer), "[", Args(l->indices), "]");
      }
    }
    return "<?>";
  }

  std::string PrintRegion(const Region& r) {
    if (r.IsFull()) return BufferName(r.buffer);
    std::vector<std::string> dims;
    for (size_t d = 0; d < r.start.size(); ++d) {
      if (IsConstInt(r.extent[d], 1)) {
        dims.push_back(Print(r.start[d]));
      } else {
        dims.push_back(absl::StrCat(Print(r.start[d]), ":",
                                    Print(r.start[d] + r.extent[d])));
      }
    }
    return absl::StrCat(BufferName(r.buffer), "[", absl::StrJoin(dims, ", "),
                        "]");
  }

  void Line(const std::string& text, const StmtNode* op) {
    out_ << std::string(depth_ * options_.indent, ' ') << text;
    if (options_.locations && op != nullptr && op->loc.line() != 0) {
      out_ << "  # " << Basename(op->loc.file_name()) << ":" << op->loc.line();
    }
    out_ << "\n";
  }

  void Body(const Stmt& s) {
    ++depth_;
    if (!s.defined() || (s.As<SeqNode>() && s.As<SeqNode>()->stmts.empty())) {
      Line("pass", nullptr);
    } else {
      PrintStmt(s);
    }
    --depth_;
  }

  std::string AllocText(const Buffer& b) {
    const BufferNode* n = b.get();
    std::string name = BufferName(b);
    std::string layout;
    if (n->layout.kind == Layout::Kind::kSwizzled) {
      layout = absl::StrCat(", layout=T.swizzled(", n->layout.swizzle_bytes,
                            n->layout.atoms ? ", atoms" : "", ")");
    }
    switch (n->scope) {
      case Scope::kVar:
      case Scope::kUniform:
        return absl::StrCat(name, " = T.alloc_", ScopeName(n->scope), "(",
                            std::string(dtype_name(n->dtype)), ")");
      case Scope::kBarrier:
        return absl::StrCat(name, " = T.alloc_barrier(", Print(n->shape[0]),
                            ")");
      default:
        return absl::StrCat(name, " = T.alloc_", ScopeName(n->scope), "(",
                            Shape(n->shape), ", ",
                            std::string(dtype_name(n->dtype)), layout, ")");
    }
  }

  std::string BarrierRef(const Buffer& b, const Expr& index) {
    return absl::StrCat(BufferName(b), "[", Print(index), "]");
  }

  void PrintStmt(const Stmt& s) {
    if (!s.defined()) return;
    const StmtNode* node = s.get();
    switch (s->kind) {
      case StmtKind::kKernel: {
        const auto* k = s.As<KernelNode>();
        std::vector<std::string> vars;
        for (const Var& v : k->block_vars) vars.push_back(VarName(v));
        std::string as =
            vars.size() == 1
                ? vars[0]
                : absl::StrCat("(", absl::StrJoin(vars, ", "), ")");
        Line(absl::StrCat("with T.Kernel(", Args(k->grid),
                          ", threads=", k->threads, ") as ", as, ":"),
             node);
        Body(k->body);
        return;
      }
      case StmtKind::kFor: {
        const auto* f = s.As<ForNode>();
        std::string range =
            IsConstInt(f->min, 0)
                ? Print(f->extent)
                : absl::StrCat(Print(f->min), ", ", Print(f->min + f->extent));
        std::string extra;
        if (f->for_kind == ForKind::kPipelined) {
          extra = absl::StrCat(", num_stages=", f->num_stages);
          if (!f->order.empty())
            absl::StrAppend(&extra, ", order=[", absl::StrJoin(f->order, ", "),
                            "]");
          if (!f->stage.empty())
            absl::StrAppend(&extra, ", stage=[", absl::StrJoin(f->stage, ", "),
                            "]");
        }
        // A variable named before (a copied loop) whose name an enclosing
        // loop holds now gets a new name: the body must not read as if it
        // used the outer loop's.
        if (auto it = names_.find(f->var.get());
            it != names_.end() && used_.count(it->second)) {
          names_.erase(it);
        }
        std::string var = VarName(f->var);
        Line(absl::StrCat("for ", var, " in T.", ForKindName(f->for_kind), "(",
                          range, extra, "):"),
             node);
        Body(f->body);
        used_.erase(var);  // sibling loops may reuse the name
        return;
      }
      case StmtKind::kIfThenElse: {
        const auto* i = s.As<IfThenElseNode>();
        Line(absl::StrCat("if ", Print(i->cond), ":"), node);
        Body(i->then_case);
        if (i->else_case.defined()) {
          Line("else:", nullptr);
          Body(i->else_case);
        }
        return;
      }
      case StmtKind::kStore: {
        const auto* st = s.As<StoreNode>();
        Line(absl::StrCat(BufferName(st->buffer), "[", Args(st->indices),
                          "] = ", Print(st->value)),
             node);
        return;
      }
      case StmtKind::kSeq:
        for (const Stmt& c : s.As<SeqNode>()->stmts) PrintStmt(c);
        return;
      case StmtKind::kAllocate: {
        const auto* a = s.As<AllocateNode>();
        Line(AllocText(a->buffer), node);
        PrintStmt(a->body);  // the rest of the scope, same indentation
        return;
      }
      case StmtKind::kCopy: {
        const auto* c = s.As<CopyNode>();
        std::string tma =
            c->barrier.defined()
                ? absl::StrCat(", barrier=",
                               BarrierRef(c->barrier, c->barrier_index))
                : "";
        Line(absl::StrCat("T.copy(", PrintRegion(c->src), ", ",
                          PrintRegion(c->dst), tma, ")"),
             node);
        return;
      }
      case StmtKind::kGemm: {
        const auto* g = s.As<GemmNode>();
        std::string text =
            absl::StrCat("T.gemm(", PrintRegion(g->a), ", ", PrintRegion(g->b),
                         ", ", PrintRegion(g->c));
        if (g->transpose_a) text += ", transpose_A=True";
        if (g->transpose_b) text += ", transpose_B=True";
        if (g->clear_accum) text += ", clear_accum=True";
        if (g->policy != GemmWarpPolicy::kSquare) {
          absl::StrAppend(&text, ", policy=T.GemmWarpPolicy.",
                          GemmWarpPolicyName(g->policy));
        }
        Line(text + ")", node);
        return;
      }
      case StmtKind::kFill: {
        const auto* f = s.As<FillNode>();
        Line(absl::StrCat("T.fill(", PrintRegion(f->dst), ", ", Print(f->value),
                          ")"),
             node);
        return;
      }
      case StmtKind::kReduce: {
        const auto* r = s.As<ReduceNode>();
        Line(absl::StrCat("T.reduce_", ReduceKindName(r->reduce_kind), "(",
                          BufferName(r->src), ", ", BufferName(r->dst),
                          ", dim=", r->dim,
                          ", clear=", r->clear ? "True" : "False", ")"),
             node);
        return;
      }
      case StmtKind::kCumsum: {
        const auto* c = s.As<CumsumNode>();
        Line(absl::StrCat("T.cumsum(", BufferName(c->src), ", ",
                          BufferName(c->dst), ", dim=", c->dim,
                          c->reverse ? ", reverse=True" : "", ")"),
             node);
        return;
      }
      case StmtKind::kAtomic: {
        const auto* a = s.As<AtomicNode>();
        std::string what;
        if (a->src) {
          what = absl::StrCat(PrintRegion(a->dst), ", ", PrintRegion(*a->src));
        } else {
          what = absl::StrCat(BufferName(a->dst.buffer), "[",
                              Args(a->dst.start), "], ", Print(a->value));
        }
        if (a->prev) {
          absl::StrAppend(&what, ", prev=", BufferName(a->prev->buffer), "[",
                          Args(a->prev->start), "]");
        }
        Line(absl::StrCat("T.atomic_", AtomicOpName(a->op), "(", what, ")"),
             node);
        return;
      }
      case StmtKind::kSyncThreads:
        Line("T.sync_threads()", node);
        return;
      case StmtKind::kMbarrierInit: {
        const auto* m = s.As<MbarrierInitNode>();
        Line(absl::StrCat("T.mbarrier_init(", BufferName(m->barriers), ", [",
                          Args(m->arrive_counts), "])"),
             node);
        return;
      }
      case StmtKind::kMbarrierArrive: {
        const auto* m = s.As<MbarrierArriveNode>();
        Line(absl::StrCat("T.mbarrier_arrive(",
                          BarrierRef(m->barriers, m->index), ")"),
             node);
        return;
      }
      case StmtKind::kMbarrierExpectTx: {
        const auto* m = s.As<MbarrierExpectTxNode>();
        Line(absl::StrCat("T.mbarrier_expect_tx(",
                          BarrierRef(m->barriers, m->index), ", ",
                          Print(m->bytes), ")"),
             node);
        return;
      }
      case StmtKind::kMbarrierWaitParity: {
        const auto* m = s.As<MbarrierWaitParityNode>();
        Line(absl::StrCat("T.mbarrier_wait_parity(",
                          BarrierRef(m->barriers, m->index), ", ",
                          Print(m->parity), ")"),
             node);
        return;
      }
      case StmtKind::kAnnotateLayout: {
        const auto* a = s.As<AnnotateLayoutNode>();
        std::string layout =
            a->layout.kind == Layout::Kind::kSwizzled
                ? absl::StrCat("T.swizzled(", a->layout.swizzle_bytes, ")")
                : "T.row_major()";
        Line(absl::StrCat("T.annotate_layout(", BufferName(a->buffer), ", ",
                          layout, ")"),
             node);
        return;
      }
      case StmtKind::kUseSwizzle: {
        const auto* u = s.As<UseSwizzleNode>();
        Line(absl::StrCat("T.use_swizzle(panel_size=", u->panel_size,
                          u->column_major ? ", order=\"col\"" : "", ")"),
             node);
        return;
      }
      case StmtKind::kPrint: {
        const auto* p = s.As<PrintNode>();
        std::string what =
            p->buffer.defined() ? BufferName(p->buffer) : Print(p->value);
        std::string msg;
        for (char c : p->message) {
          if (c == '"' || c == '\\') msg += '\\';
          msg += c;
        }
        Line(absl::StrCat("T.print(", what, ", msg=\"", msg, "\")"), node);
        return;
      }
      case StmtKind::kWarpSpecialize: {
        const auto* w = s.As<WarpSpecializeNode>();
        std::string groups;
        if (w->consumer_groups > 1) {
          groups = absl::StrCat(", consumer_groups=", w->consumer_groups,
                                ") as ", VarName(w->group));
        }
        Line(absl::StrCat("with T.warp_specialize(producer_threads=",
                          w->producer_threads, groups.empty() ? "):" : groups,
                          groups.empty() ? "" : ":"),
             node);
        ++depth_;
        Line("producer:", nullptr);
        Body(w->producer);
        Line("consumer:", nullptr);
        Body(w->consumer);
        --depth_;
        return;
      }
      case StmtKind::kEvaluate:
        Line(absl::StrCat("T.evaluate(", Print(s.As<EvaluateNode>()->value),
                          ")"),
             node);
        return;
    }
  }

  void PrintProgram(const Program& p) {
    std::vector<std::string> params;
    for (const Buffer& b : p.params) {
      params.push_back(absl::StrCat(BufferName(b), ": T.Tensor(",
                                    Shape(b->shape), ", ",
                                    std::string(dtype_name(b->dtype)), ")"));
    }
    if (!p.dims.empty()) {
      params.push_back("*");
      for (const Var& v : p.dims) {
        params.push_back(
            absl::StrCat(VarName(v), ": ", std::string(dtype_name(v.dtype()))));
      }
    }
    // Reserve the params' names before the body is walked.
    out_ << "@T.prim_func\n";
    out_ << "def " << p.name << "(" << absl::StrJoin(params, ", ") << "):\n";
    Body(p.body);
  }

  std::string str() const { return out_.str(); }

 private:
  PrintOptions options_;
  std::ostringstream out_;
  int depth_ = 0;
  std::unordered_map<const void*, std::string> names_;
  std::unordered_set<std::string> used_;
};

}  // namespace

std::string ToString(const Program& program, const PrintOptions& options) {
  Printer p(options);
  // Dims first so that their names win over same-named locals.
  for (const Var& v : program.dims) p.VarName(v);
  p.PrintProgram(program);
  return p.str();
}

std::string ToString(const Stmt& stmt, const PrintOptions& options) {
  Printer p(options);
  p.PrintStmt(stmt);
  return p.str();
}

std::string ToString(const Expr& expr) { return Printer({}).Print(expr); }

std::string ToString(const Region& region) {
  return Printer({}).PrintRegion(region);
}

std::ostream& operator<<(std::ostream& os, const Expr& expr) {
  return os << ToString(expr);
}
std::ostream& operator<<(std::ostream& os, const Stmt& stmt) {
  return os << ToString(stmt);
}
std::ostream& operator<<(std::ostream& os, const Program& program) {
  return os << ToString(program);
}

}  // namespace tessel::ir

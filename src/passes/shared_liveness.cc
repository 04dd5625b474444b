#include "src/passes/shared_liveness.h"

#include <algorithm>

#include "src/ir/op.h"

namespace tessel::passes {

void SharedLiveness::VisitStmt(const ir::Stmt& s) {
  if (!s.defined()) return;
  switch (s->kind) {
    case ir::StmtKind::kSeq:
    case ir::StmtKind::kKernel:
      IRVisitor::VisitStmt(s);
      return;
    case ir::StmtKind::kIfThenElse:
      ++conditional_;
      IRVisitor::VisitStmt(s);
      --conditional_;
      return;
    case ir::StmtKind::kAllocate: {
      const auto* a = s.As<ir::AllocateNode>();
      const ir::BufferNode* b = a->buffer.get();
      if (b->scope == ir::Scope::kShared || b->scope == ir::Scope::kBarrier) {
        SharedLifetime iv{b, 0, 128};
        int64_t n = b->ConstNumElements().value_or(0);
        if (b->scope == ir::Scope::kBarrier) {
          iv.bytes = n * 8;
          iv.align = 8;
        } else {
          iv.bytes = n * dtype_bytes(b->dtype);
          // 128-byte-row swizzled tiles are SWIZZLE_128B atoms for wgmma:
          // the hardware XOR reads address bits, so tiles start on 1 KB.
          auto cols = ir::AsConstInt(b->shape.back());
          // TMA writes its swizzle from address bits too, whatever the
          // row width.
          if ((b->layout.kind == ir::Layout::Kind::kSwizzled && cols &&
               *cols * dtype_bytes(b->dtype) % 128 == 0) ||
              tma_destinations_.count(b)) {
            iv.align = 1024;
          }
        }
        live[b] = iv;
        order.push_back(b);
        alloc_depth_[b] = static_cast<int>(loops_.size());
      }
      const int start = counter_;
      VisitStmt(a->body);
      // A staging tile only the lowering will write (epilogue_store.h):
      // live over its whole allocation.
      if (whole_scope_.count(b) && counter_ > start) {
        SharedLifetime& iv = live[b];
        iv.first = iv.first < 0 ? start + 1 : std::min(iv.first, start + 1);
        iv.last = std::max(iv.last, counter_);
      }
      return;
    }
    case ir::StmtKind::kFor: {
      const auto* f = s.As<ir::ForNode>();
      if (f->for_kind == ir::ForKind::kParallel) break;  // a leaf
      int start = counter_;
      loops_.push_back({start, {}, {}, conditional_});
      VisitStmt(f->body);
      Loop done = loops_.back();
      loops_.pop_back();
      int end = counter_;
      for (const ir::BufferNode* b : done.used) {
        if (alloc_depth_[b] <= static_cast<int>(loops_.size()) &&
            !(iteration_local_ && done.overwritten_first.at(b))) {
          live[b].first = std::min(live[b].first, start);
          live[b].last = std::max(live[b].last, end);
        }
        // To the enclosing loop, this loop is one conditional use.
        if (!loops_.empty()) Use(b, nullptr);
      }
      return;
    }
    case ir::StmtKind::kWarpSpecialize: {
      // Producer and consumer run at once: every buffer either names is
      // live over the whole region (so a tile the consumer allocates for
      // its epilogue, inside, never shares bytes with the producer's).
      const int start = counter_;
      loops_.push_back({start, {}, {}, conditional_});
      IRVisitor::VisitStmt(s);
      Loop done = loops_.back();
      loops_.pop_back();
      for (const ir::BufferNode* b : done.used) {
        live[b].first = std::min(live[b].first, start);
        live[b].last = std::max(live[b].last, counter_);
        if (!loops_.empty()) Use(b, nullptr);
      }
      return;
    }
    case ir::StmtKind::kAnnotateLayout:
      return;  // names a buffer, touches no data
    default:
      break;
  }
  // A leaf statement: every buffer it names is used here.
  int at = ++counter_;
  struct Uses : ir::IRVisitor {
    std::vector<const ir::BufferNode*> found;
    void VisitBuffer(const ir::Buffer& b) override { found.push_back(b.get()); }
  } uses;
  uses.VisitStmt(s);
  for (const ir::BufferNode* b : uses.found) {
    auto it = live.find(b);
    if (it == live.end()) continue;
    if (it->second.first < 0) it->second.first = at;
    it->second.first = std::min(it->second.first, at);
    it->second.last = std::max(it->second.last, at);
    if (!loops_.empty()) Use(b, &s);
  }
}

void SharedLiveness::Use(const ir::BufferNode* b, const ir::Stmt* s) {
  Loop& loop = loops_.back();
  if (loop.overwritten_first.count(b)) return;
  loop.used.push_back(b);
  loop.overwritten_first[b] =
      s != nullptr && conditional_ == loop.conditional && OverwritesAll(*s, b);
}

bool SharedLiveness::OverwritesAll(const ir::Stmt& s, const ir::BufferNode* b) {
  if (const auto* f = s.As<ir::FillNode>())
    return f->dst.buffer.get() == b && f->dst.IsFull();
  if (const auto* c = s.As<ir::CopyNode>()) {
    return c->dst.buffer.get() == b && c->dst.IsFull() &&
           c->src.buffer.get() != b;
  }
  return false;
}

}  // namespace tessel::passes

// Run-time state of the interpreter: buffer instances, mbarriers and the
// per-block frame that compiled closures read and write.
//
//   Frame f = prototype;                       // one per worker thread
//   f.vars[slot] = 3;                          // a loop or block variable
//   f.buffers[slot].Set(flat, 1.5);            // rounds to the dtype
//   if (f.failed) return f.status;             // first user error, with its
//   site
#ifndef TESSEL_SRC_INTERP_FRAME_H_
#define TESSEL_SRC_INTERP_FRAME_H_

#include <bit>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <ostream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "src/interp/numeric.h"
#include "src/ir/buffer.h"
#include "src/ir/stmt.h"
#include "tessel/dtype.h"

namespace tessel::interp {

// Where a run-time check fires: the op's name and the user's source line.
struct Site {
  const char* op = "";
  ir::SourceLoc loc;
};

// One mbarrier, simulated as a phase counter (the block runs sequentially).
struct Mbarrier {
  bool initialized = false;
  int64_t expected = 0;  // arrivals per phase
  int64_t pending = 0;   // arrivals still missing in the current phase
  int64_t phase = 0;     // phases completed so far
  int64_t arrivals = 0;  // arrive statements executed, for messages
};

// A global atomic update deferred until every block of the grid ran, so that
// threaded runs add in the same order as a serial run.
struct AtomicRecord {
  int slot;
  int64_t index;
  ir::AtomicOp op;
  double value;
  int64_t int_value;
};

// A buffer while it exists: a global tensor (raw bytes of a HostTensor) or a
// per-block tile (values as doubles already rounded to the dtype, i64
// bit-cast; `init` marks elements written since the allocation).
struct BufferInstance {
  const ir::BufferNode* node = nullptr;
  DataType dtype = DataType::kF32;
  bool is_int = false;  // integer or bool dtype
  bool global = false;
  std::vector<int64_t> shape;
  std::vector<int64_t> strides;
  int64_t size = 0;
  std::byte* raw = nullptr;  // global only
  int elem_bytes = 0;
  std::vector<double> values;      // per-block only
  std::vector<uint8_t> init;       // per-block only
  std::vector<Mbarrier> barriers;  // scope kBarrier only

  double Get(int64_t i) const {
    if (global) return LoadElement(dtype, raw + i * elem_bytes);
    if (dtype == DataType::kI64) {
      return static_cast<double>(std::bit_cast<int64_t>(values[i]));
    }
    return values[i];
  }
  int64_t GetInt(int64_t i) const {
    if (global) return LoadElementInt(dtype, raw + i * elem_bytes);
    if (dtype == DataType::kI64) return std::bit_cast<int64_t>(values[i]);
    if (is_int) return static_cast<int64_t>(values[i]);
    return FloatToInt(DataType::kI64, values[i]);
  }
  // Stores v converted to the dtype (rounded, or truncated for integers).
  void Set(int64_t i, double v) {
    if (global) {
      StoreElement(dtype, raw + i * elem_bytes, v);
    } else if (is_int) {
      SetInt(i, FloatToInt(dtype, v));
      return;
    } else {
      values[i] = RoundToDtype(dtype, v);
      init[i] = 1;
    }
  }
  void SetInt(int64_t i, int64_t v) {
    if (global) {
      StoreElementInt(dtype, raw + i * elem_bytes, v);
    } else if (!is_int) {
      Set(i, static_cast<double>(v));
    } else {
      const int64_t w = WrapInt(dtype, v);
      values[i] = dtype == DataType::kI64 ? std::bit_cast<double>(w)
                                          : static_cast<double>(w);
      init[i] = 1;
    }
  }
  bool Initialized(int64_t i) const { return global || init[i] != 0; }
};

struct Frame {
  std::vector<int64_t> vars;
  std::vector<BufferInstance> buffers;
  std::vector<int64_t> block;  // the block being run, for messages
  // Null: apply global atomics at once (serial runs).
  std::vector<AtomicRecord>* atomic_log = nullptr;
  std::ostream* print = nullptr;
  int threads = 1;  // threads per block of the running kernel
  bool failed = false;
  absl::Status status;
};

// Records the first user error of the block: "<op> at file:line: message
// (block (x, y))". Later errors are dropped; closures return early once
// f.failed is set.
void Fail(Frame& f, const Site& site, absl::StatusCode code,
          const std::string& message);

// "A_shared[3, 5]"
std::string ElementName(const BufferInstance& b,
                        const std::vector<int64_t>& index);

// dtype_name as a std::string (absl::StrCat here takes absl::string_view).
inline std::string DtypeName(DataType t) { return std::string(dtype_name(t)); }

using IntFn = std::function<int64_t(Frame&)>;
using FloatFn = std::function<double(Frame&)>;
using StmtFn = std::function<void(Frame&)>;

}  // namespace tessel::interp

#endif  // TESSEL_SRC_INTERP_FRAME_H_

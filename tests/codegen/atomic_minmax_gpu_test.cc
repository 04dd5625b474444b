// atomic_max / atomic_min on f32 from many blocks into one tile, with values
// of every class (both signs, -0 and +0, denormals, infinities, NaNs) in the
// sources and already stored: the GPU against the interpreter, bit for bit
// (any NaN matches any NaN). The interpreter against a plain fold runs
// without a GPU; the GPU comparison skips without one.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "jit/device_buffer.h"
#include "src/interp/numeric.h"
#include "tessel/builder.h"
#include "tessel/compile.h"
#include "tessel/interpret.h"
#include "tessel/testing.h"

namespace tessel {
namespace {

constexpr int kBlocks = 96;
constexpr int kCols = 128;

float FromBits(uint32_t b) { return std::bit_cast<float>(b); }
uint32_t Bits(float x) { return std::bit_cast<uint32_t>(x); }

std::vector<float> Classes() {
  const float inf = std::numeric_limits<float>::infinity();
  const float tiny = std::numeric_limits<float>::denorm_min();
  const float norm = std::numeric_limits<float>::min();
  return {-inf,
          -3.0e38f,
          -1.48f,
          -1.0f,
          -norm,
          -norm + tiny,
          -tiny,
          -0.0f,
          0.0f,
          tiny,
          norm,
          1.0f,
          1.48f,
          3.0e38f,
          inf,
          FromBits(0x7fc00000),
          FromBits(0xffc00000)};
}

// Block b's value for column c. Columns differ in which classes meet: some
// see all of them, some only negatives and -0 (the padded-row case of the
// bug), some only zeros, some only NaNs and one number.
float Source(int b, int c) {
  const std::vector<float> v = Classes();
  const int n = static_cast<int>(v.size());
  switch (c % 4) {
    case 0:
      return v[(b * 7 + c) % n];
    case 1:
      return b % 3 == 0 ? -0.0f : -1.0f - static_cast<float>((b * c) % 5);
    case 2:
      return (b + c) % 2 ? 0.0f : -0.0f;
    default:
      return b == c % kBlocks ? static_cast<float>(c) - 60.0f
                              : FromBits(0x7fc00000 | b);
  }
}

HostTensor F32(std::vector<int64_t> shape, const std::vector<float>& values) {
  HostTensor t(DataType::kF32, std::move(shape));
  std::memcpy(t.data(), values.data(), values.size() * sizeof(float));
  return t;
}

// X (sources), then the outputs max_shared, min_shared, max_frag, min_frag,
// each starting from a class value (NaN and -0 stored included).
std::vector<HostTensor> Arguments() {
  std::vector<float> x(kBlocks * kCols);
  for (int b = 0; b < kBlocks; ++b)
    for (int c = 0; c < kCols; ++c) x[b * kCols + c] = Source(b, c);
  std::vector<HostTensor> args{F32({kBlocks, kCols}, x)};
  const std::vector<float> v = Classes();
  for (int k = 0; k < 4; ++k) {
    std::vector<float> init(kCols);
    for (int c = 0; c < kCols; ++c) init[c] = v[(c / 4 + 5 * k) % v.size()];
    args.push_back(F32({kCols}, init));
  }
  return args;
}

// Every block adds its row through a shared tile and through a fragment.
absl::StatusOr<Program> AtomicMinMaxProgram() {
  ProgramBuilder p("atomic_minmax_f32");
  Buffer x = p.tensor("X", {kBlocks, kCols}, f32);
  Buffer max_s = p.tensor("max_shared", {kCols}, f32);
  Buffer min_s = p.tensor("min_shared", {kCols}, f32);
  Buffer max_f = p.tensor("max_frag", {kCols}, f32);
  Buffer min_f = p.tensor("min_frag", {kCols}, f32);
  {
    Kernel kernel(kBlocks, {.threads = 128});
    auto [b] = kernel.block_index();
    Buffer s = alloc_shared({kCols}, f32);
    Buffer f = alloc_fragment({kCols}, f32);
    copy(x(b, 0), s);
    copy(x(b, 0), f);
    atomic_max(max_s(0), s);
    atomic_min(min_s(0), s);
    atomic_max(max_f(0), f);
    atomic_min(min_f(0), f);
  }
  return p.finish();
}

::testing::AssertionResult SameBits(const HostTensor& got,
                                    const HostTensor& want) {
  const auto* g = reinterpret_cast<const float*>(got.data());
  const auto* w = reinterpret_cast<const float*>(want.data());
  for (int64_t i = 0; i < want.num_elements(); ++i) {
    if (std::isnan(g[i]) && std::isnan(w[i])) continue;
    if (Bits(g[i]) != Bits(w[i])) {
      return ::testing::AssertionFailure()
             << "element " << i << ": got " << g[i] << " (bits " << Bits(g[i])
             << "), want " << w[i] << " (bits " << Bits(w[i]) << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

std::vector<HostTensor*> Pointers(std::vector<HostTensor>& ts) {
  std::vector<HostTensor*> out;
  for (HostTensor& t : ts) out.push_back(&t);
  return out;
}

// The reference itself: the interpreter (threaded) ends where a plain
// MaxNum / MinNum fold over the blocks does.
TEST(AtomicMinMax, InterpreterMatchesTheFold) {
  absl::StatusOr<Program> program = AtomicMinMaxProgram();
  ASSERT_TRUE(program.ok()) << program.status();
  std::vector<HostTensor> args = Arguments();
  std::vector<HostTensor> want = args;
  for (int k = 1; k <= 4; ++k) {
    auto* out = reinterpret_cast<float*>(want[k].data());
    for (int c = 0; c < kCols; ++c) {
      double acc = out[c];
      for (int b = 0; b < kBlocks; ++b) {
        acc = k % 2 ? interp::MaxNum(acc, Source(b, c))
                    : interp::MinNum(acc, Source(b, c));
      }
      out[c] = static_cast<float>(acc);
    }
  }
  absl::Status s = interpret(*program, Pointers(args), {.num_threads = 4});
  ASSERT_TRUE(s.ok()) << s;
  for (int k = 1; k <= 4; ++k) {
    SCOPED_TRACE(k);
    EXPECT_TRUE(SameBits(args[k], want[k]));
  }
}

TEST(AtomicMinMax, CompilesForSm90a) {
  absl::StatusOr<Program> program = AtomicMinMaxProgram();
  ASSERT_TRUE(program.ok()) << program.status();
  absl::StatusOr<CompiledKernel> kernel =
      compile(*program, {.target = Target::sm90a()});
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  EXPECT_NE(kernel->source().find("tl::atomic_min("), std::string::npos);
  EXPECT_NE(kernel->source().find("tl::atomic_max("), std::string::npos);
}

TEST(AtomicMinMaxGpu, MatchesTheInterpreterBitForBit) {
  TESSEL_SKIP_WITHOUT_GPU();
  absl::StatusOr<Program> program = AtomicMinMaxProgram();
  ASSERT_TRUE(program.ok()) << program.status();
  std::vector<HostTensor> reference = Arguments();
  absl::Status s = interpret(*program, Pointers(reference));
  ASSERT_TRUE(s.ok()) << s;

  absl::StatusOr<CompiledKernel> kernel =
      compile(*program, {.target = Target::detect()});
  ASSERT_TRUE(kernel.ok()) << kernel.status();
  std::vector<HostTensor> gpu = Arguments();
  std::vector<jit::DeviceBuffer> buffers;
  std::vector<TensorView> views;
  for (const HostTensor& t : gpu) {
    absl::StatusOr<jit::DeviceBuffer> b =
        jit::DeviceBuffer::Allocate(t.num_bytes());
    ASSERT_TRUE(b.ok()) << b.status();
    ASSERT_TRUE(b->CopyFromHost(t.data(), t.num_bytes()).ok());
    views.push_back(TensorView::Contiguous(b->ptr(), t.dtype(), t.shape()));
    buffers.push_back(*std::move(b));
  }
  ASSERT_TRUE(kernel->launch(views).ok());
  ASSERT_TRUE(jit::SynchronizeStream(nullptr).ok());
  for (size_t i = 0; i < gpu.size(); ++i) {
    ASSERT_TRUE(buffers[i].CopyToHost(gpu[i].data(), gpu[i].num_bytes()).ok());
    SCOPED_TRACE(i);
    EXPECT_TRUE(SameBits(gpu[i], reference[i]));
  }
}

}  // namespace
}  // namespace tessel

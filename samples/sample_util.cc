#include "samples/sample_util.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "samples/workload.h"
#include "tessel/target.h"
#include "tessel/testing.h"

namespace tessel::samples {

int MaxSharedBytes(int sm) {
  if (sm <= 0) return 0;
  return Target::cuda(absl::StrCat("sm_", sm)).max_shared_bytes();
}

bool HopperSharedMemory(int sm) {
  return sm >= 90 && MaxSharedBytes(sm) >= 227 * 1024;
}

void ParallelFor(int64_t n, const std::function<void(int64_t)>& fn) {
  const int64_t workers = std::min<int64_t>(
      n, std::max<unsigned>(1, std::thread::hardware_concurrency()));
  if (workers <= 1) {
    for (int64_t i = 0; i < n; ++i) fn(i);
    return;
  }
  std::atomic<int64_t> next{0};
  std::vector<std::thread> threads;
  for (int64_t w = 0; w < workers; ++w) {
    threads.emplace_back([&] {
      for (int64_t i = next++; i < n; i = next++) fn(i);
    });
  }
  for (std::thread& t : threads) t.join();
}

namespace {

// Elements drawn from one seed. Chunk 0 takes the caller's seed, so a
// tensor of at most this many elements is testing::RandomTensor's.
constexpr int64_t kRandomChunk = int64_t{1} << 20;

// splitmix64: decorrelated seeds for the chunks after the first.
uint64_t ChunkSeed(uint64_t seed, int64_t chunk) {
  if (chunk == 0) return seed;
  uint64_t z = seed + uint64_t(chunk) * 0x9E3779B97F4A7C15ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

}  // namespace

absl::StatusOr<HostTensor> RandomInput(DataType dtype,
                                       std::vector<int64_t> shape,
                                       uint64_t seed, double scale) {
  const testing::RandomOptions options{
      .low = -scale, .high = scale, .min_abs = scale / 32};
  const int64_t n = NumElements(shape);
  // Sub-byte dtypes pack elements across chunk boundaries: one draw.
  if (n <= kRandomChunk || dtype_bits(dtype) % 8 != 0) {
    return testing::RandomTensor(dtype, std::move(shape), seed, options);
  }
  // Big inputs (a 8192 x 28672 operand holds 235M elements) are drawn in
  // chunks on every core: one sequential draw took over 20 s.
  absl::StatusOr<HostTensor> created = HostTensor::Create(dtype, shape);
  if (!created.ok()) return created.status();
  HostTensor out = *std::move(created);
  const int64_t chunks = (n + kRandomChunk - 1) / kRandomChunk;
  const size_t element_bytes = dtype_bits(dtype) / 8;
  std::vector<absl::Status> status(chunks);
  ParallelFor(chunks, [&](int64_t c) {
    const int64_t begin = c * kRandomChunk;
    const int64_t count = std::min(kRandomChunk, n - begin);
    absl::StatusOr<HostTensor> part =
        testing::RandomTensor(dtype, {count}, ChunkSeed(seed, c), options);
    if (!part.ok()) {
      status[c] = part.status();
      return;
    }
    std::memcpy(out.data() + begin * element_bytes, part->data(),
                count * element_bytes);
  });
  for (const absl::Status& s : status)
    if (!s.ok()) return s;
  return out;
}

HostTensor F64Tensor(std::vector<int64_t> shape, std::vector<double> values) {
  HostTensor t(f64, std::move(shape));
  // f64 elements are stored as doubles: copy the bytes.
  std::memcpy(t.data(), values.data(),
              std::min(t.num_bytes(), values.size() * sizeof(double)));
  return t;
}

int64_t NumElements(const std::vector<int64_t>& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

Expected ExpectedNear(std::string tensor, HostTensor reference) {
  double max_abs = 0;
  for (double v : reference.to_doubles()) {
    max_abs = std::max(max_abs, std::fabs(v));
  }
  const double atol = 5e-3 * std::max(1.0, max_abs);
  return Expected{std::move(tensor), std::move(reference), 1e-2, atol};
}

}  // namespace tessel::samples

#include "samples/sample_util.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <thread>
#include <utility>

#include "tessel/testing.h"

namespace tessel::samples {

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

absl::StatusOr<HostTensor> RandomInput(DataType dtype,
                                       std::vector<int64_t> shape,
                                       uint64_t seed, double scale) {
  return testing::RandomTensor(
      dtype, std::move(shape), seed,
      {.low = -scale, .high = scale, .min_abs = scale / 32});
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

}  // namespace tessel::samples

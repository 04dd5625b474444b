// The median the benchmarks report (the upper one of an even count; 0 for
// no samples).
#ifndef TESSEL_BENCH_MEDIAN_H_
#define TESSEL_BENCH_MEDIAN_H_

#include <algorithm>
#include <vector>

namespace tessel::bench {

inline double Median(std::vector<double> samples) {
  if (samples.empty()) return 0;
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

}  // namespace tessel::bench

#endif  // TESSEL_BENCH_MEDIAN_H_

// The software prefetch of the matrix-vector kernels (decode), which walk
// a matrix in passes of a few rows, one block of each row per step.
//
// Short rows (a 896-wide Q8_0 row is 952 bytes, a 2048-wide Q4_K row 1152)
// are too short for the hardware prefetcher to get ahead of the pass's
// interleaved streams, so each step also prefetches its share of the next
// pass's rows, which follow the pass in memory, in address order: over the
// pass every byte of the next one is requested once. Long rows stream well
// on their own, and there the prefetches only cost instructions.
//
// Internal linkage, as simd_helpers.h explains.
#pragma once

#include <immintrin.h>

#include <cstdint>

namespace synapse::cpu {
namespace {

class NextPassPrefetch {
 public:
  // Rows up to this long get prefetches.
  static constexpr uint64_t kShortRowBytes = 4096;

  // A pass of pass_rows rows from `pass` (stride w_stride) in `steps` steps.
  NextPassPrefetch(const uint8_t* pass, uint64_t w_stride, int pass_rows, int64_t steps)
      : next_(reinterpret_cast<const char*>(pass + pass_rows * w_stride)),
        per_step_(w_stride <= kShortRowBytes && steps > 0 ? (pass_rows * w_stride + steps - 1) / steps : 0) {}

  // Step s's share. A prefetch never faults, even past the matrix's end.
  void step(int64_t s) const {
    const char* ahead = next_ + s * per_step_;
    for (uint64_t b = 0; b < per_step_; b += 64) _mm_prefetch(ahead + b, _MM_HINT_T2);
  }

 private:
  const char* next_;
  uint64_t per_step_;
};

}  // namespace
}  // namespace synapse::cpu

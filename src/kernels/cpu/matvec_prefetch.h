// The software prefetch of the matrix-vector kernels (decode), which walk
// a matrix in passes of a few rows, one block of each row per step.
//
// A pass reads its rows side by side: eight interleaved streams that each
// end after one row (a 896-wide Q8_0 row is 952 bytes), so the hardware
// prefetcher never gets far enough ahead, and a core that computes while
// it waits reads far below the memory's bandwidth. So each step also
// requests its share of the pass kPassesAhead passes on, in address order:
// over a pass every byte of that pass is requested once, as one linear
// stream. Measured on an AMD EPYC (Zen 4, 28 GB/s from one core), 1-thread
// decode of a Qwen2.5-0.5B-shaped Q8_0 file, interleaved medians: one pass
// ahead and short rows only 32.7 tok/s, two passes 36.5, four 37-38 (as
// eight), for long rows too; the T0 hint fell to 19-21 (the prefetches
// then hold the core's L1 miss buffers), NTA too.
//
// Internal linkage, as simd_helpers.h explains.
#pragma once

#include <cstdint>

namespace synapse::cpu {
namespace {

class NextPassPrefetch {
 public:
  static constexpr int kPassesAhead = 4;

  // A pass of pass_rows rows from `pass` (stride w_stride) in `steps` steps,
  // in a matrix whose bytes end at `end`. The first pass of a walk
  // (`first`) requests the next kPassesAhead passes, so that the window is
  // full from the second pass on; nothing past `end` is requested (the
  // bytes after a matrix, another expert's, are seldom read next).
  NextPassPrefetch(const uint8_t* pass, uint64_t w_stride, int pass_rows, int64_t steps, const uint8_t* end,
                   bool first) {
    const uint64_t pass_bytes = pass_rows * w_stride;
    const uint8_t* from = pass + (first ? 1 : kPassesAhead) * pass_bytes;
    const uint8_t* window_end = pass + (kPassesAhead + 1) * pass_bytes;
    const uint8_t* to = window_end < end ? window_end : end;  // no std template here: see simd_helpers.h
    next_ = reinterpret_cast<const char*>(from);
    per_step_ = steps > 0 && from < to ? (static_cast<uint64_t>(to - from) + steps - 1) / steps : 0;
  }

  // Step s's share. A prefetch never faults, even past the matrix's end.
  // An asm statement, not _mm_prefetch: GCC deleted the loop of builtin
  // prefetches as code without effect where this was inlined into the
  // float kernels (dot_float.cpp), and nothing was asked for.
  void step(int64_t s) const {
    const char* ahead = next_ + s * per_step_;
    for (uint64_t b = 0; b < per_step_; b += 64) asm volatile("prefetcht2 %0" : : "m"(ahead[b]));
  }

 private:
  const char* next_;
  uint64_t per_step_;
};

}  // namespace
}  // namespace synapse::cpu

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
// A kernel that streams (`Reread::kNextPass`) also requests its share of
// the next pass once more at each step. The likely reason it helps: some
// far requests are lost (a burst of fast steps after one that waited on
// memory finds the core's queue of misses full), and the pass then waits
// on memory for those lines; the second request finds a line in L2
// (cheap) or fetches it in time. Interleaved medians, AMD EPYC (Zen 4,
// about 21 GB/s from one core), decode: Qwen2.5-0.5B-shaped Q8_0 1.12x at
// 1 thread and 1.09x at 2, its F16 1.06x, OLMoE-1B-7B Q8_0 1.04x,
// Llama-3.2-1B-shaped Q4_0 1.04x and Q4_K_M 1.03x. Q5_K and Q6_K products
// compute hardly faster than memory streams even there (bench/kernels
// "l2" about 25 GB/s): the extra instructions only cost them (Q6_K "dram"
// 0.91x), so they do not reread. Rereading two passes ahead instead, or
// one and two, did no better; far requests eight passes ahead neither.
//
// Internal linkage, as simd_helpers.h explains.
#pragma once

#include <cstdint>

namespace synapse::cpu {
namespace {

enum class Reread { kNo, kNextPass };

class NextPassPrefetch {
 public:
  static constexpr int kPassesAhead = 4;

  // A pass of pass_rows rows from `pass` (stride w_stride) in `steps` steps,
  // in a matrix whose bytes end at `end`. The first pass of a walk
  // (`first`) requests the next kPassesAhead passes, so that the window is
  // full from the second pass on, and rereads nothing; nothing past `end` is
  // requested (the bytes after a matrix, another expert's, are seldom read
  // next).
  NextPassPrefetch(const uint8_t* pass, uint64_t w_stride, int pass_rows, int64_t steps, const uint8_t* end,
                   bool first, Reread reread) {
    const uint64_t pass_bytes = pass_rows * w_stride;
    far_ = Window(pass + (first ? 1 : kPassesAhead) * pass_bytes, pass + (kPassesAhead + 1) * pass_bytes, end, steps);
    if (!first && reread == Reread::kNextPass) near_ = Window(pass + pass_bytes, pass + 2 * pass_bytes, end, steps);
  }

  // Step s's share of both windows. A prefetch never faults.
  void step(int64_t s) const {
    far_.step(s);
    near_.step(s);
  }

 private:
  // Bytes [from, min(to, end)) requested in `steps` equal shares.
  class Window {
   public:
    Window() = default;
    Window(const uint8_t* from, const uint8_t* to, const uint8_t* end, int64_t steps) {
      if (end < to) to = end;  // no std template here: see simd_helpers.h
      next_ = reinterpret_cast<const char*>(from);
      per_step_ = steps > 0 && from < to ? (static_cast<uint64_t>(to - from) + steps - 1) / steps : 0;
    }

    // An asm statement, not _mm_prefetch: GCC deleted the loop of builtin
    // prefetches as code without effect where this was inlined into the
    // float kernels (dot_float.cpp), and nothing was asked for.
    void step(int64_t s) const {
      const char* ahead = next_ + s * per_step_;
      for (uint64_t b = 0; b < per_step_; b += 64) asm volatile("prefetcht2 %0" : : "m"(ahead[b]));
    }

   private:
    const char* next_ = nullptr;
    uint64_t per_step_ = 0;
  };

  Window far_, near_;
};

}  // namespace
}  // namespace synapse::cpu

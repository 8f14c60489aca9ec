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
// A Zen 5 (AMD EPYC, family 1Ah, 24-39 GB/s from one core as its
// neighbours allow) streams better when each step asks, into L1, for the
// bytes the walk reads kWalkAheadBytes later, in every row of their pass
// (MatvecPrefetchStyle::kWalkAhead): the requests follow the reads one
// for one, the same distance ahead whatever the row length. Before, each
// step asked for its own bytes in the first pass at least 8 KiB on: a
// whole pass on for long rows (17 KiB for a 2048-wide Q8_0 row, 70 KiB
// for an 8192-wide one), more than L1 holds, so lines arrived early and
// were evicted before their read. Against that, interleaved paired
// medians of 1-thread decode (synapse bench tg64, 8 rounds, membw 31-33
// GB/s): Qwen2.5-0.5B-shaped Q8_0 1.25x, Q4_0 1.14x, Llama-3.2-1B-shaped
// Q8_0 1.13x, Q4_K_M 1.05x, OLMoE-1B-7B Q8_0 1.08x; bench/kernels "dram"
// Q6_K 1.31x, Q5_K 1.11x, Q4_K 1.08x, "l2" Q8_0 1.26x; its short rows
// ("dram-short", 1024 wide) 0.92-0.98x in 10 rounds that ranged
// 0.72-1.30x, where Qwen's 896-wide rows decode faster as above. 12 KiB
// ahead instead: Qwen 0.86x, Llama 0.99x; 5 KiB: 0.89x, 0.95x.
//
// An Intel Xeon with AMX (KVM guest, family 6, 14.3-14.7 GB/s from one
// core) walks ahead better with Q8_0 and Q4_0 and worse with the K-quants
// (MatvecWeights): 1-thread decode, synapse bench tg64 with either style
// in one binary, interleaved: Qwen2.5-0.5B-shaped Q8_0 24.4-25.2 against
// 22.3-23.0 t/s (4 rounds), Q4_0 34.3-34.8 against 31.2-31.5 (3),
// Llama-3.2-1B-shaped Q8_0 10.43-10.44 against 9.13-9.29 (2), Q4_K_M
// 13.8-14.8 against 14.3-15.5 (8 rounds, every one slower). Windows stay
// the style on other CPUs: they were tuned on a Zen 4, where T0 requests
// in windows lost half the speed, and where walking ahead streams slower
// (an EPYC guest, family 19h, 25 GB/s from one core: bench/kernels "dram"
// Q8_0 15.8 against 24.2 GB/s, Q4_0 12.0 against 22.3, Q4_K 11.2 against
// 19.2, Q6_K 11.8 against 16.6).
//
// Internal linkage, as simd_helpers.h explains.
#pragma once

#include <cstdint>

#include "kernels/cpu/matvec_prefetch_style.h"

namespace synapse::cpu {
namespace {

enum class Reread { kNo, kNextPass };

inline constexpr uint64_t kWalkAheadBytes = 8192;

// What MatvecPrefetchStyle::kWalkAhead asks for while a pass of pass_rows
// rows (w_stride apart) walks `steps` steps of step_bytes from `pass`,
// the passes following each other in the matrix: at step s, the step the
// walk reaches kWalkAheadBytes (rounded up to whole steps) later, in this
// pass or one further down.
class WalkAhead {
 public:
  WalkAhead() = default;
  // pass_rows and steps at least 1 (NextPassPrefetch's guard).
  WalkAhead(const uint8_t* pass, uint64_t w_stride, int pass_rows, uint64_t step_bytes, int64_t steps,
            const uint8_t* end)
      : w_stride_(w_stride), step_bytes_(step_bytes), rows_(pass_rows) {
    const uint64_t walk_step = pass_rows * step_bytes;
    const int64_t ahead = static_cast<int64_t>((kWalkAheadBytes + walk_step - 1) / walk_step);
    const int64_t passes = ahead / steps;  // passes on for the first steps; one more from `split_`
    const auto at = [&](int64_t pass_index) {
      return reinterpret_cast<intptr_t>(pass) + pass_index * static_cast<int64_t>(pass_rows * w_stride) +
             (ahead - pass_index * steps) * static_cast<int64_t>(step_bytes);
    };
    split_ = (passes + 1) * steps - ahead;
    near_ = at(passes);
    far_ = at(passes + 1);
    last_ = reinterpret_cast<intptr_t>(end) - static_cast<intptr_t>((pass_rows - 1) * w_stride + step_bytes);
  }

  // The first row's bytes of step s's target, or nullptr when not all of
  // the target's rows lie in the matrix.
  const char* target(int64_t s) const {
    const intptr_t at = (s < split_ ? near_ : far_) + s * static_cast<int64_t>(step_bytes_);
    return at <= last_ ? reinterpret_cast<const char*>(at) : nullptr;
  }

  // A line every 64 bytes from the target's first byte in each row, the
  // same count at every step. Rounding to lines first made the count vary,
  // a branch the core mispredicted; against that, 1-thread decode on a Zen
  // 5: Qwen2.5-0.5B-shaped and Llama-3.2-1B-shaped Q8_0 1.09-1.10x,
  // OLMoE-1B-7B 1.14x. Only the last line of a row's share of the pass can
  // go unasked (it is read on demand).
  void step(int64_t s) const {
    const char* from = target(s);
    if (!from) return;
    for (int r = 0; r < rows_; ++r)
      for (uint64_t b = 0; b < step_bytes_; b += 64) asm volatile("prefetcht0 %0" : : "m"(from[r * w_stride_ + b]));
  }

 private:
  intptr_t near_ = 0, far_ = 0, last_ = INTPTR_MIN;  // default: no target at any step
  int64_t split_ = 0;
  uint64_t w_stride_ = 0, step_bytes_ = 0;
  int rows_ = 0;
};

class NextPassPrefetch {
 public:
  static constexpr int kPassesAhead = 4;

  // A pass of pass_rows rows from `pass` (stride w_stride) in `steps` steps
  // of step_bytes bytes of each row, in a matrix whose bytes end at `end`.
  // In windows, the first pass of a walk (`first`) requests the next
  // kPassesAhead passes, so that the window is full from the second pass
  // on, and rereads nothing. Nothing past `end` is requested (the bytes
  // after a matrix, another expert's, are seldom read next). The style is
  // this machine's for `weights`.
  NextPassPrefetch(const uint8_t* pass, uint64_t w_stride, int pass_rows, uint64_t step_bytes, int64_t steps,
                   const uint8_t* end, bool first, Reread reread, MatvecWeights weights) {
    const uint64_t pass_bytes = pass_rows * w_stride;
    if (pass_rows > 1 && steps > 0 && matvec_prefetch_style(weights) == MatvecPrefetchStyle::kWalkAhead) {
      walk_ = WalkAhead(pass, w_stride, pass_rows, step_bytes, steps, end);
      return;
    }
    far_ = Window(pass + (first ? 1 : kPassesAhead) * pass_bytes, pass + (kPassesAhead + 1) * pass_bytes, end, steps);
    if (!first && reread == Reread::kNextPass) near_ = Window(pass + pass_bytes, pass + 2 * pass_bytes, end, steps);
  }

  // Step s's share of what is asked for. A prefetch never faults.
  // kLinesUnrolled > 1 issues the windows' requests that many at a time,
  // sparing the loop's own instructions, for kernels whose steps span many
  // lines: the K-quant matvecs (18-27 lines a step). At 8, bench/kernels
  // "l2" (interleaved, fastest of 8-10 rounds, one Zen 4 core): Q4_K
  // 1.07-1.10x, Q5_K 1.05x, Q6_K 1.02-1.03x, "dram" within noise. Q8_0
  // and Q4_0 (9 lines a step) gained nothing, and the float kernels (a
  // line or two) lost to the extra checks (f16 "l2" 0.65-0.90x), so they
  // keep the plain loop.
  template <int kLinesUnrolled = 1>
  void step(int64_t s) const {
    far_.step<kLinesUnrolled>(s);
    near_.step<kLinesUnrolled>(s);
    walk_.step(s);
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
    template <int kLinesUnrolled>
    void step(int64_t s) const {
      const char* ahead = next_ + s * per_step_;
      constexpr uint64_t kUnrolledBytes = 64 * kLinesUnrolled;
      uint64_t b = 0;
      if constexpr (kLinesUnrolled > 1) {
        for (; b + kUnrolledBytes <= per_step_; b += kUnrolledBytes)
          for (uint64_t line = 0; line < kUnrolledBytes; line += 64)
            asm volatile("prefetcht2 %0" : : "m"(ahead[b + line]));
      }
      for (; b < per_step_; b += 64) asm volatile("prefetcht2 %0" : : "m"(ahead[b]));
    }

   private:
    const char* next_ = nullptr;
    uint64_t per_step_ = 0;
  };

  Window far_, near_;
  WalkAhead walk_;
};

}  // namespace
}  // namespace synapse::cpu

// RoPE with its rotations computed once per position of a step instead of
// once per head of every layer: the cos and sin of each pair at each of the
// step's positions, by the reference formula (ref::rope_rotation), so the
// rotated values are the reference's. The frequencies (the pow) are
// computed once per parameter set. Every Rope node of a step shares the
// table: it is recomputed only when the frequencies or the positions differ
// from the last ones.
#pragma once

#include <cstdint>
#include <vector>

#include "kernels/ref/rope.h"

namespace synapse::cpu {

class RopeTable {
 public:
  RopeTable() = default;
  // Room for steps of up to max_tokens positions and max_pairs pairs.
  RopeTable(int64_t max_tokens, int64_t max_pairs);

  bool fits(const ref::RopeParams& params, int64_t tokens) const {
    return tokens <= max_tokens_ && params.rotary_dim / 2 <= max_pairs_;
  }

  // Holds the rotations of `params` at positions[0, tokens) (fits() must hold).
  void prepare(const ref::RopeParams& params, const int32_t* positions, int64_t tokens);

  // cos and sin of pair `pair` of token t of the last prepare.
  float cos_of(int64_t t, int64_t pair) const { return cos_[static_cast<size_t>(t * max_pairs_ + pair)]; }
  float sin_of(int64_t t, int64_t pair) const { return sin_[static_cast<size_t>(t * max_pairs_ + pair)]; }

  // As ref::rope for tokens [begin, end) of x and y [tokens, width], with
  // the prepared rotations.
  void apply(const float* x, int64_t begin, int64_t end, int64_t width, const ref::RopeParams& params,
             float* y) const;

  uint64_t bytes() const {
    return (cos_.size() + sin_.size()) * sizeof(float) + inv_freq_.size() * sizeof(double) +
           positions_.size() * sizeof(int32_t);
  }

 private:
  int64_t max_tokens_ = 0;
  int64_t max_pairs_ = 0;
  ref::RopeParams params_;  // of the frequencies and rotations held
  bool have_freqs_ = false;
  int64_t tokens_ = -1;     // positions held; -1: none
  std::vector<double> inv_freq_;
  std::vector<int32_t> positions_;
  std::vector<float> cos_, sin_;  // [max_tokens, max_pairs]
};

}  // namespace synapse::cpu

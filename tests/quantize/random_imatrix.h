// A random importance matrix for a model file, shaped as llama.cpp's
// imatrix tool would write it for that model, for tests that quantize with
// one.
#pragma once

#include <cmath>
#include <random>
#include <string>

#include "format/gguf_reader.h"
#include "quantize/imatrix_file.h"

namespace synapse::test {

// An entry for every weight of two or three dimensions in a block and for
// output.weight: random positive sums over random integer counts, one per
// expert of a 3-D tensor (its last expert saw no tokens: count 0). The
// first entry's count is 2.5, which llama.cpp's loader rounds to 3.
// With `extra_entries`, also a token_embd.weight entry one column too long
// (llama.cpp then quantizes token_embd unweighted) and one for a tensor the
// model lacks.
inline quant::Imatrix random_imatrix(const std::string& model, uint32_t seed, bool extra_entries = false) {
  const GgufFile file = GgufFile::open(model);
  std::mt19937 rng(seed);
  std::normal_distribution<float> log_importance(0.0f, 1.5f);
  std::uniform_int_distribution<int> tokens(1, 600);
  quant::Imatrix m;
  m.datasets = {"calibration.txt"};
  m.chunk_count = 12;
  m.chunk_size = 512;
  auto add = [&](const std::string& name, uint64_t row, uint64_t n_matrices) {
    quant::ImatrixEntry& e = m.entries[name];
    for (uint64_t j = 0; j < n_matrices; ++j) {
      const bool unused_expert = n_matrices > 1 && j + 1 == n_matrices;
      e.counts.push_back(unused_expert ? 0.0f : static_cast<float>(tokens(rng)));
      for (uint64_t i = 0; i < row; ++i) e.in_sum2.push_back(e.counts.back() * std::exp(log_importance(rng)));
    }
  };
  for (const GgufTensorInfo& t : file.tensors()) {
    const uint64_t n_matrices = t.dims.size() > 2 ? t.dims[2] : 1;
    const bool matrix = t.dims.size() >= 2 && t.dims[1] > 1;
    if (matrix && (t.name.rfind("blk.", 0) == 0 || t.name == "output.weight")) add(t.name, t.dims[0], n_matrices);
  }
  if (!m.entries.empty()) m.entries.begin()->second.counts[0] = 2.5f;
  if (extra_entries) {
    if (const GgufTensorInfo* embd = file.find_tensor("token_embd.weight")) add(embd->name, embd->dims[0] + 1, 1);
    add("blk.999.ffn_up.weight", 32, 1);
  }
  return m;
}

}  // namespace synapse::test

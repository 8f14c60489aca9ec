// The random values of a synthetic model, generated lazily tensor by tensor.
#pragma once

#include <cstdint>
#include <vector>

#include "encoding/encoding.h"
#include "synth/synth_arch.h"

namespace synapse::synth {

// Fills dst (n_bytes, the tensor laid out in `encoding`) with the tensor's
// values, row by row, each row quantized on its own. A row's values depend
// only on (seed, tensor name, row index), so the bytes are the same for any
// thread count (0: one per core).
void fill_tensor(uint8_t* dst, uint64_t n_bytes, const TensorSpec& tensor, Encoding encoding,
                 const SynthShape& shape, uint64_t seed, unsigned threads);

// Llama 3's rope scaling as per-frequency divisors, computed as llama.cpp's
// converter does (factor 32, low/high frequency factors 1 and 4, original
// context 8192): head_dim / 2 values.
std::vector<float> llama3_rope_factors(uint32_t head_dim, float rope_theta);

}  // namespace synapse::synth

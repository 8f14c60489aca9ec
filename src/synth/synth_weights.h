// The random values of a synthetic model, generated lazily tensor by tensor.
#pragma once

#include <cstdint>
#include <vector>

#include "encoding/encoding.h"
#include "model/llama3_rope.h"
#include "synth/synth_arch.h"

namespace synapse::synth {

// Fills dst (n_bytes, the tensor laid out in `encoding`) with the tensor's
// values, row by row, each row quantized on its own. A row's values depend
// only on (seed, tensor name, row index), so the bytes are the same for any
// thread count (0: one per core).
void fill_tensor(uint8_t* dst, uint64_t n_bytes, const TensorSpec& tensor, Encoding encoding,
                 const SynthShape& shape, uint64_t seed, unsigned threads);

// The Llama 3 rope scaling of synthetic files' rope_freqs.weight (Llama
// 3.2's: factor 32, low/high frequency factors 1 and 4, original context 8192).
inline constexpr Llama3RopeScaling kLlama3Rope{32, 1, 4, 8192};

}  // namespace synapse::synth

// Random weights scaled so activations stay finite through every layer:
// projections are uniform with std 1/sqrt(fan_in), which keeps a normalized
// input at unit scale; projections that write back into the residual stream
// (attn_output, ffn_down) are further scaled by 1/sqrt(2 n_layer) so the
// residual grows slowly with depth. Norm weights sit near 1 (jittered, so an
// engine that ignores them differs) and biases near 0.
#include "synth/synth_weights.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <numbers>
#include <thread>

#include "kernels/cpu/kquant_encode.h"
#include "synapse/error.h"

namespace synapse::synth {

namespace {

// splitmix64's output function: a strong 64-bit mixer.
uint64_t mix64(uint64_t z) {
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

uint64_t fnv1a(const std::string& s) {
  uint64_t h = 0xCBF29CE484222325ull;
  for (unsigned char c : s) h = (h ^ c) * 0x100000001B3ull;
  return h;
}

// One row's stream: splitmix64 from a seed mixed from the tensor key and row.
class RowStream {
 public:
  RowStream(uint64_t tensor_key, uint64_t row) : state_(mix64(tensor_key ^ mix64(row + 1))) {}
  // out[i] = center + half_width * the next uniform value in [-1, 1). The
  // state is a local and the 24-bit integer converts through int32 (the
  // same float): both let the loop vectorize.
  void fill(float* out, uint64_t n, float center, float half_width) {
    uint64_t state = state_;
    for (uint64_t i = 0; i < n; ++i) {
      state += 0x9E3779B97F4A7C15ull;
      const float unit = static_cast<float>(static_cast<int32_t>(mix64(state) >> 40)) * 0x1p-23f - 1.0f;
      out[i] = center + half_width * unit;
    }
    state_ = state;
  }

 private:
  uint64_t state_;
};

// Values are center + half_width * U[-1, 1).
struct Distribution {
  float center;
  float half_width;
};

constexpr float kNormJitter = 0.1f;
constexpr float kBiasHalfWidth = 0.02f;

Distribution distribution(const TensorSpec& t, const SynthShape& s) {
  // Uniform on [-a, a] has std a/sqrt(3).
  const float unit = std::sqrt(3.0f / static_cast<float>(t.dims[0]));
  switch (t.role) {
    case TensorRole::Norm: return {1.0f, kNormJitter};
    case TensorRole::Bias: return {0.0f, kBiasHalfWidth};
    case TensorRole::AttnOutput:
    case TensorRole::FfnDown: return {0.0f, unit / std::sqrt(2.0f * static_cast<float>(s.n_layer))};
    default: return {0.0f, unit};
  }
}

// Runs fn(first_row, end_row) over [0, n_rows) on up to `threads` threads,
// rethrowing the first failure.
template <typename Fn>
void for_row_ranges(uint64_t n_rows, uint64_t row_elems, unsigned threads, Fn fn) {
  constexpr uint64_t kMinElemsPerThread = uint64_t{1} << 16;
  if (threads == 0) threads = std::max(1u, std::thread::hardware_concurrency());
  const uint64_t useful = std::max<uint64_t>(1, n_rows * row_elems / kMinElemsPerThread);
  const auto n = static_cast<unsigned>(std::min<uint64_t>({threads, useful, n_rows}));
  if (n <= 1) {
    fn(0, n_rows);
    return;
  }
  std::vector<std::thread> pool;
  std::vector<std::exception_ptr> errors(n);
  for (unsigned i = 0; i < n; ++i) {
    pool.emplace_back([&, i] {
      try {
        fn(n_rows * i / n, n_rows * (i + 1) / n);
      } catch (...) {
        errors[i] = std::current_exception();
      }
    });
  }
  for (std::thread& t : pool) t.join();
  for (const std::exception_ptr& e : errors)
    if (e) std::rethrow_exception(e);
}

}  // namespace

void fill_tensor(uint8_t* dst, uint64_t n_bytes, const TensorSpec& t, Encoding encoding,
                 const SynthShape& shape, uint64_t seed, unsigned threads) {
  const uint64_t row_elems = t.dims[0];
  uint64_t n_rows = 1;
  for (size_t i = 1; i < t.dims.size(); ++i) n_rows *= t.dims[i];
  const uint64_t row_size = row_bytes(encoding, row_elems);
  if (row_size * n_rows != n_bytes)
    throw Error(ErrorKind::InvalidValue, "tensor byte size does not match its shape",
                Error::kNoOffset, t.name);

  if (t.role == TensorRole::RopeFreqs) {
    const std::vector<float> factors = llama3_rope_factors(kLlama3Rope, shape.head_dim, shape.rope_theta);
    cpu::encode_row(encoding, factors.data(), dst, static_cast<int64_t>(factors.size()));
    return;
  }

  const Distribution d = distribution(t, shape);
  const uint64_t tensor_key = fnv1a(t.name) ^ mix64(seed);
  for_row_ranges(n_rows, row_elems, threads, [&](uint64_t first, uint64_t end) {
    std::vector<float> row(row_elems);
    for (uint64_t r = first; r < end; ++r) {
      RowStream(tensor_key, r).fill(row.data(), row_elems, d.center, d.half_width);
      cpu::encode_row(encoding, row.data(), dst + r * row_size, static_cast<int64_t>(row_elems));
    }
  });
}

}  // namespace synapse::synth

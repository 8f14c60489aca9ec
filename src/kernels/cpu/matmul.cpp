#include "kernels/cpu/matmul.h"

#include <algorithm>
#include <array>

namespace synapse::cpu {
namespace {

// Tokens whose activations are kept hot while a worker sweeps its rows.
constexpr int64_t kTokenBlock = 64;
constexpr ActivationFormat kQuantizedFormats[] = {ActivationFormat::Q8, ActivationFormat::Q8K};

struct Activations {
  const uint8_t* rows = nullptr;
  uint64_t stride = 0;
};

// Whether p's rows go through its kernel's panel rather than its tiles.
bool uses_panel(const MatmulProduct& p, int64_t tokens) { return p.kernel.panel && tokens >= p.kernel.panel_min_tokens; }
// Whether p's whole matrix-vector passes go through its kernel's matvec.
bool uses_matvec(const MatmulProduct& p, int64_t tokens) {
  return p.kernel.matvec && tokens <= p.kernel.matvec_max_tokens;
}

// Rows a worker's share is a multiple of: what one call of the kernel takes.
int64_t row_grain(const MatmulProduct& p, int64_t tokens) {
  if (uses_panel(p, tokens)) return kPanelRows;
  return uses_matvec(p, tokens) ? p.kernel.matvec_rows : kMaxTileRows;
}

void add_bias(const MatmulProduct& p, int64_t row, int64_t rows, int64_t token, int64_t tokens) {
  if (!p.bias) return;
  const int64_t stride = p.w->rows;
  for (int64_t t = token; t < token + tokens; ++t)
    for (int64_t j = 0; j < rows; ++j) p.y[t * stride + row + j] += p.bias[row + j];
}

void multiply_rows(const MatmulProduct& p, const Activations& x, int64_t tokens, int64_t row_begin,
                   int64_t row_end) {
  const ref::EncodedMatrix& w = *p.w;
  if (uses_matvec(p, tokens)) {
    // Whole passes through the matrix-vector kernel, the rest through
    // tiles; several tokens take turns on blocks of rows.
    const int64_t pass = p.kernel.matvec_rows;
    const int64_t rows = (row_end - row_begin) / pass * pass;
    const int64_t fit = static_cast<int64_t>(kMatvecBlockBytes / w.row_stride) / pass * pass;
    const int64_t block = tokens == 1 ? rows : std::max(pass, fit);
    for (int64_t r = row_begin; r < row_begin + rows; r += block) {
      const int64_t count = std::min(block, row_begin + rows - r);
      for (int64_t t = 0; t < tokens; ++t)
        p.kernel.matvec(w.row(r), w.row_stride, count, x.rows + t * x.stride, w.cols, p.y + t * w.rows + r);
    }
    if (rows > 0) add_bias(p, row_begin, rows, 0, tokens);
    row_begin += rows;
  }
  if (uses_panel(p, tokens)) {
    // The panel streams every token past its repacked rows.
    for (int64_t r = row_begin; r < row_end; r += kPanelRows) {
      const int rows = static_cast<int>(std::min<int64_t>(kPanelRows, row_end - r));
      p.kernel.panel(w.row(r), w.row_stride, rows, x.rows, x.stride, static_cast<int>(tokens), w.cols, p.y + r,
                     w.rows);
      add_bias(p, r, rows, 0, tokens);
    }
    return;
  }
  for (int64_t t0 = 0; t0 < tokens; t0 += kTokenBlock) {
    const int64_t t_end = std::min(tokens, t0 + kTokenBlock);
    for (int64_t r = row_begin; r < row_end; r += kMaxTileRows) {
      const int rows = static_cast<int>(std::min<int64_t>(kMaxTileRows, row_end - r));
      for (int64_t t = t0; t < t_end;) {
        const bool wide = p.kernel.wide_tile && t_end - t >= kWideTileTokens;
        const int count = wide ? kWideTileTokens : static_cast<int>(std::min<int64_t>(kMaxTileTokens, t_end - t));
        (wide ? p.kernel.wide_tile : p.kernel.tile)(w.row(r), w.row_stride, rows, x.rows + t * x.stride, x.stride,
                                                    count, w.cols, p.y + t * w.rows + r, w.rows);
        add_bias(p, r, rows, t, count);
        t += count;
      }
    }
  }
}

}  // namespace

uint64_t matmul_scratch_bytes(int64_t tokens, int64_t cols) {
  uint64_t bytes = 0;
  for (ActivationFormat format : kQuantizedFormats) {
    const int64_t block = activation_block_elems(format);
    bytes += static_cast<uint64_t>(tokens) * activation_row_bytes(format, (cols + block - 1) / block * block);
  }
  return bytes;
}

void matmul_group(const float* x, int64_t tokens, std::span<const MatmulProduct> products, uint8_t* scratch,
                  ThreadPool& pool) {
  if (products.empty()) return;
  const int64_t cols = products.front().w->cols;
  // Where each format's rows go in scratch, and which formats are needed.
  std::array<Activations, 3> formats{};
  formats[static_cast<int>(ActivationFormat::F32)] = {reinterpret_cast<const uint8_t*>(x), cols * sizeof(float)};
  std::array<bool, 3> needed{};
  std::array<uint8_t*, 3> quantized{};
  for (const MatmulProduct& p : products) needed[static_cast<int>(p.kernel.activation)] = true;
  uint8_t* next = scratch;
  for (ActivationFormat format : kQuantizedFormats) {
    const int f = static_cast<int>(format);
    if (!needed[f]) continue;
    quantized[f] = next;
    formats[f] = {next, activation_row_bytes(format, cols)};
    next += tokens * formats[f].stride;
  }
  const auto quantize = [&](int64_t begin, int64_t end) {
    for (ActivationFormat format : kQuantizedFormats) {
      const int f = static_cast<int>(format);
      if (!needed[f]) continue;
      for (int64_t t = begin; t < end; ++t)
        quantize_activation_row(format, x + t * cols, cols, quantized[f] + t * formats[f].stride);
    }
  };
  // Few tokens (decode): quantize on the caller, saving a fork/join.
  if (tokens < pool.size()) {
    quantize(0, tokens);
  } else {
    pool.run([&](int worker, int n) {
      const Range share = split_range(tokens, worker, n);
      quantize(share.begin, share.end);
    });
  }
  pool.run([&](int worker, int n) {
    for (const MatmulProduct& p : products) {
      const Range share = split_range(p.w->rows, worker, n, row_grain(p, tokens));
      multiply_rows(p, formats[static_cast<int>(p.kernel.activation)], tokens, share.begin, share.end);
    }
  });
}

}  // namespace synapse::cpu

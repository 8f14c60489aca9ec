#include "exec/node_runner.h"

#include <algorithm>
#include <string>
#include <variant>

#include "ir/overloaded.h"
#include "kernels/ref/elementwise.h"
#include "kernels/ref/linear.h"
#include "kernels/ref/norm.h"
#include "kernels/ref/rope.h"
#include "kernels/ref/routing.h"
#include "kernels/ref/sigmoid.h"
#include "synapse/error.h"

namespace synapse::exec {
namespace {

// Items of an element-wise op per thread's share: an op smaller than twice
// this runs in one piece, as a fork/join costs about a microsecond.
constexpr int64_t kElementGrain = 4096;

class NodeRun {
 public:
  NodeRun(StepContext& ctx, const ir::Node& node, const OpSet& ops) : ctx_(ctx), node_(node), ops_(ops) {}

  void run() {
    if (prepare()) std::visit([&](const auto& op) { compute(op); }, node_.op);
  }

  bool prepare() {
    if (ir::is_entry(node_.op)) return false;
    TensorRef& result = out();
    const Extent extent = extent_of(ctx_.graph.value(*node_.result).type, ctx_.tokens);
    result.rows = extent.rows;
    result.cols = extent.cols;
    const bool tolerant = std::holds_alternative<ir::Merge>(node_.op);
    result.present = tolerant || std::all_of(node_.operands.begin(), node_.operands.end(),
                                             [&](ir::ValueId v) { return ctx_.values[v.index].present; });
    return result.present;
  }

 private:
  const TensorRef& in(size_t i) const { return ctx_.values[node_.operands[i].index]; }
  TensorRef& out() { return ctx_.values[node_.result->index]; }
  int64_t rows() const { return in(0).rows; }
  int64_t cols() const { return in(0).cols; }

  // fn(begin, end) over shares of the n elements of an element-wise op.
  template <class Fn>
  void each_element(int64_t n, const Fn& fn) const {
    ops_.for_shares(n, kElementGrain, fn);
  }
  // fn(begin, end) over shares of `rows` rows of `width` elements.
  template <class Fn>
  void each_row(int64_t rows, int64_t width, const Fn& fn) const {
    ops_.for_shares(rows, std::max<int64_t>(1, kElementGrain / std::max<int64_t>(1, width)), fn);
  }

  void compute(const ir::Input&) {}
  void compute(const ir::Output&) {}
  void compute(const ir::Embedding& op) {
    const ref::EncodedMatrix& table = ctx_.weights.matrix(op.table);
    if (!sliced(ctx_, op.table)) {
      const int32_t* ids = in(0).ids;
      float* y = out().data;
      return each_row(in(0).rows, table.cols, [&](int64_t begin, int64_t end) {
        ref::embedding(ids + begin, end - begin, table, y + begin * table.cols);
      });
    }
    // A paged table: each row is copied from its resident slice or read
    // from the file, never a whole slice loaded for one row.
    for (int64_t t = 0; t < in(0).rows; ++t) {
      const int32_t id = in(0).ids[t];
      if (id < 0 || id >= table.rows)
        throw Error(ErrorKind::InvalidValue,
                    "token id " + std::to_string(id) + " outside the vocabulary of " + std::to_string(table.rows));
      dequantize_row(table.encoding, ctx_.residency->row(op.table, id), out().data + t * table.cols, table.cols);
    }
  }
  void compute(const ir::MatMul& op) {
    const float* bias = op.bias ? ctx_.weights.vector(*op.bias) : nullptr;
    product(op.weight, in(0).data, rows(), bias, out().data);
  }
  void compute(const ir::Logits& op) {
    if (ctx_.sequences.size() <= 1) {
      const int64_t n = logits_rows_of(ctx_.output_rows, rows());
      product(op.weight, in(0).data + (rows() - n) * cols(), n, nullptr, out().data);
      out().rows = n;
      return;
    }
    // The last rows of each sequence, gathered: one product reads the
    // vocabulary-wide matrix once for all of them.
    float* gathered = ctx_.scratch.logits_input.data();
    int64_t n = 0;
    for (const StepSequence& sequence : ctx_.sequences) {
      const int64_t take = logits_rows_of(ctx_.output_rows, sequence.count);
      const float* first = in(0).data + (sequence.first + sequence.count - take) * cols();
      std::copy(first, first + take * cols(), gathered + n * cols());
      n += take;
    }
    product(op.weight, gathered, n, nullptr, out().data);
    out().rows = n;
  }
  // y = f(a, b) (b null for one operand) over shares of the elements.
  template <class Op>
  void element_wise(const Op& op) {
    const float* a = in(0).data;
    const float* b = node_.operands.size() > 1 ? in(1).data : nullptr;
    float* y = out().data;
    each_element(in(0).elements(), [&](int64_t begin, int64_t end) {
      op(a + begin, b ? b + begin : nullptr, y + begin, end - begin);
    });
  }
  void compute(const ir::Add&) {
    element_wise([](const float* a, const float* b, float* y, int64_t n) { ref::add(a, b, y, n); });
  }
  void compute(const ir::Mul&) {
    element_wise([](const float* a, const float* b, float* y, int64_t n) { ref::mul(a, b, y, n); });
  }
  void compute(const ir::Silu&) {
    element_wise([&](const float* x, const float*, float* y, int64_t n) { ops_.silu(ctx_, x, y, n); });
  }
  void compute(const ir::Sigmoid&) {
    element_wise([](const float* x, const float*, float* y, int64_t n) { ref::sigmoid(x, y, n); });
  }
  void compute(const ir::Gelu& op) {
    element_wise([&](const float* x, const float*, float* y, int64_t n) { ref::gelu(x, y, n, op.approximation); });
  }
  void compute(const ir::SwiGlu&) {
    element_wise([&](const float* gate, const float* up, float* y, int64_t n) { ops_.swiglu(ctx_, gate, up, y, n); });
  }
  void compute(const ir::Softmax&) {
    const float* x = in(0).data;
    float* y = out().data;
    const int64_t width = cols();
    each_row(rows(), width, [&](int64_t begin, int64_t end) {
      ref::softmax(x + begin * width, end - begin, width, y + begin * width, ctx_.accumulation);
    });
  }
  // The weight's length is the group normalised at a time (a whole row, or
  // one head for Qwen3's q/k norm); rows are contiguous, so groups are too.
  void compute(const ir::RmsNorm& op) {
    const int64_t group = ctx_.graph.weight(op.weight).shape.at(0);
    const float* x = in(0).data;
    const float* weight = ctx_.weights.vector(op.weight);
    float* y = out().data;
    each_row(rows() * (cols() / group), group, [&](int64_t begin, int64_t end) {
      ref::rms_norm(x + begin * group, end - begin, group, weight, op.eps, y + begin * group, ctx_.accumulation);
    });
  }
  void compute(const ir::LayerNorm& op) {
    const float* x = in(0).data;
    const float* weight = ctx_.weights.vector(op.weight);
    const float* bias = op.bias ? ctx_.weights.vector(*op.bias) : nullptr;
    float* y = out().data;
    const int64_t width = cols();
    each_row(rows(), width, [&](int64_t begin, int64_t end) {
      ref::layer_norm(x + begin * width, end - begin, width, weight, bias, op.eps, y + begin * width,
                      ctx_.accumulation);
    });
  }
  void compute(const ir::Rope& op) {
    const auto* llama3 = std::get_if<ir::RopeLlama3Scaling>(&op.scaling);
    const float* factors = llama3 ? ctx_.weights.vector(llama3->freq_factors) : nullptr;
    ops_.rope(ctx_, in(0).data, in(1).ids, rows(), cols(), ref::rope_params(op, factors), out().data);
  }
  // fn(kv, first, count) for each sequence of the step.
  template <class Fn>
  void each_sequence(const Fn& fn) const {
    if (ctx_.sequences.empty()) return fn(ctx_.kv, int64_t{0}, rows());
    for (const StepSequence& sequence : ctx_.sequences) fn(*sequence.kv, sequence.first, sequence.count);
  }
  // One past the last of count positions.
  static int64_t end_of(const int32_t* positions, int64_t count) {
    return count > 0 ? *std::max_element(positions, positions + count) + 1 : 0;
  }
  void compute(const ir::StateAppend& op) {
    const int32_t* positions = in(1).ids;
    each_sequence([&](KvState& kv, int64_t first, int64_t count) {
      for (int64_t t = first; t < first + count; ++t) kv.write(op.slot, positions[t], in(0).data + t * cols());
    });
    out().state = op.slot;
    out().rows = end_of(positions, rows());
  }
  // Each sequence's tokens attend to its own keys and values.
  void compute(const ir::CausalAttention& op) {
    const ref::AttentionShape shape{op.heads, op.kv_heads, op.head_dim, op.scale};
    const int32_t* positions = in(3).ids;
    each_sequence([&](const KvState& kv, int64_t first, int64_t count) {
      const int64_t end = end_of(positions + first, count);
      ops_.attention(ctx_, in(0).data + first * in(0).cols, positions + first, count, kv.rows(in(1).state, end),
                     kv.rows(in(2).state, end), shape, out().data + first * out().cols);
    });
  }
  void compute(const ir::TopKRoute& op) {
    ref::top_k_route(in(0).data, rows(), cols(), op, out().data, ctx_.scratch.route);
  }
  void compute(const ir::Merge& op) {
    const size_t first = op.mode == ir::MergeMode::GatedSum ? 1 : 0;
    TensorRef& result = out();
    std::fill(result.data, result.data + result.elements(), 0.0f);
    if (op.mode == ir::MergeMode::GatedSum && !in(0).present) {
      result.present = false;
      return;
    }
    bool any = false;
    for (size_t i = first; i < node_.operands.size(); ++i) {
      const TensorRef& x = in(i);
      if (!x.present) continue;
      if (op.mode == ir::MergeMode::GatedSum) {
        const TensorRef& gates = in(0);
        each_row(x.rows, x.cols, [&](int64_t begin, int64_t end) {
          ref::add_gated(gates.data + begin * gates.cols, gates.cols, static_cast<int64_t>(i - 1),
                         x.data + begin * x.cols, end - begin, x.cols, result.data + begin * x.cols);
        });
      } else if (!any) {
        std::copy(x.data, x.data + x.elements(), result.data);
      }
      any = true;
    }
    // SelectActive with nothing present has nothing to select.
    if (op.mode == ir::MergeMode::SelectActive) result.present = any;
  }

  void product(ir::TensorId weight, const float* x, int64_t tokens, const float* bias, float* y) {
    const ref::EncodedMatrix& w = ctx_.weights.matrix(weight);
    if (!sliced(ctx_, weight)) return ops_.matmul(ctx_, x, tokens, w, bias, y);
    // Paged in row slices: each is acquired, multiplied and released in
    // turn while the next one loads. With several tokens, a slice's output
    // columns are not contiguous, so tokens go one at a time; the kernels
    // are batch-invariant, so the results are the same bits.
    memory::WeightResidency& residency = *ctx_.residency;
    const memory::WeightChunks& slices = residency.plan().weights[weight.index];
    for (uint32_t s = 0; s < slices.count; ++s) {
      const uint32_t chunk = slices.first + s, next = chunk + 1;
      if (s + 1 < slices.count) residency.prefetch({&next, 1});
      const memory::ChunkPins pin(residency, {&chunk, 1});
      ctx_.weight_bytes_loaded += pin.loaded();
      const memory::Chunk& slice = residency.plan().chunks[chunk];
      ref::EncodedMatrix part = w;
      part.data = w.row(slice.row_begin);
      part.rows = slice.row_end - slice.row_begin;
      const float* part_bias = bias ? bias + slice.row_begin : nullptr;
      if (tokens == 1) {
        ops_.matmul(ctx_, x, 1, part, part_bias, y + slice.row_begin);
        continue;
      }
      for (int64_t t = 0; t < tokens; ++t)
        ops_.matmul(ctx_, x + t * w.cols, 1, part, part_bias, y + t * w.rows + slice.row_begin);
    }
  }

  StepContext& ctx_;
  const ir::Node& node_;
  const OpSet& ops_;
};

}  // namespace

void run_node(StepContext& ctx, ir::NodeId id, const OpSet& ops) { NodeRun(ctx, ctx.graph.node(id), ops).run(); }

bool prepare_node(StepContext& ctx, ir::NodeId id) {
  return NodeRun(ctx, ctx.graph.node(id), reference_ops()).prepare();
}

void skip_node(StepContext& ctx, ir::NodeId id, const ir::SkipSemantics& skip) {
  const ir::Node& node = ctx.graph.node(id);
  if (!node.result) return;
  TensorRef& result = ctx.values[node.result->index];
  result.present = false;
  const auto* bypass = std::get_if<ir::Bypass>(&skip);
  if (!bypass || bypass->output != *node.result) return;
  const TensorRef& input = ctx.values[bypass->input.index];
  if (!input.present) return;
  result.rows = input.rows;
  result.cols = input.cols;
  std::copy(input.data, input.data + input.elements(), result.data);
  result.present = true;
}

}  // namespace synapse::exec

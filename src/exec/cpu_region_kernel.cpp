#include "exec/cpu_region_kernel.h"

#include <algorithm>
#include <array>
#include <string>
#include <variant>

#include "exec/node_runner.h"
#include "exec/op_set.h"
#include "kernels/cpu/attention.h"
#include "kernels/cpu/matmul.h"
#include "kernels/cpu/rope_table.h"
#include "kernels/cpu/silu_ops.h"
#include "kernels/cpu/thread_pool.h"
#include "synapse/error.h"

namespace synapse::exec {
namespace {

// Pair rotations of RoPE per thread's share: fewer run in one piece.
constexpr int64_t kRopeGrain = 4096;

// Encoding ids whose dot kernels are chosen up front (all of ggml's ids are
// below it).
constexpr uint32_t kEncodingIds = 64;

class CpuOps final : public OpSet {
 public:
  CpuOps(cpu::CpuTarget target, int threads)
      : target_(target),
        silu_ops_(cpu::silu_ops(target)),
        pool_(threads),
        name_(std::string("cpu-") + cpu::to_string(target)) {
    for (uint32_t id = 0; id < kEncodingIds; ++id)
      dot_kernels_[id] = cpu::best_dot_kernel(static_cast<Encoding>(id), target_);
  }

  const char* name() const override { return name_.c_str(); }
  cpu::ThreadPool& pool() const { return pool_; }

  // The dot kernel for weights of `encoding` on this target (a null tile
  // when there is none). It depends on the encoding and target only, so it
  // is chosen once; the weights' data pointer is read at each product, as
  // it may change between steps.
  cpu::DotKernel dot_kernel(Encoding encoding) const {
    const auto id = static_cast<uint32_t>(encoding);
    return id < kEncodingIds ? dot_kernels_[id] : cpu::best_dot_kernel(encoding, target_);
  }

  void matmul(StepContext& ctx, const float* x, int64_t tokens, const ref::EncodedMatrix& w, const float* bias,
              float* y) const override {
    const cpu::DotKernel kernel = dot_kernel(w.encoding);
    if (!kernel.tile) return OpSet::matmul(ctx, x, tokens, w, bias, y);
    cpu::matmul(x, tokens, cpu::MatmulProduct{&w, bias, y, kernel}, ctx.scratch.activations.data(), pool_);
  }

  void silu(StepContext&, const float* x, float* y, int64_t n) const override { silu_ops_.silu(x, y, n); }

  void swiglu(StepContext&, const float* gate, const float* up, float* y, int64_t n) const override {
    silu_ops_.swiglu(gate, up, y, n);
  }

  // Rotations once per position of the step (shared by every layer's Rope
  // nodes), then tokens applied in parallel.
  void rope(StepContext& ctx, const float* x, const int32_t* positions, int64_t tokens, int64_t width,
            const ref::RopeParams& params, float* y) const override {
    cpu::RopeTable& table = ctx.scratch.rope;
    if (!table.fits(params, tokens)) return OpSet::rope(ctx, x, positions, tokens, width, params, y);
    table.prepare(params, positions, tokens);
    const int64_t rotations_per_token = std::max<int64_t>(1, width / 2);
    for_shares(tokens, std::max<int64_t>(1, kRopeGrain / rotations_per_token),
               [&](int64_t begin, int64_t end) { table.apply(x, begin, end, width, params, y); });
  }

  void attention(StepContext& ctx, const float* q, const int32_t* positions, int64_t tokens, const ref::StateRows& k,
                 const ref::StateRows& v, const ref::AttentionShape& shape, float* out) const override {
    if (shape.head_dim > cpu::kMaxAttentionHeadDim)
      return OpSet::attention(ctx, q, positions, tokens, k, v, shape, out);
    cpu::causal_attention(q, positions, tokens, k, v, shape, out, target_, pool_);
  }

 protected:
  void run_shares(int64_t n, int64_t grain, ShareFn fn, const void* share) const override {
    if (n < 2 * grain || pool_.size() == 1) return fn(share, 0, n);
    pool_.run([&](int worker, int workers) {
      const cpu::Range range = cpu::split_range(n, worker, workers, grain);
      if (range.begin < range.end) fn(share, range.begin, range.end);
    });
  }

 private:
  cpu::CpuTarget target_;
  cpu::SiluOps silu_ops_;
  std::array<cpu::DotKernel, kEncodingIds> dot_kernels_;
  mutable cpu::ThreadPool pool_;  // running ops changes no observable state of the op set
  std::string name_;
};

// Logits stay out of groups: they are computed for the output rows only.
bool is_product(const ir::Node& node) { return std::holds_alternative<ir::MatMul>(node.op); }

// One region on the CPU ops. Products of the same input within the region
// (Q, K, V; gate and up) are fused into one grouped product: they depend on
// nothing else, and every value of a region has its own buffer for the
// whole region, so computing them together at the first one's place is safe.
class CpuRegionKernel final : public RegionKernel {
 public:
  CpuRegionKernel(std::shared_ptr<const CpuOps> ops, const ir::Graph& graph, const ir::Region& region)
      : ops_(std::move(ops)) {
    std::vector<bool> planned(region.members.size(), false);
    for (size_t i = 0; i < region.members.size(); ++i) {
      if (planned[i]) continue;
      Step step{{region.members[i]}};
      const ir::Node& node = graph.node(region.members[i]);
      for (size_t j = i + 1; is_product(node) && j < region.members.size(); ++j) {
        const ir::Node& other = graph.node(region.members[j]);
        if (is_product(other) && other.operands[0] == node.operands[0]) {
          step.nodes.push_back(region.members[j]);
          planned[j] = true;
        }
      }
      products_ = std::max(products_, step.nodes.size());
      steps_.push_back(std::move(step));
    }
    group_.resize(products_);
  }

  const char* name() const override { return ops_->name(); }

  void run(StepContext& ctx, const ir::Region&) override {
    for (const Step& step : steps_) {
      if (step.nodes.size() == 1 || !run_group(ctx, step)) {
        for (ir::NodeId node : step.nodes) run_node(ctx, node, *ops_);
      }
    }
  }

 private:
  struct Step {
    std::vector<ir::NodeId> nodes;  // one node, or products of one input
  };

  // Runs a step's products as one group; false (nothing done) when one has
  // no CPU kernel or is paged in slices.
  bool run_group(StepContext& ctx, const Step& step) {
    size_t count = 0;
    for (ir::NodeId id : step.nodes) {
      const ir::Node& node = ctx.graph.node(id);
      const auto& matmul = std::get<ir::MatMul>(node.op);
      if (sliced(ctx, matmul.weight)) return false;  // loaded a slice at a time, by the node
      const ref::EncodedMatrix& w = ctx.weights.matrix(matmul.weight);
      const cpu::DotKernel kernel = ops_->dot_kernel(w.encoding);
      if (!kernel.tile) return false;
      const float* bias = matmul.bias ? ctx.weights.vector(*matmul.bias) : nullptr;
      group_[count++] = {&w, bias, nullptr, kernel};
    }
    const TensorRef& x = ctx.values[ctx.graph.node(step.nodes[0]).operands[0].index];
    for (size_t i = 0; i < count; ++i) {
      if (!prepare_node(ctx, step.nodes[i])) return true;  // input absent: every result is
      group_[i].y = ctx.values[ctx.graph.node(step.nodes[i]).result->index].data;
    }
    cpu::matmul_group(x.data, x.rows, std::span(group_).first(count), ctx.scratch.activations.data(), ops_->pool());
    return true;
  }

  std::shared_ptr<const CpuOps> ops_;
  std::vector<Step> steps_;
  size_t products_ = 1;
  std::vector<cpu::MatmulProduct> group_;  // planned once: a step allocates nothing
};

}  // namespace

std::shared_ptr<KernelRegistry> cpu_kernel_registry(const CpuKernelOptions& options) {
  if (options.threads < 1)
    throw Error(ErrorKind::InvalidValue, "thread count " + std::to_string(options.threads) + " is below 1");
  if (!cpu::cpu_supports(options.target))
    throw Error(ErrorKind::InvalidValue,
                std::string("this CPU cannot run kernels for target '") + cpu::to_string(options.target) + "'");
  auto registry = std::make_shared<KernelRegistry>();
  auto ops = std::make_shared<const CpuOps>(options.target, options.threads);
  registry->add([](const ir::Graph&, const ir::Region&) { return true; },
                [ops](const ir::Graph& graph, const ir::Region& region) -> std::shared_ptr<RegionKernel> {
                  return std::make_shared<CpuRegionKernel>(ops, graph, region);
                });
  return registry;
}

}  // namespace synapse::exec

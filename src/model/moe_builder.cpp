#include "model/moe_builder.h"

#include <vector>

#include "model/decoder_builder.h"
#include "synapse/error.h"

namespace synapse {

ExpertViewName split_expert_view(const std::string& name) {
  const size_t open = name.rfind('[');
  if (open == std::string::npos || name.back() != ']' || open + 2 >= name.size()) return {name, 0};
  uint32_t expert = 0;
  for (size_t i = open + 1; i + 1 < name.size(); ++i) {
    if (name[i] < '0' || name[i] > '9' || expert > 100000000) return {name, 0};
    expert = expert * 10 + static_cast<uint32_t>(name[i] - '0');
  }
  return {name.substr(0, open), expert};
}

ir::WeightDescriptor expert_view(const ir::WeightDescriptor& merged, uint32_t expert) {
  if (merged.shape.size() != 3 || merged.shape[0] <= 0 || merged.length % merged.shape[0] != 0)
    throw Error(ErrorKind::InvalidValue,
                "tensor '" + merged.name + "' of shape " + to_string(merged.shape) + " does not split into experts",
                Error::kNoOffset, merged.name);
  if (expert >= merged.shape[0])
    throw Error(ErrorKind::InvalidValue, "expert " + std::to_string(expert) + " of '" + merged.name + "' out of range",
                Error::kNoOffset, merged.name);
  const uint64_t slice = merged.length / static_cast<uint64_t>(merged.shape[0]);
  ir::WeightDescriptor view = merged;
  view.name = merged.name + "[" + std::to_string(expert) + "]";
  view.offset = merged.offset + expert * slice;
  view.length = slice;
  view.shape = {merged.shape[1], merged.shape[2]};
  return view;
}

namespace {

class MoeLayers {
 public:
  MoeLayers(DecoderGraphBuilder& d, const DenseFamily& family, const MoeHparams& moe)
      : d_(d), b_(d.graph()), features_(family.experts), moe_(moe) {}

  ir::ValueId block(uint32_t il, ir::ValueId h) {
    const float eps = d_.hparams().rms_eps;
    const int64_t embd = d_.embd(), ff = moe_.n_ff_expert, n = moe_.n_expert;

    b_.begin_region(ir::RegionKind::router(il));
    const ir::ValueId x = b_.rms_norm(h, d_.weight(block_tensor(il, "ffn_norm.weight"), {embd}), eps);
    const ir::ValueId scores =
        b_.softmax(b_.matmul(x, d_.weight(block_tensor(il, "ffn_gate_inp.weight"), {n, embd})));
    const ir::TopKRoute route{moe_.n_expert_used, ir::TiePolicy::LowestIndex, features_.normalize_top_k,
                              std::nullopt, ir::RouteScope::PerToken};
    const ir::ValueId gates = b_.top_k_route(scores, route);
    b_.set_name(gates, block_tensor(il, "ffn_moe_gates"));
    b_.end_region();

    std::vector<ir::ValueId> merge_operands{gates};
    for (uint32_t e = 0; e < moe_.n_expert; ++e) {
      b_.begin_region(ir::RegionKind::expert_of(il, e), ir::RegionActivation::routed(gates, e));
      const ir::TensorId gate = d_.view(expert(il, "ffn_gate_exps.weight", e, {ff, embd}));
      const ir::TensorId up = d_.view(expert(il, "ffn_up_exps.weight", e, {ff, embd}));
      const ir::TensorId down = d_.view(expert(il, "ffn_down_exps.weight", e, {embd, ff}));
      merge_operands.push_back(d_.swiglu_ffn(x, gate, up, down));
      b_.end_region();
    }
    const ir::ValueId shared = features_.shared_expert ? shared_expert(il, x) : ir::ValueId{};

    b_.begin_region(ir::RegionKind::merge(il));
    ir::ValueId out = b_.merge(ir::MergeMode::GatedSum, std::move(merge_operands));
    if (shared.valid()) out = b_.add(out, shared);
    const ir::ValueId result = b_.add(h, out);
    b_.set_name(result, block_tensor(il, "ffn_residual"));
    b_.end_region();
    return result;
  }

 private:
  // Expert e's [rows, cols] slice of the merged tensor (GGUF), or its own
  // tensor "NAME[e]" where the file stores experts apart (Hugging Face).
  ir::WeightDescriptor expert(uint32_t il, const char* what, uint32_t e, const TensorShape& shape) {
    const std::string name = block_tensor(il, what);
    const TensorTable& tensors = d_.tensors();
    if (!tensors.contains(name) && tensors.contains(name + "[0]"))
      return tensors.require(name + "[" + std::to_string(e) + "]", shape);
    return expert_view(tensors.require(name, {moe_.n_expert, shape[0], shape[1]}), e);
  }

  // qwen2moe's shared expert, an always-on Mlp region: its SwiGLU output
  // scaled per token by sigmoid(x . ffn_gate_inp_shexp).
  ir::ValueId shared_expert(uint32_t il, ir::ValueId x) {
    const int64_t embd = d_.embd(), ff = moe_.n_ff_shared;
    b_.begin_region(ir::RegionKind::mlp(il));
    const ir::TensorId gate = d_.weight(block_tensor(il, "ffn_gate_shexp.weight"), {ff, embd});
    const ir::TensorId up = d_.weight(block_tensor(il, "ffn_up_shexp.weight"), {ff, embd});
    const ir::TensorId down = d_.weight(block_tensor(il, "ffn_down_shexp.weight"), {embd, ff});
    const ir::ValueId y = d_.swiglu_ffn(x, gate, up, down);
    // The gate vector [n_embd] read as a one-row matrix [1, n_embd].
    ir::WeightDescriptor gate_row = d_.tensors().require(block_tensor(il, "ffn_gate_inp_shexp.weight"), {embd});
    gate_row.shape = {1, embd};
    const ir::ValueId weight = b_.sigmoid(b_.matmul(x, d_.view(std::move(gate_row))));
    // A one-column GatedSum: weight[t, 0] * y[t, :].
    const ir::ValueId scaled = b_.merge(ir::MergeMode::GatedSum, {weight, y});
    b_.end_region();
    return scaled;
  }

  DecoderGraphBuilder& d_;
  ir::GraphBuilder& b_;
  const ExpertFeatures& features_;
  const MoeHparams& moe_;
};

}  // namespace

ir::Graph build_moe_graph(const DenseFamily& family, const DenseHparams& hparams, const MoeHparams& moe,
                          const TensorTable& tensors, const GraphBounds& bounds) {
  DecoderGraphBuilder d(family, hparams, tensors, bounds);
  MoeLayers layers(d, family, moe);
  ir::ValueId h = d.embed();
  for (uint32_t il = 0; il < hparams.n_layer; ++il) h = layers.block(il, d.attention_block(il, h));
  return std::move(d).finish(h);
}

}  // namespace synapse

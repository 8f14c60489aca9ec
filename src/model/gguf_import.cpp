#include "model/gguf_import.h"

#include "ir/graph.h"

namespace synapse {

TensorTable gguf_tensor_table(const GgufFile& file) {
  TensorTable table;
  for (const GgufTensorInfo& t : file.tensors()) {
    ir::WeightDescriptor d;
    d.name = t.name;
    d.file = 0;
    d.offset = file.data_offset() + t.offset;  // the reader checked both against the file size
    d.length = t.n_bytes;
    d.encoding = t.encoding;
    // GGUF lists ne[0] (the contiguous dim) first; the IR is outermost first.
    d.shape.assign(t.dims.rbegin(), t.dims.rend());
    table.add(std::move(d));
  }
  return table;
}

Model load_gguf_model(const std::string& path, const LoadOptions& options) {
  const GgufFile file = GgufFile::open(path);
  const std::string& arch = file.metadata().get_string("general.architecture");
  const DenseFamily& family = find_family(arch);
  const TensorTable tensors = gguf_tensor_table(file);
  const DenseHparams hp = read_dense_hparams(file.metadata(), arch, tensors);

  Model model;
  model.info = gguf_model_info(file, arch, hp);
  const GraphBounds bounds = bounds_for(options, hp.n_ctx_train);
  model.graph = has_experts(file.metadata(), arch, family)
                    ? build_moe_graph(family, hp, read_moe_hparams(file.metadata(), arch, hp), tensors, bounds)
                    : build_dense_graph(family, hp, tensors, bounds);
  const uint64_t sizes[] = {file.file_size()};
  ir::check_weight_bounds(model.graph, sizes);
  model.files.push_back(file.mapping());
  return model;
}

}  // namespace synapse

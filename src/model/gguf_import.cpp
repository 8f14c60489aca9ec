#include "model/gguf_import.h"

#include <filesystem>

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

Model model_from_metadata(const GgufMetadata& metadata, const TensorTable& tensors,
                          std::vector<std::shared_ptr<MappedFile>> files, const std::string& fallback_name,
                          const LoadOptions& options) {
  const std::string& arch = metadata.get_string("general.architecture");
  const DenseFamily& family = find_family(arch);
  const DenseHparams hp = read_dense_hparams(metadata, arch, tensors);

  Model model;
  model.info = gguf_model_info(metadata, fallback_name, arch, hp);
  const GraphBounds bounds = bounds_for(options, hp.n_ctx_train);
  model.graph = has_experts(metadata, arch, family)
                    ? build_moe_graph(family, hp, read_moe_hparams(metadata, arch, hp), tensors, bounds)
                    : build_dense_graph(family, hp, tensors, bounds);
  std::vector<uint64_t> sizes;
  for (const auto& file : files) sizes.push_back(file->bytes().size());
  ir::check_weight_bounds(model.graph, sizes);
  model.files = std::move(files);
  return model;
}

Model load_gguf_model(const std::string& path, const LoadOptions& options) {
  const GgufFile file = GgufFile::open(path);
  return model_from_metadata(file.metadata(), gguf_tensor_table(file), {file.mapping()},
                             std::filesystem::path(file.path()).filename().string(), options);
}

}  // namespace synapse

#include "exec/weight_table.h"

#include <algorithm>
#include <optional>
#include <variant>

#include "synapse/error.h"

namespace synapse::exec {

namespace {

// For VectorReads::OwnPagesOnly: the vectors are a few scattered
// kilobytes, read with the mapping's readahead off (see
// MappedFile::set_readahead), on again afterwards.
class ReadaheadOff {
 public:
  explicit ReadaheadOff(const Model& model) : model_(model) {
    for (const auto& file : model_.files) file->set_readahead(false);
  }
  ~ReadaheadOff() {
    for (const auto& file : model_.files) file->set_readahead(true);
  }
  ReadaheadOff(const ReadaheadOff&) = delete;
  ReadaheadOff& operator=(const ReadaheadOff&) = delete;

 private:
  const Model& model_;
};

}  // namespace

WeightTable::WeightTable(const Model& model, const std::vector<bool>& unused, VectorReads reads) {
  const ir::Graph& graph = model.graph;
  matrices_.resize(graph.weights.size());
  vectors_.resize(graph.weights.size());
  bytes_.resize(graph.weights.size());
  std::optional<ReadaheadOff> readahead_off;
  if (reads == VectorReads::OwnPagesOnly) readahead_off.emplace(model);
  for (uint32_t i = 0; i < graph.weights.size(); ++i) {
    const ir::WeightDescriptor& d = graph.weights[i];
    const std::span<const uint8_t> data = model.weight_bytes(ir::TensorId{i});
    const auto encoding = d.encoding;
    bytes_[i] = data.size();
    const int64_t rows = d.shape.size() == 2 ? d.shape[0] : 1;
    const int64_t cols = d.shape.empty() ? 0 : d.shape.back();
    const uint64_t row_stride = row_bytes(encoding, static_cast<uint64_t>(cols));
    if (row_stride * static_cast<uint64_t>(rows) > data.size())
      throw Error(ErrorKind::InvalidValue, "weight holds fewer bytes than its shape and encoding need",
                  Error::kNoOffset, d.name);
    if (d.shape.size() == 2) {
      matrices_[i] = ref::EncodedMatrix{encoding, data.data(), rows, cols, row_stride};
      max_cols_ = std::max(max_cols_, cols);
    } else if (d.shape.size() == 1 && (unused.empty() || !unused[i])) {
      vectors_[i].resize(static_cast<size_t>(cols));
      dequantize_row(encoding, data.data(), vectors_[i].data(), cols);
    }
  }
}

uint64_t WeightTable::vector_bytes() const {
  uint64_t bytes = 0;
  for (const std::vector<float>& v : vectors_) bytes += v.size() * sizeof(float);
  return bytes;
}

RegionWeightBytes region_weight_bytes(const ir::Graph& graph, const WeightTable& weights, const ir::Region& region) {
  std::vector<ir::TensorId> tables;
  for (ir::NodeId member : region.members)
    if (const auto* embedding = std::get_if<ir::Embedding>(&graph.node(member).op)) tables.push_back(embedding->table);
  RegionWeightBytes bytes;
  for (ir::TensorId weight : region.boundary.weights) {
    if (std::find(tables.begin(), tables.end(), weight) != tables.end()) {
      bytes.per_token += weights.matrix(weight).row_stride;
    } else {
      bytes.fixed += weights.bytes(weight);
    }
  }
  return bytes;
}

}  // namespace synapse::exec

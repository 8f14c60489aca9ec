// A sensitivity table for a GGUF file without measuring anything: its
// quantizable weights grouped as `synapse sensitivity` groups them (each
// layer's attention and MLP, the token embedding), each candidate's bytes
// counted from the shapes as the sensitivity tool counts them, and a
// made-up KL that falls with the bits per weight and differs per group.
#pragma once

#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "calibrate/sensitivity.h"
#include "format/gguf_reader.h"
#include "quantize/tensor_category.h"
#include "quantize/type_policy.h"

namespace synapse::test {

inline calibrate::SensitivityTable hand_made_table(const std::string& path, const std::vector<Encoding>& types) {
  const GgufFile file = GgufFile::open(path);
  std::map<std::string, calibrate::GroupSensitivity> groups;
  std::map<std::string, uint64_t> elements;
  for (const GgufTensorInfo& t : file.tensors()) {
    if (!quant::allows_quantization(t.name, t.dims)) continue;
    const int layer = quant::block_index(t.name);
    const bool attention = t.name.find(".attn_") != std::string::npos;
    const std::string name = layer < 0 ? "Embedding"
                                       : (attention ? "Attention(" : "Mlp(") + std::to_string(layer) + ")";
    groups[name].name = name;
    groups[name].tensors.push_back(t.name);
    elements[name] += t.n_elements();
  }
  calibrate::SensitivityTable table;
  table.model = path;
  double sensitivity = 1.0;
  for (auto& [name, group] : groups) {
    for (Encoding type : types) {
      uint64_t bytes = 0;
      for (const std::string& tensor : group.tensors) {
        const GgufTensorInfo& t = *file.find_tensor(tensor);
        bytes += t.n_elements() / t.dims[0] * row_bytes(quant::fit_row(type, t.dims[0]), t.dims[0]);
      }
      const double bits = 8.0 * static_cast<double>(bytes) / static_cast<double>(elements[name]);
      group.candidates.push_back({type, bytes, sensitivity * std::exp2(-bits), 0.0});
    }
    sensitivity *= 1.7;
    table.groups.push_back(group);
  }
  return table;
}

}  // namespace synapse::test

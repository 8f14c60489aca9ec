#include "exec/test_model.h"

#include <filesystem>
#include <fstream>
#include <random>

#include "encoding/encoding.h"

namespace synapse::exec::testing {

Model make_model(ir::Graph graph, uint32_t seed, const std::map<std::string, std::vector<float>>& fixed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(-1.0f, 1.0f);
  std::vector<uint8_t> file;
  for (ir::WeightDescriptor& d : graph.weights) {
    const int64_t cols = d.shape.back();
    const int64_t rows = d.shape.size() == 2 ? d.shape[0] : 1;
    std::vector<float> values(static_cast<size_t>(rows * cols));
    for (float& v : values) v = d.shape.size() == 1 ? 1.0f + 0.25f * unit(rng) : unit(rng);
    if (auto it = fixed.find(d.name); it != fixed.end()) values = it->second;
    const auto encoding = d.encoding;
    const uint64_t stride = row_bytes(encoding, static_cast<uint64_t>(cols));
    d.offset = (file.size() + 31) / 32 * 32;
    d.length = stride * static_cast<uint64_t>(rows);
    file.resize(d.offset + d.length);
    for (int64_t r = 0; r < rows; ++r)
      quantize_row(encoding, values.data() + r * cols, file.data() + d.offset + r * stride, cols);
  }
  file.resize(file.size() + 1);  // never map an empty file

  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     ("synapse-exec-" + std::to_string(std::random_device{}()) + ".bin");
  std::ofstream(path, std::ios::binary).write(reinterpret_cast<const char*>(file.data()),
                                              static_cast<std::streamsize>(file.size()));
  Model model;
  model.files.push_back(std::make_shared<MappedFile>(path.string()));
  std::filesystem::remove(path);  // the mapping outlives the name
  model.graph = std::move(graph);
  model.info.n_vocab = static_cast<uint32_t>(model.graph.weights.front().shape[0]);
  return model;
}

}  // namespace synapse::exec::testing

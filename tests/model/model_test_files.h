// Shared helpers of the model tests: the shared stories260K files,
// and rewriting a GGUF with edited metadata or tensors to provoke load errors.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "format/gguf_reader.h"
#include "format/gguf_writer.h"
#include "ir/graph.h"
#include "support/shared_data.h"

namespace synapse::test {

inline const std::string kStoriesBin = "stories260K/stories260K.bin";
inline const std::string kStoriesGguf = "gguf/stories260K-f32.gguf";

#define SYNAPSE_SKIP_UNLESS_SHARED(relative)                                                         \
  if (!std::filesystem::exists(::synapse::test::shared_data(relative)))                              \
  GTEST_SKIP() << "shared test data " << ::synapse::test::shared_data(relative)                      \
               << " is absent (needs the project's shared folder, ../shared, beside the source tree)"

// What to change when copying a GGUF: `metadata` edits the key-value pairs;
// `dims` gives each tensor's dims to write (nullopt drops the tensor),
// `encoding` its ggml type. The data of a reshaped or re-encoded tensor is its
// old bytes, cut or zero-padded to size.
struct GgufEdit {
  std::function<void(GgufMetadata&)> metadata = [](GgufMetadata&) {};
  std::function<std::optional<std::vector<uint64_t>>(const GgufTensorInfo&)> dims =
      [](const GgufTensorInfo& t) { return t.dims; };
  std::function<Encoding(const GgufTensorInfo&)> encoding = [](const GgufTensorInfo& t) { return t.encoding; };
};

inline void rewrite_gguf(const std::string& from, const std::string& to, const GgufEdit& edit) {
  const GgufFile source = GgufFile::open(from);
  GgufWriter writer;
  for (const auto& [key, value] : source.metadata().entries())
    if (key != "general.alignment") writer.metadata().set(key, value);
  edit.metadata(writer.metadata());
  for (const GgufTensorInfo& t : source.tensors()) {
    const auto dims = edit.dims(t);
    if (!dims) continue;
    const auto bytes = source.tensor_data(t);
    writer.add_tensor(t.name, *dims, edit.encoding(t), [bytes](uint8_t* dst, uint64_t n) {
      const uint64_t copied = std::min<uint64_t>(n, bytes.size());
      std::memcpy(dst, bytes.data(), copied);
      std::memset(dst + copied, 0, n - copied);
    });
  }
  writer.write(to);
}

// The region kinds of a graph, in order, as text: "Embedding Attention(0) ...".
inline std::string region_list(const ir::Graph& graph) {
  std::string out;
  for (const ir::Region& r : graph.regions) {
    if (!out.empty()) out += ' ';
    out += to_string(r.kind);
  }
  return out;
}

inline std::string dense_region_list(uint32_t layers) {
  std::string out = "Embedding";
  for (uint32_t il = 0; il < layers; ++il)
    out += " Attention(" + std::to_string(il) + ") Mlp(" + std::to_string(il) + ")";
  return out + " Logits";
}

}  // namespace synapse::test

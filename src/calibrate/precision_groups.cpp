#include "calibrate/precision_groups.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>

#include "kernels/cpu/kquant_encode.h"
#include "model/moe_builder.h"
#include "quantize/tensor_category.h"
#include "quantize/type_policy.h"
#include "synapse/error.h"

namespace synapse::calibrate {
namespace {

std::string group_name(const ir::RegionKind& kind) {
  switch (kind.tag) {
    case ir::RegionKindTag::Embedding: return "Embedding";
    case ir::RegionKindTag::Logits: return "Logits";
    case ir::RegionKindTag::Expert: return "Experts(" + std::to_string(kind.layer) + ")";
    default: return ir::to_string(kind);
  }
}

// The dims of a weight as the file has them (GGUF order: the row first).
std::vector<uint64_t> file_dims(const ir::WeightDescriptor& d) {
  return {static_cast<uint64_t>(d.shape.back()), static_cast<uint64_t>(d.shape.front())};
}

}  // namespace

std::vector<PrecisionGroup> precision_groups(const ir::Graph& graph) {
  std::vector<PrecisionGroup> groups;
  std::map<std::string, size_t> by_name;
  std::set<std::string> placed;
  for (const ir::Region& region : graph.regions) {
    for (ir::TensorId id : region.boundary.weights) {
      const ir::WeightDescriptor& d = graph.weight(id);
      const std::string tensor = split_expert_view(d.name).tensor;
      if (d.shape.size() != 2 || placed.count(tensor) || !quant::allows_quantization(tensor, file_dims(d))) continue;
      placed.insert(tensor);
      const std::string name = group_name(region.kind);
      auto [it, added] = by_name.emplace(name, groups.size());
      if (added) groups.push_back({name, {}});
      groups[it->second].tensors.push_back(tensor);
    }
  }
  return groups;
}

std::string regex_escaped(const std::string& name) {
  std::string out;
  for (char c : name) {
    if (std::string_view("\\^$.|?*+()[]{}").find(c) != std::string_view::npos) out += '\\';
    out += c;
  }
  return out;
}

std::vector<quant::TensorTypeOverride> expand_region_overrides(std::span<const quant::TensorTypeOverride> overrides,
                                                               const ir::Graph& graph) {
  constexpr std::string_view kPrefix = "region:";
  std::vector<PrecisionGroup> groups;
  std::vector<quant::TensorTypeOverride> out;
  for (const quant::TensorTypeOverride& o : overrides) {
    if (!o.pattern.starts_with(kPrefix)) {
      out.push_back(o);
      continue;
    }
    if (groups.empty()) groups = precision_groups(graph);
    const std::string wanted = o.pattern.substr(kPrefix.size());
    const bool every_layer = wanted.ends_with("(*)");
    const std::string stem = every_layer ? wanted.substr(0, wanted.size() - 2) : wanted;  // "mlp("
    bool found = false;
    for (const PrecisionGroup& g : groups) {
      std::string name = g.name;
      for (char& c : name) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
      if (every_layer ? !name.starts_with(stem) : name != wanted) continue;
      found = true;
      for (const std::string& tensor : g.tensors) {
        std::string item = "^";
        item.append(regex_escaped(tensor)).append("$=").append(encoding_info(o.type).name);
        out.push_back(quant::parse_tensor_type(item, o.pattern));
      }
    }
    if (!found)
      throw Error(ErrorKind::Usage, "profile item '" + o.pattern +
                                        "' names no region of this model (regions: Embedding, Logits, Attention(N), "
                                        "Mlp(N), Experts(N), N a layer or *)");
  }
  return out;
}

Encoding fitted_encoding(Encoding wanted, uint64_t row_elems) { return quant::fit_row(wanted, row_elems); }

uint64_t stored_bytes(const Model& model, std::span<const std::string> tensors) {
  const std::set<std::string> wanted(tensors.begin(), tensors.end());
  uint64_t bytes = 0;
  for (const ir::WeightDescriptor& d : model.graph.weights)
    if (d.shape.size() == 2 && wanted.count(split_expert_view(d.name).tensor)) bytes += d.length;
  return bytes;
}

Model with_encoding(const Model& model, std::span<const std::string> tensors, Encoding encoding,
                    const std::string& scratch_path, uint64_t* bytes) {
  const std::set<std::string> wanted(tensors.begin(), tensors.end());
  std::set<std::string> found;
  Model copy = model;
  std::FILE* out = std::fopen(scratch_path.c_str(), "wb");
  if (!out) throw Error(ErrorKind::Io, std::string("cannot create ") + std::strerror(errno), Error::kNoOffset, scratch_path);
  uint64_t offset = 0, written = 0;
  std::vector<float> row;
  std::vector<uint8_t> encoded;
  bool ok = true;
  for (uint32_t i = 0; i < copy.graph.weights.size() && ok; ++i) {
    ir::WeightDescriptor& d = copy.graph.weights[i];
    if (d.shape.size() != 2 || !wanted.count(split_expert_view(d.name).tensor)) continue;
    found.insert(split_expert_view(d.name).tensor);
    const auto cols = static_cast<uint64_t>(d.shape[1]), rows = static_cast<uint64_t>(d.shape[0]);
    const Encoding to = quant::fit_row(encoding, cols);
    const uint64_t from_stride = row_bytes(d.encoding, cols), to_stride = row_bytes(to, cols);
    const std::span<const uint8_t> source = model.weight_bytes(ir::TensorId{i});
    row.resize(cols);
    encoded.resize(to_stride);
    const uint64_t aligned = (offset + 63) / 64 * 64;  // as the kernels like their rows
    for (uint64_t pad = offset; pad < aligned && ok; ++pad) ok = std::fputc(0, out) != EOF;
    offset = aligned;
    for (uint64_t r = 0; r < rows && ok; ++r) {
      dequantize_row(d.encoding, source.data() + r * from_stride, row.data(), static_cast<int64_t>(cols));
      cpu::encode_row(to, row.data(), encoded.data(), static_cast<int64_t>(cols));
      ok = std::fwrite(encoded.data(), 1, to_stride, out) == to_stride;
    }
    d.file = static_cast<uint32_t>(model.files.size());
    d.offset = offset;
    d.length = rows * to_stride;
    d.encoding = to;
    offset += d.length;
    written += d.length;
  }
  ok = std::fclose(out) == 0 && ok;
  if (!ok) {
    ::unlink(scratch_path.c_str());
    throw Error(ErrorKind::Io, "cannot write the re-encoded weights", Error::kNoOffset, scratch_path);
  }
  for (const std::string& t : wanted)
    if (!found.count(t)) {
      ::unlink(scratch_path.c_str());
      throw Error(ErrorKind::InvalidValue, "the model has no matrix named " + t, Error::kNoOffset, t);
    }
  copy.files.push_back(std::make_shared<MappedFile>(scratch_path));
  ::unlink(scratch_path.c_str());  // the mapping keeps the bytes
  if (bytes) *bytes = written;
  return copy;
}

}  // namespace synapse::calibrate

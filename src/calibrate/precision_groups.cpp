#include "calibrate/precision_groups.h"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <set>
#include <utility>

#include "kernels/cpu/core_count.h"
#include "kernels/cpu/thread_pool.h"
#include "model/moe_builder.h"
#include "quantize/row_converter.h"
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

uint64_t stored_bytes(const Model& model, std::span<const std::string> tensors) {
  const std::set<std::string> wanted(tensors.begin(), tensors.end());
  uint64_t bytes = 0;
  for (const ir::WeightDescriptor& d : model.graph.weights)
    if (d.shape.size() == 2 && wanted.count(split_expert_view(d.name).tensor)) bytes += d.length;
  return bytes;
}

namespace {

// A file written, mapped, then unlinked whatever happens (the mapping keeps
// its bytes).
class ScratchFile {
 public:
  explicit ScratchFile(std::string path) : path_(std::move(path)), file_(std::fopen(path_.c_str(), "wb")) {
    if (!file_)
      throw Error(ErrorKind::Io, std::string("cannot create ") + std::strerror(errno), Error::kNoOffset, path_);
  }
  ~ScratchFile() {
    if (file_) std::fclose(file_);
    ::unlink(path_.c_str());
  }
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;

  // Appends bytes at `offset` (zeros fill the gap from the end).
  void write_at(uint64_t offset, std::span<const uint8_t> bytes) {
    bool ok = true;
    for (; size_ < offset && ok; ++size_) ok = std::fputc(0, file_) != EOF;
    ok = ok && std::fwrite(bytes.data(), 1, bytes.size(), file_) == bytes.size();
    if (!ok) throw Error(ErrorKind::Io, "cannot write the re-encoded weights", Error::kNoOffset, path_);
    size_ += bytes.size();
  }
  std::shared_ptr<MappedFile> map() {
    const bool ok = std::fclose(file_) == 0;
    file_ = nullptr;
    if (!ok) throw Error(ErrorKind::Io, "cannot write the re-encoded weights", Error::kNoOffset, path_);
    return std::make_shared<MappedFile>(path_);
  }

 private:
  std::string path_;
  std::FILE* file_;
  uint64_t size_ = 0;
};

}  // namespace

Model with_encoding(const Model& model, std::span<const std::string> tensors, Encoding encoding,
                    const std::string& scratch_path, uint64_t* bytes) {
  const std::set<std::string> wanted(tensors.begin(), tensors.end());
  std::set<std::string> found;
  Model copy = model;
  ScratchFile scratch(scratch_path);
  cpu::ThreadPool pool(cpu::default_thread_count());
  uint64_t offset = 0, written = 0;
  std::vector<uint8_t> encoded;
  for (uint32_t i = 0; i < copy.graph.weights.size(); ++i) {
    ir::WeightDescriptor& d = copy.graph.weights[i];
    const std::string tensor = split_expert_view(d.name).tensor;
    if (d.shape.size() != 2 || !wanted.count(tensor)) continue;
    found.insert(tensor);
    const auto cols = static_cast<uint64_t>(d.shape[1]), rows = static_cast<uint64_t>(d.shape[0]);
    const Encoding to = quant::fit_row(encoding, cols);
    encoded.resize(rows * row_bytes(to, cols));
    quant::convert_rows(pool, model.weight_bytes(ir::TensorId{i}).data(), d.encoding, encoded.data(), to, cols, rows,
                        d.name);
    offset = (offset + 63) / 64 * 64;  // as the kernels like their rows
    scratch.write_at(offset, encoded);
    d.file = static_cast<uint32_t>(model.files.size());
    d.offset = offset;
    d.length = encoded.size();
    d.encoding = to;
    offset += d.length;
    written += d.length;
  }
  for (const std::string& t : wanted)
    if (!found.count(t)) throw Error(ErrorKind::InvalidValue, "the model has no matrix named " + t, Error::kNoOffset, t);
  copy.files.push_back(scratch.map());
  if (bytes) *bytes = written;
  return copy;
}

}  // namespace synapse::calibrate

#include "model/hf_import.h"

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <climits>
#include <map>
#include <optional>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "format/safetensors.h"
#include "model/gguf_import.h"
#include "model/hf_tensor_names.h"
#include "synapse/error.h"

namespace synapse {
namespace {

namespace fs = std::filesystem;

constexpr uint64_t kMaxJsonBytes = 64ull << 20;  // config.json and the index are small

std::string read_json_file(const fs::path& path) {
  std::error_code ec;
  const uint64_t size = fs::file_size(path, ec);
  if (ec) throw Error(ErrorKind::Io, "cannot read " + path.string() + ": " + ec.message(), Error::kNoOffset, path.string());
  if (size > kMaxJsonBytes)
    throw Error(ErrorKind::Overflow, path.filename().string() + " is " + std::to_string(size) + " bytes, over the " +
                                         std::to_string(kMaxJsonBytes) + "-byte limit",
                Error::kNoOffset, path.string());
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  if (!in) throw Error(ErrorKind::Io, "cannot read " + path.string(), Error::kNoOffset, path.string());
  return text.str();
}

std::vector<fs::path> safetensors_in(const fs::path& folder) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (const fs::directory_entry& entry : fs::directory_iterator(folder, ec))
    if (entry.path().extension() == ".safetensors" && entry.is_regular_file(ec)) found.push_back(entry.path());
  std::sort(found.begin(), found.end());
  return found;
}

// The weight files, and for an index which tensors each must hold.
struct WeightFiles {
  std::vector<fs::path> shards;
  std::map<std::string, std::string> index;  // tensor -> shard file name; empty: every tensor of each shard
};

WeightFiles weight_files(const fs::path& folder, const fs::path& chosen) {
  WeightFiles w;
  if (!chosen.empty()) {
    w.shards.push_back(chosen);
    return w;
  }
  std::error_code ec;
  if (fs::exists(folder / "model.safetensors.index.json", ec)) {
    w.index = parse_safetensors_index(read_json_file(folder / "model.safetensors.index.json"));
    std::set<std::string> names;
    for (const auto& [tensor, shard] : w.index) names.insert(shard);
    for (const std::string& shard : names) w.shards.push_back(folder / shard);
    return w;
  }
  if (fs::exists(folder / "model.safetensors", ec)) {
    w.shards.push_back(folder / "model.safetensors");
    return w;
  }
  const std::vector<fs::path> found = safetensors_in(folder);
  if (found.size() == 1) {
    w.shards = found;
    return w;
  }
  if (found.empty())
    throw Error(ErrorKind::Usage, "the folder " + folder.string() + " holds no safetensors weights", Error::kNoOffset,
                folder.string());
  std::string list;
  for (const fs::path& p : found) list += "\n  " + p.string();
  throw Error(ErrorKind::Usage, "the folder " + folder.string() + " holds " + std::to_string(found.size()) +
                                    " safetensors files and no model.safetensors.index.json; pick one with -m FILE:" +
                                    list);
}

// A GGUF 1-D vector stored by HF as a [1, n] matrix (qwen2moe's shared
// expert gate) keeps its GGUF shape.
std::vector<int64_t> gguf_shape(const std::string& name, const std::vector<uint64_t>& shape) {
  std::vector<int64_t> out(shape.begin(), shape.end());
  if (name.ends_with("ffn_gate_inp_shexp.weight") && out.size() == 2 && out[0] == 1) out.erase(out.begin());
  return out;
}

ir::WeightDescriptor descriptor_of(const SafetensorsTensor& t, const std::string& gguf_name, uint32_t file) {
  if (!t.encoding || (*t.encoding != Encoding::F32 && *t.encoding != Encoding::F16 && *t.encoding != Encoding::BF16))
    throw Error(ErrorKind::UnknownEncoding, "tensor '" + t.name + "' is " + t.dtype + "; weights must be F32, F16 or BF16",
                Error::kNoOffset, t.name);
  return ir::WeightDescriptor{gguf_name, file, t.offset, t.n_bytes, *t.encoding, gguf_shape(gguf_name, t.shape)};
}

// llama.cpp's order: token_embd and rope_freqs, the blocks by number (experts
// by index), then output_norm and output.
struct GgufOrder {
  static std::tuple<int64_t, std::string, int64_t> key(const std::string& name) {
    int64_t block = -1, expert = -1;
    std::string rest = name;
    if (name.starts_with("blk.")) {
      const size_t dot = name.find('.', 4);
      block = std::stoll(name.substr(4, dot - 4));
      rest = name.substr(dot + 1);
    } else if (name.starts_with("output")) {
      block = INT64_MAX;
    }
    if (const size_t open = rest.rfind('['); open != std::string::npos) {
      expert = std::stoll(rest.substr(open + 1));
      rest.resize(open);
    }
    return {block, rest, expert};
  }
  bool operator()(const ir::WeightDescriptor& a, const ir::WeightDescriptor& b) const {
    return key(a.name) < key(b.name);
  }
};

// Row r of the GGUF tensor is row source_row(r) of the HF one: within each
// head, GGUF interleaves the two rotate-half halves (LlamaModel.permute).
uint64_t source_row(uint64_t r, uint64_t head_rows) {
  const uint64_t head = r / head_rows, within = r % head_rows, half = head_rows / 2;
  return head * head_rows + (within % 2) * half + within / 2;
}

// Moves llama-family q and k projections into one memory file, permuted.
void permute_qk(HfCheckpoint& c) {
  std::vector<std::pair<ir::WeightDescriptor*, uint32_t>> targets;  // weight, heads
  uint64_t total = 0;
  for (ir::WeightDescriptor& d : c.weights) {
    const bool q = d.name.ends_with(".attn_q.weight"), k = d.name.ends_with(".attn_k.weight");
    if (!q && !k) continue;
    const uint32_t heads = q ? c.config.n_head : c.config.n_head_kv;
    if (d.shape.size() != 2 || d.shape[0] % (2 * heads) != 0)
      throw Error(ErrorKind::InvalidValue,
                  "tensor '" + d.name + "' of shape " + to_string(d.shape) + " does not split into " +
                      std::to_string(heads) + " heads of rotary pairs",
                  Error::kNoOffset, d.name);
    targets.emplace_back(&d, heads);
    total += (d.length + 63) / 64 * 64;
  }
  if (targets.empty()) return;
  const auto file_index = static_cast<uint32_t>(c.files.size());
  const std::vector<std::shared_ptr<MappedFile>>& files = c.files;
  auto permuted = MappedFile::in_memory("synapse-qk-permuted", total, [&](std::span<uint8_t> out) {
    uint64_t offset = 0;
    for (const auto& [d, heads] : targets) {
      const auto rows = static_cast<uint64_t>(d->shape[0]), row_bytes = d->length / rows;
      const uint8_t* src = files[d->file]->bytes().data() + d->offset;
      for (uint64_t r = 0; r < rows; ++r)
        std::memcpy(out.data() + offset + r * row_bytes, src + source_row(r, rows / heads) * row_bytes, row_bytes);
      offset += (d->length + 63) / 64 * 64;
    }
  });
  uint64_t offset = 0;
  for (const auto& [d, heads] : targets) {
    d->file = file_index;
    d->offset = offset;
    offset += (d->length + 63) / 64 * 64;
  }
  c.files.push_back(std::move(permuted));
}

void add_rope_freqs(HfCheckpoint& c) {
  const std::vector<float>& freqs = c.config.rope_freqs;
  if (freqs.empty()) return;
  const uint64_t bytes = freqs.size() * sizeof(float);
  c.files.push_back(MappedFile::in_memory("synapse-rope-freqs", bytes, [&](std::span<uint8_t> out) {
    std::memcpy(out.data(), freqs.data(), bytes);
  }));
  c.weights.push_back(ir::WeightDescriptor{"rope_freqs.weight", static_cast<uint32_t>(c.files.size() - 1), 0, bytes,
                                           Encoding::F32, {static_cast<int64_t>(freqs.size())}});
}

// The id of tokenizer_config.json's eos_token (a string, or {"content"}),
// from its added_tokens_decoder or tokenizer.json's added_tokens, as gguf-py
// takes the end-of-sequence token (an instruct model's end of turn, where
// config.json lists several ids).
std::optional<int32_t> tokenizer_config_eos(const fs::path& folder) {
  using nlohmann::json;
  std::error_code ec;
  if (!fs::is_regular_file(folder / "tokenizer_config.json", ec)) return std::nullopt;
  const json config = json::parse(read_json_file(folder / "tokenizer_config.json"), nullptr, false);
  if (!config.is_object() || !config.contains("eos_token")) return std::nullopt;
  const json& eos = config["eos_token"];
  const json content = eos.is_object() ? eos.value("content", json()) : eos;
  if (!content.is_string()) return std::nullopt;
  const auto id_in = [&](const json& entries, bool keyed) -> std::optional<int32_t> {
    if (!entries.is_object() && !entries.is_array()) return std::nullopt;
    for (auto it = entries.begin(); it != entries.end(); ++it) {
      const json& entry = it.value();
      if (!entry.is_object() || entry.value("content", json()) != content) continue;
      const json id = keyed ? json(it.key()) : entry.value("id", json());
      if (id.is_number_integer() && id.get<int64_t>() >= 0 && id.get<int64_t>() <= INT32_MAX)
        return static_cast<int32_t>(id.get<int64_t>());
      if (id.is_string() && !id.get<std::string>().empty() && id.get<std::string>().size() < 10 &&
          id.get<std::string>().find_first_not_of("0123456789") == std::string::npos)
        return static_cast<int32_t>(std::stol(id.get<std::string>()));
    }
    return std::nullopt;
  };
  if (auto id = id_in(config.value("added_tokens_decoder", json()), true)) return id;
  if (!fs::is_regular_file(folder / "tokenizer.json", ec)) return std::nullopt;
  const json tokenizer = json::parse(read_json_file(folder / "tokenizer.json"), nullptr, false);
  return tokenizer.is_object() ? id_in(tokenizer.value("added_tokens", json()), false) : std::nullopt;
}

}  // namespace

TensorTable HfCheckpoint::tensor_table() const {
  TensorTable table;
  for (const ir::WeightDescriptor& d : weights) table.add(d);
  return table;
}

bool is_hf_folder(const std::string& path) {
  std::error_code ec;
  const fs::path folder(path);
  if (!fs::is_directory(folder, ec) || !fs::is_regular_file(folder / "config.json", ec)) return false;
  return fs::exists(folder / "model.safetensors.index.json", ec) || !safetensors_in(folder).empty();
}

HfCheckpoint open_hf_checkpoint(const std::string& path) {
  std::error_code ec;
  const bool is_file = fs::is_regular_file(path, ec);
  const fs::path folder = is_file ? fs::path(path).parent_path() : fs::path(path);
  HfCheckpoint c;
  c.folder = folder.string();
  fs::path absolute = fs::absolute(folder, ec).lexically_normal();
  if (!absolute.has_filename()) absolute = absolute.parent_path();  // "models/Llama/"
  const std::string name = absolute.filename().string();
  c.config = parse_hf_config(read_json_file(folder / "config.json"), name);

  const WeightFiles files = weight_files(folder, is_file ? fs::path(path) : fs::path());
  std::set<std::string> listed_found;
  for (const fs::path& shard : files.shards) {
    const SafetensorsFile file = SafetensorsFile::open(shard.string());
    const auto index = static_cast<uint32_t>(c.files.size());
    c.files.push_back(file.mapping());
    for (const SafetensorsTensor& t : file.tensors()) {
      if (!files.index.empty()) {
        const auto listed = files.index.find(t.name);
        if (listed == files.index.end() || listed->second != shard.filename().string()) continue;
        listed_found.insert(t.name);
      }
      const std::optional<std::string> gguf = gguf_name_of_hf_tensor(t.name);
      if (!gguf)
        throw Error(ErrorKind::Unsupported,
                    "tensor '" + t.name + "' has no GGUF counterpart for model_type " + c.config.model_type,
                    Error::kNoOffset, t.name);
      if (gguf->empty() || (*gguf == "output.weight" && c.config.tied_output)) continue;
      c.weights.push_back(descriptor_of(t, *gguf, index));
    }
  }
  for (const auto& [tensor, shard] : files.index)
    if (!listed_found.count(tensor))
      throw Error(ErrorKind::MissingKey, "tensor '" + tensor + "' is not in " + shard + " as the index says",
                  Error::kNoOffset, tensor);
  if (c.config.permute_qk) permute_qk(c);
  add_rope_freqs(c);
  std::stable_sort(c.weights.begin(), c.weights.end(), GgufOrder{});
  return c;
}

Model load_hf_model(const std::string& path, const LoadOptions& options) {
  HfCheckpoint c = open_hf_checkpoint(path);
  GgufMetadata metadata = c.config.metadata;
  // Special tokens as config.json has them (the end of sequence as the
  // tokenizer's config names it, where it does); a tokenizer is loaded apart.
  if (c.config.bos_id) metadata.set("tokenizer.ggml.bos_token_id", GgufValue(static_cast<uint32_t>(*c.config.bos_id)));
  std::optional<int32_t> eos = tokenizer_config_eos(c.folder);
  if (!eos && !c.config.eos_ids.empty()) eos = c.config.eos_ids.front();
  if (eos) metadata.set("tokenizer.ggml.eos_token_id", GgufValue(static_cast<uint32_t>(*eos)));
  const TensorTable tensors = c.tensor_table();
  return model_from_metadata(metadata, tensors, std::move(c.files), metadata.get_string("general.name"), options);
}

}  // namespace synapse

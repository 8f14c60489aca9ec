// synapse inspect FILE [--json]: what is in a GGUF file, or in a Hugging
// Face folder as Synapse reads it.
#include <charconv>
#include <cinttypes>
#include <cstdlib>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>

#include "cli/command.h"
#include "cli/model_path.h"
#include "convert/hf_to_gguf.h"
#include "encoding/encoding.h"
#include "format/gguf_reader.h"
#include "model/hf_import.h"
#include "synapse/error.h"
#include "tokenizer/tokenizer.h"

namespace synapse::cli {
namespace {

using nlohmann::json;

constexpr size_t kArrayPreview = 8;  // array elements shown before "..."

json value_to_json(const GgufValue& v);

// The double nearest to a float's shortest decimal form, so 1e-5f shows as
// 1e-05 rather than 9.999999747378752e-06.
double shortest(float f) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, f);
  return std::strtod(std::string(buf, r.ptr).c_str(), nullptr);
}

json array_to_json(const GgufArray& a) {
  json j = {{"type", "array"}, {"elem", to_string(a.elem)}, {"length", a.size()}};
  json head = json::array();
  for (size_t i = 0; i < a.size() && i < kArrayPreview; ++i) {
    if (a.elem == GgufType::String) head.push_back(json(a.strings[i]));
    else if (a.elem == GgufType::Array) head.push_back(array_to_json(a.arrays[i]));
    else if (a.elem == GgufType::Float32 || a.elem == GgufType::Float64) head.push_back(a.double_at(i));
    else if (a.elem == GgufType::Bool) head.push_back(a.int_at(i) != 0);
    else head.push_back(a.int_at(i));
  }
  j["head"] = head;
  return j;
}

json value_to_json(const GgufValue& v) {
  switch (v.type()) {
    case GgufType::String: return json(v.as_string());
    case GgufType::Array: return array_to_json(v.as_array());
    case GgufType::Bool: return json(v.as_bool());
    case GgufType::Float32: return json(shortest(std::get<float>(v.v)));
    case GgufType::Float64: return json(v.as_double());
    case GgufType::Uint64: return json(std::get<uint64_t>(v.v));
    default: return json(v.as_int());
  }
}

// Keys are shown without the "tokenizer.ggml." prefix.
constexpr size_t kTokenizerPrefix = sizeof("tokenizer.ggml.") - 1;

json tokenizer_summary(const GgufMetadata& m) {
  json t = json::object();
  for (const char* key : {"tokenizer.ggml.model", "tokenizer.ggml.pre"})
    if (const auto* v = m.find(key); v && v->type() == GgufType::String) t[key + kTokenizerPrefix] = v->as_string();
  for (const char* key : {"tokenizer.ggml.tokens", "tokenizer.ggml.merges"})
    if (const auto* v = m.find(key); v && v->type() == GgufType::Array)
      t[std::string("n_") + (key + kTokenizerPrefix)] = v->as_array().size();
  for (const char* key : {"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id"})
    if (const auto* v = m.find(key); v && v->is_integer()) t[key + kTokenizerPrefix] = v->as_int();
  t["chat_template"] = m.contains("tokenizer.chat_template");
  return t;
}

// Architecture, hyperparameters, other metadata and tokenizer of GGUF-style
// metadata, into j.
void summarize_metadata(const GgufMetadata& m, json& j) {
  const GgufValue* arch = m.find("general.architecture");
  std::string arch_name = arch && arch->type() == GgufType::String ? arch->as_string() : "";
  j["architecture"] = arch_name;
  json hyper = json::object(), other = json::object();
  for (const auto& [key, value] : m.entries()) {
    if (key.rfind("tokenizer.", 0) == 0) continue;
    if (!arch_name.empty() && key.rfind(arch_name + ".", 0) == 0)
      hyper[key.substr(arch_name.size() + 1)] = value_to_json(value);
    else
      other[key] = value_to_json(value);
  }
  j["hyperparameters"] = hyper;
  j["metadata"] = other;
  j["tokenizer"] = tokenizer_summary(m);
}

// One tensor's entry; dims ne[0] first, as GGUF lists them.
void add_tensor(json& j, const std::string& name, const std::vector<uint64_t>& dims, Encoding encoding,
                uint64_t bytes, uint64_t offset) {
  uint64_t elements = 1;
  for (uint64_t d : dims) elements *= d;
  j["tensors"].push_back(
      {{"name", name}, {"shape", dims}, {"encoding", encoding_info(encoding).name}, {"bytes", bytes}, {"offset", offset}});
  j["totals"]["tensors"] = j["totals"].value("tensors", uint64_t{0}) + 1;
  j["totals"]["tensor_bytes"] = j["totals"].value("tensor_bytes", uint64_t{0}) + bytes;
  j["totals"]["parameters"] = j["totals"].value("parameters", uint64_t{0}) + elements;
}

json summarize(const GgufFile& f) {
  json j;
  j["file"] = f.path();
  j["format"] = "GGUF v" + std::to_string(f.version());
  j["gguf_version"] = f.version();
  j["alignment"] = f.alignment();
  summarize_metadata(f.metadata(), j);
  j["tensors"] = json::array();
  j["totals"] = {{"tensors", 0}, {"tensor_bytes", 0}, {"parameters", 0}};
  for (const auto& t : f.tensors()) add_tensor(j, t.name, t.dims, t.encoding, t.n_bytes, f.data_offset() + t.offset);
  j["totals"]["file_bytes"] = f.file_size();
  return j;
}

// A Hugging Face folder as Synapse reads it: the metadata and tensor names
// `synapse convert` would write, the experts still one tensor each (as
// "NAME[e]"); offsets are within each tensor's file.
json summarize(const HfCheckpoint& c) {
  json j;
  j["file"] = c.folder;
  j["format"] = "Hugging Face folder (model_type " + c.config.model_type + ")";
  // A tokenizer that is missing or does not read leaves its keys out.
  GgufMetadata metadata = convert::converted_metadata(c, "");
  try {
    metadata = convert::converted_metadata(c, hf_tokenizer_file(c.folder));
  } catch (const Error& e) {
    j["tokenizer_error"] = e.what();
  }
  summarize_metadata(metadata, j);
  j["tensors"] = json::array();
  j["totals"] = {{"tensors", 0}, {"tensor_bytes", 0}, {"parameters", 0}};
  for (const ir::WeightDescriptor& d : c.weights)
    add_tensor(j, d.name, std::vector<uint64_t>(d.shape.rbegin(), d.shape.rend()), d.encoding, d.length, d.offset);
  uint64_t file_bytes = 0;
  for (const auto& file : c.files) file_bytes += file->bytes().size();
  j["totals"]["file_bytes"] = file_bytes;
  return j;
}

// Metadata strings are not guaranteed UTF-8: replace invalid bytes, never throw.
std::string dump(const json& j, int indent = -1) {
  return j.dump(indent, ' ', false, json::error_handler_t::replace);
}

std::string shape_text(const json& shape) {
  std::string s;
  for (const auto& d : shape) s += (s.empty() ? "" : " x ") + std::to_string(d.get<uint64_t>());
  return s;
}

void print_text(const json& j) {
  std::printf("file:          %s\n", j["file"].get<std::string>().c_str());
  std::printf("format:        %s", j["format"].get<std::string>().c_str());
  if (j.contains("alignment")) std::printf(" (alignment %u)", j["alignment"].get<unsigned>());
  std::printf("\n");
  std::printf("architecture:  %s\n", j["architecture"].get<std::string>().c_str());
  std::printf("\nhyperparameters:\n");
  for (const auto& [k, v] : j["hyperparameters"].items())
    std::printf("  %-40s %s\n", k.c_str(), dump(v).c_str());
  std::printf("\nmetadata:\n");
  for (const auto& [k, v] : j["metadata"].items())
    std::printf("  %-40s %s\n", k.c_str(), dump(v).c_str());
  std::printf("\ntokenizer:\n");
  for (const auto& [k, v] : j["tokenizer"].items())
    std::printf("  %-40s %s\n", k.c_str(), dump(v).c_str());
  if (j.contains("tokenizer_error")) std::printf("  (not read: %s)\n", j["tokenizer_error"].get<std::string>().c_str());
  std::printf("\n%-48s %-24s %-8s %14s\n", "tensor", "shape", "encoding", "bytes");
  for (const auto& t : j["tensors"])
    std::printf("%-48s %-24s %-8s %14" PRIu64 "\n", t["name"].get<std::string>().c_str(),
                shape_text(t["shape"]).c_str(), t["encoding"].get<std::string>().c_str(),
                t["bytes"].get<uint64_t>());
  const auto& tot = j["totals"];
  std::printf("\ntotals: %" PRIu64 " tensors, %" PRIu64 " parameters, %" PRIu64
              " tensor bytes, %" PRIu64 " file bytes\n",
              tot["tensors"].get<uint64_t>(), tot["parameters"].get<uint64_t>(),
              tot["tensor_bytes"].get<uint64_t>(), tot["file_bytes"].get<uint64_t>());
}

struct InspectFlags {
  std::string file;
  bool as_json = false;
};

Register inspect_reg{{"inspect", "Show what a GGUF file holds: architecture, hyperparameters, tokenizer, tensors",
              [](CLI::App& app) -> std::function<int()> {
                auto flags = std::make_shared<InspectFlags>();
                app.add_option("file,-m,--model", flags->file,
                               "GGUF file, a folder holding one, or a Hugging Face model folder (as Synapse reads it); "
                               "given once, as FILE or as -m FILE")
                    ->required();
                app.add_flag("--json", flags->as_json, "print JSON instead of text");
                app.footer(
                    "\nExamples:\n"
                    "  synapse inspect model.gguf | head\n"
                    "  synapse inspect model.gguf --json | jq .totals\n");
                return [flags] {
                  const std::string path = model_file_path(flags->file);
                  std::error_code ec;
                  const bool hf = std::filesystem::is_directory(path, ec) || path.ends_with(".safetensors");
                  const json j = hf ? summarize(open_hf_checkpoint(path)) : summarize(GgufFile::open(path));
                  if (flags->as_json) std::printf("%s\n", dump(j, 2).c_str());
                  else print_text(j);
                  return kExitOk;
                };
              }}};

}  // namespace
}  // namespace synapse::cli

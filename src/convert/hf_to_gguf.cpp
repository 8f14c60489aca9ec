#include "convert/hf_to_gguf.h"

#include <cstring>
#include <filesystem>
#include <optional>

#include "chat/chat_template.h"
#include "format/gguf_writer.h"
#include "kernels/cpu/core_count.h"
#include "kernels/cpu/thread_pool.h"
#include "model/gguf_import.h"
#include "model/hf_import.h"
#include "model/moe_builder.h"
#include "quantize/quant_types.h"
#include "quantize/quantize_model.h"
#include "quantize/row_converter.h"
#include "synapse/error.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocabulary_writer.h"

namespace synapse::convert {
namespace {

// One tensor of the GGUF: a weight of the folder, or the experts of one
// projection merged along a new outer dimension.
struct OutTensor {
  std::string name;
  std::vector<int64_t> shape;  // outermost first
  std::vector<const ir::WeightDescriptor*> parts;
};

bool is_expert(const std::string& name) { return !name.empty() && name.back() == ']'; }

std::vector<OutTensor> gguf_tensors(const HfCheckpoint& c) {
  const std::string experts_key = c.config.arch + ".expert_count";
  const GgufValue* expert_count = c.config.metadata.find(experts_key);
  std::vector<OutTensor> out;
  for (const ir::WeightDescriptor& d : c.weights) {  // experts of a tensor come together, by index
    if (!is_expert(d.name)) {
      out.push_back({d.name, d.shape, {&d}});
      continue;
    }
    const ExpertViewName view = split_expert_view(d.name);
    if (out.empty() || out.back().name != view.tensor) out.push_back({view.tensor, d.shape, {}});
    OutTensor& merged = out.back();
    if (view.expert != merged.parts.size() || d.shape != merged.shape)
      throw Error(ErrorKind::InvalidValue,
                  "expert tensor '" + d.name + "' does not follow experts 0.." +
                      std::to_string(merged.parts.size()) + " of shape " + to_string(merged.shape),
                  Error::kNoOffset, d.name);
    merged.parts.push_back(&d);
  }
  for (OutTensor& t : out) {
    if (!is_expert(t.parts.front()->name)) continue;
    if (!expert_count || t.parts.size() != static_cast<size_t>(expert_count->as_int()))
      throw Error(ErrorKind::InvalidValue,
                  "tensor '" + t.name + "' has " + std::to_string(t.parts.size()) + " experts, config.json " +
                      (expert_count ? std::to_string(expert_count->as_int()) : std::string("none")),
                  Error::kNoOffset, t.name);
    t.shape.insert(t.shape.begin(), static_cast<int64_t>(t.parts.size()));
  }
  return out;
}

// "source" keeps a matrix's stored type; vectors and MoE routers are F32, as
// the converter writes norms, biases and FFN_GATE_INP.
Encoding encoding_for(const OutTensor& t, std::optional<Encoding> type) {
  if (t.shape.size() < 2 || t.name.find("ffn_gate_inp") != std::string::npos) return Encoding::F32;
  return type.value_or(t.parts.front()->encoding);
}

uint32_t file_type_of(Encoding e) {
  switch (e) {
    case Encoding::F16: return 1;    // LLAMA_FTYPE_MOSTLY_F16
    case Encoding::BF16: return 32;  // LLAMA_FTYPE_MOSTLY_BF16
    default: return 0;               // LLAMA_FTYPE_ALL_F32
  }
}

// Removes a file when it goes out of scope (the quantizer's temporary input).
class TemporaryFile {
 public:
  explicit TemporaryFile(std::string path) : path_(std::move(path)) {}
  ~TemporaryFile() {
    std::error_code ec;
    std::filesystem::remove(path_, ec);
  }
  TemporaryFile(const TemporaryFile&) = delete;
  TemporaryFile& operator=(const TemporaryFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

ConvertSummary write_gguf(const HfCheckpoint& c, const std::string& output, std::optional<Encoding> type,
                          const std::string& tokenizer_path, int threads,
                          const std::function<void(uint64_t, uint64_t)>& progress) {
  const std::vector<OutTensor> tensors = gguf_tensors(c);
  Encoding first_matrix = Encoding::F32;
  for (const OutTensor& t : tensors)
    if (t.shape.size() >= 2) {
      first_matrix = encoding_for(t, type);
      break;
    }
  GgufWriter writer;
  writer.metadata() = converted_metadata(c, tokenizer_path);
  writer.metadata().set("general.file_type", GgufValue(file_type_of(first_matrix)));
  cpu::ThreadPool pool(threads > 0 ? threads : cpu::default_thread_count());
  for (const OutTensor& t : tensors) {
    const Encoding to = encoding_for(t, type);
    std::vector<uint64_t> dims(t.shape.rbegin(), t.shape.rend());  // GGUF: ne[0] first
    writer.add_tensor(t.name, std::move(dims), to, [&c, &t, &pool, to](uint8_t* dst, uint64_t) {
      for (const ir::WeightDescriptor* part : t.parts) {
        const auto cols = static_cast<uint64_t>(part->shape.back());
        const uint64_t rows = cols == 0 ? 0 : static_cast<uint64_t>(part->length) / row_bytes(part->encoding, cols);
        if (part->encoding == to)
          std::memcpy(dst, c.bytes(*part).data(), rows * row_bytes(to, cols));
        else
          quant::convert_rows(pool, c.bytes(*part).data(), part->encoding, dst, to, cols, rows, t.name);
        dst += rows * row_bytes(to, cols);
      }
    });
  }
  writer.write(output, progress);
  return {tensors.size(), std::filesystem::file_size(output)};
}

}  // namespace

GgufMetadata converted_metadata(const HfCheckpoint& c, const std::string& tokenizer_path) {
  GgufMetadata md = c.config.metadata;
  if (!tokenizer_path.empty()) write_vocabulary(md, load_tokenizer(tokenizer_path)->vocabulary(), c.config.n_vocab);
  // Special tokens the tokenizer file does not name come from config.json.
  if (!md.contains("tokenizer.ggml.bos_token_id") && c.config.bos_id)
    md.set("tokenizer.ggml.bos_token_id", GgufValue(static_cast<uint32_t>(*c.config.bos_id)));
  if (!md.contains("tokenizer.ggml.eos_token_id") && !c.config.eos_ids.empty())
    md.set("tokenizer.ggml.eos_token_id", GgufValue(static_cast<uint32_t>(c.config.eos_ids.front())));
  if (std::optional<std::string> chat = chat::chat_template_from_hf_folder(c.folder))
    md.set("tokenizer.chat_template", GgufValue(*chat));
  return md;
}

ConvertSummary convert_hf_to_gguf(const ConvertOptions& options,
                                  const std::function<void(uint64_t, uint64_t)>& progress) {
  const quant::QuantType* quantized = nullptr;
  std::optional<Encoding> type;
  if (options.type == "f32" || options.type == "f16" || options.type == "bf16") {
    type = encoding_from_name(options.type);
  } else if (options.type != "source") {
    quantized = quant::find_quant_type(options.type);
    if (!quantized)
      throw Error(ErrorKind::Usage, "--type '" + options.type + "' is not source, f32, f16, bf16 or a quantize type");
  }
  const HfCheckpoint c = open_hf_checkpoint(options.input);
  // The graph checks every tensor's shape against the config before a byte is written.
  model_from_metadata(c.config.metadata, c.tensor_table(), c.files, c.config.model_type, {});
  const std::string tokenizer = options.tokenizer.empty() ? hf_tokenizer_file(options.input) : options.tokenizer;
  if (!quantized) return write_gguf(c, options.output, type, tokenizer, options.threads, progress);

  const TemporaryFile source(options.output + ".source.gguf");
  write_gguf(c, source.path(), std::nullopt, tokenizer, options.threads, progress);
  quant::QuantizeOptions q;
  q.input = source.path();
  q.output = options.output;
  q.type = quantized;
  q.threads = options.threads;
  const quant::QuantizeSummary s = quant::quantize_model(q);
  return {s.tensors, std::filesystem::file_size(options.output)};
}

}  // namespace synapse::convert

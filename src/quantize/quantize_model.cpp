// The quantizer: plan every tensor's encoding with llama.cpp's rules, then
// let the GGUF writer pull each tensor's bytes, copied or re-encoded.
#include "quantize/quantize_model.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <vector>

#include "format/gguf_reader.h"
#include "format/gguf_writer.h"
#include "kernels/cpu/core_count.h"
#include "kernels/cpu/thread_pool.h"
#include "quantize/imatrix_file.h"
#include "quantize/row_converter.h"
#include "quantize/tensor_category.h"
#include "quantize/type_policy.h"
#include "synapse/error.h"

namespace synapse::quant {

namespace {

uint32_t optional_count(const GgufMetadata& md, const std::string& key, uint32_t absent) {
  const GgufValue* v = md.find(key);
  if (v == nullptr) return absent;
  // Per-layer head counts are arrays; llama.cpp's n_head() is the first layer's.
  if (v->type() == GgufType::Array)
    return v->as_array().size() ? static_cast<uint32_t>(v->as_array().int_at(0)) : absent;
  return static_cast<uint32_t>(v->as_int());
}

ModelFacts model_facts(const GgufMetadata& md) {
  ModelFacts m;
  m.arch = md.get_string("general.architecture");
  m.n_layer = static_cast<uint32_t>(md.get_int(m.arch + ".block_count"));
  m.n_expert = optional_count(md, m.arch + ".expert_count", 0);
  m.n_head = optional_count(md, m.arch + ".attention.head_count", 0);
  m.n_head_kv = optional_count(md, m.arch + ".attention.head_count_kv", m.n_head);
  return m;
}

// llama.cpp's loader keeps its weights in a map ordered by block index
// (-1 outside the blocks), then name; its quantizer writes them in that order.
std::vector<const GgufTensorInfo*> llama_cpp_order(const GgufFile& in) {
  std::vector<const GgufTensorInfo*> order;
  for (const GgufTensorInfo& t : in.tensors()) order.push_back(&t);
  std::sort(order.begin(), order.end(), [](const GgufTensorInfo* a, const GgufTensorInfo* b) {
    const int la = block_index(a->name), lb = block_index(b->name);
    return la != lb ? la < lb : a->name < b->name;
  });
  return order;
}

// The input's metadata with llama.cpp's changes: set_* removes a key and
// appends it, and split files become one.
GgufMetadata output_metadata(const GgufMetadata& in, uint32_t file_type) {
  GgufMetadata md = in;
  for (const char* key : {"general.quantization_version", "general.file_type", "split.no", "split.count",
                          "split.tensors.count"})
    md.erase(key);
  md.set("general.quantization_version", GgufValue(kQuantizationVersion));
  md.set("general.file_type", GgufValue(file_type));
  return md;
}

// llama.cpp's token embeddings, whose imatrix entry it skips when its size
// is wrong (its imatrix tool never writes one: they are looked up, not
// multiplied, but older files of split models had wrong ones).
bool is_token_embedding(const std::string& name) {
  return name == "token_embd.weight" || name == "per_layer_token_embd.weight";
}

// The importance a re-encoded tensor is encoded with: its entry's, when the
// imatrix has one of the size of a row times the experts (llama.cpp's
// lookup in llama_model_quantize_impl); empty for none.
std::vector<float> tensor_importance(const Imatrix& imatrix, const GgufTensorInfo& t) {
  const auto it = imatrix.entries.find(t.name);
  if (it == imatrix.entries.end()) return {};
  std::vector<float> values = importance(it->second);
  const uint64_t n_expert = t.dims.size() > 2 ? t.dims[2] : 1;
  if (values.size() != t.dims[0] * n_expert) {
    if (is_token_embedding(t.name)) return {};
    throw Error(ErrorKind::InvalidValue,
                "imatrix entry has " + std::to_string(values.size()) + " values, the tensor's rows of " +
                    std::to_string(t.dims[0]) + " times " + std::to_string(n_expert) + " experts need " +
                    std::to_string(t.dims[0] * n_expert),
                Error::kNoOffset, t.name);
  }
  if (t.dims.size() > 3 && t.dims[3] > 1)
    throw Error(ErrorKind::Unsupported, "llama.cpp's quantizer cannot weight a 4-D tensor", Error::kNoOffset,
                t.name);
  return values;
}

// Refuses, before anything is written, what llama.cpp's quantizer refuses.
void check_conversion(const GgufTensorInfo& t, Encoding to, bool allow_requantize) {
  if (t.encoding == to) return;
  const EncodingInfo from = encoding_info(t.encoding);
  if (is_block_encoding(t.encoding) && !allow_requantize)
    throw Error(ErrorKind::InvalidValue,
                std::string("tensor is stored in ") + from.name + "; re-encoding it to " + encoding_info(to).name +
                    " needs --allow-requantize",
                Error::kNoOffset, t.name);
  if (!from.has_codec)
    throw Error(ErrorKind::UnknownEncoding, std::string("cannot decode tensor encoding ") + from.name,
                Error::kNoOffset, t.name);
}

// The input read, every tensor's encoding chosen and checked, and the
// output's metadata: what planning and writing both start from.
struct Prepared {
  Prepared(Imatrix m, GgufFile f) : imatrix(std::move(m)), in(std::move(f)) {}

  Imatrix imatrix;
  GgufFile in;
  std::vector<const GgufTensorInfo*> order;  // llama.cpp's
  std::vector<TypeChoice> choices;
  std::vector<std::vector<float>> importances;  // empty: encoded unweighted
  GgufWriter writer;                            // metadata set, no tensors yet
};

std::unique_ptr<Prepared> prepare(const QuantizeOptions& options) {
  if (options.type == nullptr) throw Error(ErrorKind::Usage, "no type to quantize to");
  const QuantType& type = *options.type;
  Imatrix imatrix = options.imatrix_file.empty() ? Imatrix{} : read_imatrix(options.imatrix_file);
  auto p = std::make_unique<Prepared>(std::move(imatrix), GgufFile::open(options.input));
  // llama-quantize passes no imatrix (and records none) when it has no entry.
  const bool has_imatrix = !p->imatrix.entries.empty();
  const ModelFacts facts = model_facts(p->in.metadata());
  p->order = llama_cpp_order(p->in);

  std::vector<TensorToType> requests;
  for (const GgufTensorInfo* t : p->order) requests.push_back({t->name, t->dims, t->encoding});
  p->choices = choose_types(type, facts, requests, options.pure, has_imatrix, options.overrides);
  p->importances.resize(p->order.size());
  for (size_t i = 0; i < p->order.size(); ++i) {
    const GgufTensorInfo& t = *p->order[i];
    check_conversion(t, p->choices[i].encoding, options.allow_requantize);
    if (has_imatrix && p->choices[i].encoding != t.encoding) p->importances[i] = tensor_importance(p->imatrix, t);
  }

  p->writer.metadata() = output_metadata(p->in.metadata(), type.file_type);
  if (has_imatrix) {
    for (auto& [key, value] : imatrix_metadata(p->imatrix, options.imatrix_file)) {
      p->writer.metadata().erase(key);  // llama.cpp's gguf_set_* move a key last
      p->writer.metadata().set(key, std::move(value));
    }
  }
  return p;
}

// ggml writes the dimensions up to the last one above 1.
std::vector<uint64_t> written_dims(const GgufTensorInfo& t) {
  return {t.dims.begin(), t.dims.begin() + significant_dims(t.dims)};
}

}  // namespace

QuantizePlan plan_quantize(const QuantizeOptions& options) {
  const std::unique_ptr<Prepared> p = prepare(options);
  QuantizePlan plan;
  plan.alignment = p->in.alignment();
  for (size_t i = 0; i < p->order.size(); ++i) {
    const GgufTensorInfo& t = *p->order[i];
    const TypeChoice& choice = p->choices[i];
    p->writer.add_tensor(t.name, written_dims(t), choice.encoding, nullptr);  // never produced
    plan.tensors.push_back({t.name, written_dims(t), choice.encoding, choice.override,
                            t.n_elements() / t.dims[0] * row_bytes(choice.encoding, t.dims[0])});
  }
  plan.file_bytes = p->writer.file_bytes();
  return plan;
}

QuantizeSummary quantize_model(const QuantizeOptions& options,
                               const std::function<void(const TensorDone&)>& on_tensor) {
  const std::unique_ptr<Prepared> p = prepare(options);
  const GgufFile& in = p->in;
  const std::vector<const GgufTensorInfo*>& order = p->order;
  cpu::ThreadPool pool(options.threads > 0 ? options.threads : cpu::default_thread_count());
  QuantizeSummary summary;
  summary.tensors = order.size();
  for (size_t i = 0; i < order.size(); ++i) {
    const GgufTensorInfo& t = *order[i];
    const TypeChoice& choice = p->choices[i];
    const Encoding to = choice.encoding;
    const std::vector<float>& importance = p->importances[i];
    if (to != t.encoding) ++summary.converted;
    if (!importance.empty()) ++summary.weighted;
    summary.input_bytes += t.n_bytes;
    p->writer.add_tensor(t.name, written_dims(t), to, [&, i, to](uint8_t* dst, uint64_t n_bytes) {
      const std::span<const uint8_t> src = in.tensor_data(t);
      if (to == t.encoding) {
        std::memcpy(dst, src.data(), n_bytes);
      } else {
        const uint64_t row = t.dims[0];
        const uint64_t n_rows = t.n_elements() / row;
        RowImportance weights;
        if (!importance.empty()) weights = {importance.data(), n_rows / (importance.size() / row)};
        convert_rows(pool, src.data(), t.encoding, dst, to, row, n_rows, t.name, weights);
      }
      summary.output_bytes += n_bytes;
      if (on_tensor)
        on_tensor({i, order.size(), t.name, t.encoding, to, !importance.empty(), choice.override});
    });
  }
  p->writer.write(options.output);
  return summary;
}

}  // namespace synapse::quant

// synth_model: architecture + shape + type policy + tokenizer + weights,
// handed to the GGUF writer, which pulls each tensor's bytes as it writes.
#include "format/gguf_writer.h"
#include "quantize/quant_types.h"
#include "quantize/type_policy.h"
#include "synapse/error.h"
#include "synth/synth.h"
#include "synth/synth_arch.h"
#include "synth/synth_names.h"
#include "synth/synth_vocab.h"
#include "synth/synth_weights.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/vocabulary_writer.h"

namespace synapse {

namespace {

const quant::QuantType& resolve_type(const std::string& name) {
  const std::string wanted = name.empty() ? "f32" : name;
  if (const quant::QuantType* type = quant::find_quant_type(wanted)) return *type;
  synth::throw_unknown("type", wanted, quant::quant_type_names());
}

// Each tensor's encoding under llama.cpp's rules for the file type, as its
// quantizer would choose them for this model.
std::vector<Encoding> choose_encodings(const std::vector<synth::TensorSpec>& tensors,
                                       const synth::ArchSpec& arch, const synth::SynthShape& shape,
                                       const quant::QuantType& type, bool pure) {
  const quant::ModelFacts facts{arch.gguf_arch, shape.n_layer, shape.n_expert, shape.n_head, shape.n_head_kv};
  std::vector<quant::TensorToType> requests;
  for (const synth::TensorSpec& t : tensors) requests.push_back({t.name, t.dims, Encoding::F32});
  return quant::choose_encodings(type, facts, requests, pure);
}

void write_general_metadata(GgufMetadata& md, const synth::ArchSpec& arch,
                            const synth::SynthShape& shape, const quant::QuantType& type,
                            uint64_t seed) {
  md.set("general.architecture", GgufValue(arch.gguf_arch));
  md.set("general.name", GgufValue("synth " + std::string(arch.name) + " " + shape.preset));
  md.set("general.description",
         GgufValue("Synthetic model written by synapse synth: random weights (seed " +
                   std::to_string(seed) + ") in the shape of " + shape.preset +
                   ", not a trained model; its output is meaningless."));
  md.set("general.file_type", GgufValue(type.file_type));
  if (quant::is_quantized(type))
    md.set("general.quantization_version", GgufValue(quant::kQuantizationVersion));
}

}  // namespace

std::vector<std::string> synth_arches() { return synth::arch_names(); }
std::vector<std::string> synth_presets() { return synth::preset_names(); }
std::vector<std::string> synth_types() { return quant::quant_type_names(); }

void synth_model(const SynthOptions& opts, const std::string& path,
                 const std::function<void(uint64_t, uint64_t)>& progress) {
  const synth::ArchSpec& arch = synth::resolve_arch(opts);
  const quant::QuantType& type = resolve_type(opts.type);
  std::unique_ptr<Tokenizer> real_vocab;
  SynthOptions shaped = opts;
  if (!opts.vocab_file.empty()) {
    real_vocab = load_tokenizer(opts.vocab_file);
    const auto size = static_cast<uint32_t>(real_vocab->vocabulary().size());
    if (opts.n_vocab && *opts.n_vocab != size)
      throw Error(ErrorKind::Usage, "--n-vocab " + std::to_string(*opts.n_vocab) + " disagrees with the " +
                                        std::to_string(size) + " tokens of " + opts.vocab_file);
    shaped.n_vocab = size;
  }
  const synth::SynthShape shape = synth::resolve_shape(shaped, arch);

  GgufWriter writer;
  write_general_metadata(writer.metadata(), arch, shape, type, opts.seed);
  synth::write_arch_metadata(writer.metadata(), arch, shape);
  if (real_vocab) {
    write_vocabulary(writer.metadata(), real_vocab->vocabulary());
  } else {
    synth::write_vocab(writer.metadata(), shape.vocab_family, shape.n_vocab);
  }

  const std::vector<synth::TensorSpec> tensors = synth::arch_tensors(arch, shape);
  const std::vector<Encoding> encodings = choose_encodings(tensors, arch, shape, type, opts.pure);
  for (size_t i = 0; i < tensors.size(); ++i) {
    const synth::TensorSpec& t = tensors[i];
    const Encoding e = encodings[i];
    writer.add_tensor(
        t.name, t.dims, e,
        [t, e, shape, seed = opts.seed, threads = opts.threads](uint8_t* dst, uint64_t n_bytes) {
          synth::fill_tensor(dst, n_bytes, t, e, shape, seed, threads);
        });
  }
  writer.write(path, progress);
}

}  // namespace synapse

// synth_model: architecture + shape + type policy + tokenizer + weights,
// handed to the GGUF writer, which pulls each tensor's bytes as it writes.
#include "format/gguf_writer.h"
#include "synapse/error.h"
#include "synth/synth.h"
#include "synth/synth_arch.h"
#include "synth/synth_vocab.h"
#include "synth/synth_weights.h"
#include "synth/type_policy.h"
#include "tokenizer/tokenizer.h"

namespace synapse {

namespace {

// llama.cpp's GGML_QNT_VERSION, recorded by its quantizer.
constexpr uint32_t kQuantizationVersion = 2;

void write_general_metadata(GgufMetadata& md, const synth::ArchSpec& arch,
                            const synth::SynthShape& shape, const synth::SynthType& type,
                            uint64_t seed) {
  md.set("general.architecture", GgufValue(arch.gguf_arch));
  md.set("general.name", GgufValue("synth " + std::string(arch.name) + " " + shape.preset));
  md.set("general.description",
         GgufValue("Synthetic model written by synapse synth: random weights (seed " +
                   std::to_string(seed) + ") in the shape of " + shape.preset +
                   ", not a trained model; its output is meaningless."));
  md.set("general.file_type", GgufValue(type.file_type));
  if (synth::is_quantized(type))
    md.set("general.quantization_version", GgufValue(kQuantizationVersion));
}

}  // namespace

std::vector<std::string> synth_arches() { return synth::arch_names(); }
std::vector<std::string> synth_presets() { return synth::preset_names(); }
std::vector<std::string> synth_types() { return synth::type_names(); }

void synth_model(const SynthOptions& opts, const std::string& path,
                 const std::function<void(uint64_t, uint64_t)>& progress) {
  const synth::ArchSpec& arch = synth::resolve_arch(opts);
  const synth::SynthType& type = synth::find_type(opts.type);
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
    synth::write_real_vocab(writer.metadata(), real_vocab->vocabulary());
  } else {
    synth::write_vocab(writer.metadata(), shape.vocab_family, shape.n_vocab);
  }

  for (const synth::TensorSpec& t : synth::arch_tensors(arch, shape)) {
    const Encoding e = synth::choose_encoding(type, t, shape, opts.pure);
    writer.add_tensor(
        t.name, t.dims, e,
        [t, e, shape, seed = opts.seed, threads = opts.threads](uint8_t* dst, uint64_t n_bytes) {
          synth::fill_tensor(dst, n_bytes, t, e, shape, seed, threads);
        });
  }
  writer.write(path, progress);
}

}  // namespace synapse

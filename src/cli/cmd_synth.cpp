// synapse synth: write a random-weight GGUF of a real architecture.
#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "format/gguf_reader.h"
#include "kernels/cpu/core_count.h"
#include "progress/progress.h"
#include "synth/synth.h"
#include "synth/synth_names.h"

namespace synapse::cli {
namespace {

struct SynthArgs {
  SynthArgs() {
    opts.preset = "tiny";
    opts.type = "f32";
  }
  SynthOptions opts;
  std::string output;
};

int run_synth(const SynthArgs& args) {
  {
    std::unique_ptr<Progress> progress;  // made once the writer knows the file's size
    synth_model(args.opts, args.output, [&progress](uint64_t done, uint64_t total) {
      if (!progress) progress = std::make_unique<Progress>("synth: writing", total);
      progress->update(done);
    });
  }
  // Read the result back: the summary states what is in the file.
  const GgufFile file = GgufFile::open(args.output);
  std::printf(
      "wrote %s: %s, preset %s, type %s, %zu tensors, %llu bytes (random weights, seed %llu)\n",
      args.output.c_str(), file.metadata().get_string("general.architecture").c_str(),
      args.opts.preset.c_str(), args.opts.type.c_str(), file.tensors().size(),
      static_cast<unsigned long long>(file.file_size()),
      static_cast<unsigned long long>(args.opts.seed));
  return kExitOk;
}

std::function<int()> setup_synth(CLI::App& app) {
  auto args = std::make_shared<SynthArgs>();
  SynthOptions& o = args->opts;
  app.add_option("--arch", o.arch,
                 "architecture: " + synth::join_names(synth_arches()) +
                     " (default: the preset's own, llama for tiny)");
  app.add_option("--preset", o.preset, "shape: " + synth::join_names(synth_presets()))
      ->capture_default_str();
  app.add_option("--type", o.type,
                 "file type: " + synth::join_names(synth_types()) +
                     " (tensors get llama.cpp's mix for it unless --pure)")
      ->capture_default_str();
  app.add_option("--seed", o.seed, "random seed; the same options and seed give the same bytes")
      ->capture_default_str();
  app.add_flag("--pure", o.pure, "give every quantizable weight --type (llama-quantize --pure)");
  app.add_option("-t,--threads", o.threads, "threads (default: one per core)")->check(CLI::Range(0, cpu::kMaxThreads));
  app.add_option("-o,--output", args->output, "GGUF file to write")->required();
  app.add_option("--vocab", o.vocab_file,
                 "embed this real vocabulary (tokenizer.json, SentencePiece .model or GGUF); sets --n-vocab")
      ->check(CLI::ExistingFile);

  const struct {
    const char* flag;
    std::optional<uint32_t> SynthOptions::*field;
    const char* help;
  } overrides[] = {
      {"--n-layer", &SynthOptions::n_layer, "blocks"},
      {"--n-embd", &SynthOptions::n_embd, "embedding width"},
      {"--n-head", &SynthOptions::n_head, "attention heads"},
      {"--n-head-kv", &SynthOptions::n_head_kv, "key/value heads"},
      {"--n-ff", &SynthOptions::n_ff, "FFN width (per expert for MoE architectures)"},
      {"--n-vocab", &SynthOptions::n_vocab, "vocabulary size"},
      {"--n-expert", &SynthOptions::n_expert, "experts (MoE architectures)"},
      {"--n-expert-used", &SynthOptions::n_expert_used, "experts used per token (MoE)"},
      {"--head-dim", &SynthOptions::head_dim, "head dimension (qwen3, qwen3moe: may differ from n_embd / n_head)"},
      {"--n-ctx", &SynthOptions::n_ctx, "context length (context_length)"},
  };
  for (const auto& ov : overrides) {
    app.add_option_function<uint32_t>(
        ov.flag, [args, field = ov.field](const uint32_t& v) { args->opts.*field = v; },
        std::string(ov.help) + " (overrides the preset)");
  }
  SynthRopeScaling& rope = o.rope_scaling;
  app.add_option("--rope-scaling", rope.type,
                 "RoPE scaling the file states (rope.scaling.type): none, linear or yarn (default: no "
                 "rope.scaling keys)");
  app.add_option("--rope-scale", rope.factor, "RoPE scaling factor (rope.scaling.factor) for linear and yarn");
  app.add_option("--rope-orig-ctx", rope.original_context,
                 "yarn's original context (rope.scaling.original_context_length; default: no key, i.e. the "
                 "context length)");
  app.footer(
      "\nExamples:\n"
      "  synapse synth --arch llama --preset tiny --type q8_0 -o tiny.gguf\n"
      "  synapse synth --preset qwen2.5-0.5b --type q4_k_m --vocab tokenizer.json -o qwen.gguf\n"
      "  synapse synth --preset qwen3-30b-a3b --type q8_0 --n-layer 4 -o moe.gguf\n"
      "  synapse synth --arch qwen2 --rope-scaling yarn --rope-scale 4 --rope-orig-ctx 64 -o yarn.gguf\n");
  return [args] { return run_synth(*args); };
}

Register synth_reg{{"synth", "write a random-weight GGUF of a real architecture (for tests)", setup_synth}};

}  // namespace
}  // namespace synapse::cli

// synapse-peer: runs llama.cpp (the pinned prebuilt libraries, loaded at run
// time) on the same files and token ids as Synapse, for comparisons and
// benchmarks. See bench/peer/README.md.
#include <cstdio>
#include <exception>
#include <map>

#include "llama_loader.h"
#include "peer_commands.h"
#include "peer_error.h"

namespace synapse::peer {

LlamaApi start_peer(const PeerOptions& options) {
  return start_llama(resolve_lib_dir(options.lib_dir), options.cpu, options.verbose);
}

void add_attention_flags(CLI::App& sub, AttentionOptions& attention) {
  const std::map<std::string, int32_t> fa = {{"auto", LLAMA_FLASH_ATTN_TYPE_AUTO},
                                             {"on", LLAMA_FLASH_ATTN_TYPE_ENABLED},
                                             {"off", LLAMA_FLASH_ATTN_TYPE_DISABLED}};
  const std::map<std::string, int32_t> kv = {{"f16", GGML_TYPE_F16}, {"f32", GGML_TYPE_F32}};
  sub.add_option("--fa", attention.flash_attn_type, "flash attention: auto (default), on, off")
      ->transform(CLI::CheckedTransformer(fa))
      ->option_text("auto|on|off");
  sub.add_option("--kv", attention.kv_type, "KV cache type: f16 (default) or f32")
      ->transform(CLI::CheckedTransformer(kv))
      ->option_text("f16|f32");
}

}  // namespace synapse::peer

int main(int argc, char** argv) {
  using namespace synapse::peer;
  CLI::App app{"synapse-peer: llama.cpp as a reference for Synapse (CPU only)"};
  app.require_subcommand(1);
  // Lets the global options (--lib, --cpu, -v) follow the subcommand too.
  app.fallthrough();
  PeerOptions options;
  app.add_option("--lib", options.lib_dir,
                 "folder with the llama.cpp libraries (default: $SYNAPSE_PEER_LIB, else "
                 "<build>/peer/lib as installed by bench/peer/install.sh <build>/peer)");
  app.add_option("--cpu", options.cpu,
                 "CPU backend variant to load, e.g. haswell or zen4 (default: the best this "
                 "machine supports)");
  app.add_flag("-v,--verbose", options.verbose, "show llama.cpp's own log on stderr");

  const struct {
    const char* name;
    const char* summary;
    Action (*setup)(CLI::App&, const PeerOptions&);
  } commands[] = {
      {"selftest", "load the libraries and check the declared struct layouts", setup_selftest},
      {"logits", "evaluate token ids in one batch; print the top logits per position",
       setup_logits},
      {"greedy", "greedy generation after a prompt; print the generated ids", setup_greedy},
      {"bench", "llama-bench style prompt (pp) and generation (tg) throughput", setup_bench},
      {"dequant", "dequantize one tensor of a GGUF file with ggml; raw float32 out", setup_dequant},
      {"tokenize", "tokenize text with the model's vocabulary; print a JSON array", setup_tokenize},
      {"perplexity", "llama-perplexity's protocol (and KL divergence), as synapse perplexity", setup_perplexity},
      {"quantize", "llama_model_quantize: re-encode a GGUF file to a type, as synapse quantize", setup_quantize},
  };
  std::map<CLI::App*, Action> actions;
  for (const auto& c : commands) {
    CLI::App* sub = app.add_subcommand(c.name, c.summary);
    actions[sub] = c.setup(*sub, options);
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {  // --help
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "synapse-peer: usage error: %s\n", e.what());
    return kExitUsage;
  }
  for (auto& [sub, action] : actions) {
    if (!sub->parsed()) continue;
    try {
      return action();
    } catch (const PeerError& e) {
      std::fprintf(stderr, "synapse-peer: %s\n", e.what());
      return e.exit_code();
    } catch (const std::exception& e) {
      std::fprintf(stderr, "synapse-peer %s: %s\n", sub->get_name().c_str(), e.what());
      return kExitFailed;
    }
  }
  return kExitUsage;
}

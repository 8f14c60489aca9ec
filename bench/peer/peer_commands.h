// The subcommands of synapse-peer. Each setup function declares its flags on
// `sub` and returns the action to run once the command line is parsed; the
// action returns an exit code or throws PeerError.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <string>

#include "llama_api.h"
#include "llama_session.h"

namespace synapse::peer {

// Options of the program itself, filled in before any action runs.
struct PeerOptions {
  std::string lib_dir;   // --lib; empty: see resolve_lib_dir()
  std::string cpu;       // --cpu; empty: the best CPU backend variant
  bool verbose = false;  // -v: keep llama.cpp's own log (stderr)
};

using Action = std::function<int()>;

Action setup_selftest(CLI::App& sub, const PeerOptions& options);
Action setup_logits(CLI::App& sub, const PeerOptions& options);
Action setup_greedy(CLI::App& sub, const PeerOptions& options);
Action setup_bench(CLI::App& sub, const PeerOptions& options);
Action setup_dequant(CLI::App& sub, const PeerOptions& options);
Action setup_tokenize(CLI::App& sub, const PeerOptions& options);
Action setup_perplexity(CLI::App& sub, const PeerOptions& options);
Action setup_quantize(CLI::App& sub, const PeerOptions& options);

// Adds --fa auto|on|off and --kv f16|f32, filling `attention`.
void add_attention_flags(CLI::App& sub, AttentionOptions& attention);

// Loads the libraries named by `options` and starts llama.cpp (see start_llama).
LlamaApi start_peer(const PeerOptions& options);

}  // namespace synapse::peer

// The perplexity command as a user runs it, for any engine (synapse
// perplexity, synapse-peer perplexity): reads the text, runs the protocol
// (perplexity.h), saves or compares reference log-probabilities
// (--kl-divergence-base, --kl-divergence) and prints llama-perplexity's
// output: "[1]5.1234,[2]..." as chunks finish and the final estimate on
// stdout, progress and ETA on stderr.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "eval/perplexity.h"

namespace synapse::eval {

struct PerplexityToolOptions {
  std::string text_file;    // -f
  int64_t n_ctx = 512;      // -c
  int64_t max_chunks = -1;  // --chunks; negative: all
  std::string kl_base;      // --kl-divergence-base FILE
  bool kl = false;          // --kl-divergence: compare with kl_base instead of writing it
};

// What the tool needs of an engine.
struct PerplexityEngine {
  // The text's tokens, BOS in front where the vocabulary adds it.
  std::function<std::vector<int32_t>(const std::string& text)> tokenize;
  // Replaces each chunk's first token (where the vocabulary adds BOS).
  std::optional<int32_t> bos;
  // An evaluator for chunks of n_ctx tokens.
  std::function<std::unique_ptr<ChunkEvaluator>(int64_t n_ctx)> open;
};

// A chunked run's progress as llama-perplexity prints it: after the first
// chunk "TOOL: S seconds per chunk - ETA M minutes" on stderr, after each
// "[k]PPL," on stdout.
ChunkObserver chunk_printer(const char* tool);
// "\nFinal estimate: PPL = P +/- E\n" on stdout.
void print_final_estimate(const NllSums& nll);

// A text file's bytes. Throws Error(Io) when it cannot be read.
std::string read_text_file(const std::string& path);

// Throws Error: Usage for contradictory options, Io for files, InvalidValue
// for a text too short or a reference of another vocabulary.
void run_perplexity_tool(const PerplexityToolOptions& options, const PerplexityEngine& engine);

}  // namespace synapse::eval

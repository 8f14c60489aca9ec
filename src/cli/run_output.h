// What `synapse run` writes: the text on stdout (TokenPrinter) and
// llama.cpp's closing timings on stderr (RunTimer), shared by the single-
// process and the pipelined run.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <span>
#include <string>

#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8_stream.h"

namespace synapse::cli {

// Ids on one line, space-separated.
void print_id_line(std::span<const int32_t> ids);

struct PrintOptions {
  bool raw = false;             // --raw: the exact bytes, not valid UTF-8
  bool display_prompt = true;   // not --no-display-prompt
  bool print_ids = false;       // --ids: a final line of the generated ids
};

// The prompt (unless display_prompt is off), each token as it comes (ids
// where there is no tokenizer), then a newline and, with print_ids, the
// generated ids.
class TokenPrinter {
 public:
  TokenPrinter(const PrintOptions& options, const Tokenizer* tokenizer);
  void prompt(std::span<const int32_t> ids);
  void token(int32_t id);
  void finish(std::span<const int32_t> ids);

 private:
  static void print(const std::string& bytes);
  PrintOptions options_;
  const Tokenizer* tokenizer_;
  Utf8Stream text_;
};

// llama.cpp's closing timings on stderr: the prompt's evaluation, then the
// generated tokens' (each but the last is evaluated; the first is sampled
// from the prompt's logits).
class RunTimer {
 public:
  RunTimer() : start_(Clock::now()) {}
  void token_chosen() {
    if (!first_token_) first_token_ = Clock::now();
  }
  // From the first token chosen until now.
  int64_t decode_ns() const;
  void print(size_t prompt_tokens, size_t generated_tokens) const;

 private:
  using Clock = std::chrono::steady_clock;
  static void print_line(const char* what, size_t tokens, Clock::duration took);
  Clock::time_point start_;
  std::optional<Clock::time_point> first_token_;
};

}  // namespace synapse::cli

#include "cli/run_output.h"

#include <cstdio>

namespace synapse::cli {

void print_id_line(std::span<const int32_t> ids) {
  for (size_t i = 0; i < ids.size(); ++i) std::printf(i ? " %d" : "%d", ids[i]);
  std::printf("\n");
}

TokenPrinter::TokenPrinter(const PrintOptions& options, const Tokenizer* tokenizer)
    : options_(options),
      tokenizer_(tokenizer),
      text_(options.raw ? Utf8Stream::Invalid::Keep : Utf8Stream::Invalid::Replace) {}

void TokenPrinter::prompt(std::span<const int32_t> ids) {
  if (!tokenizer_ || !options_.display_prompt) return;  // the prompt first, as llama.cpp prints it
  print(text_.push(tokenizer_->decode(ids)));
  std::fflush(stdout);
}

void TokenPrinter::token(int32_t id) {
  if (tokenizer_) print(text_.push(tokenizer_->token_to_piece(id)));
  else if (!options_.print_ids) std::printf("%d ", id);
  std::fflush(stdout);
}

void TokenPrinter::finish(std::span<const int32_t> ids) {
  if (tokenizer_) print(text_.flush());
  if (tokenizer_ || !options_.print_ids) std::printf("\n");
  if (options_.print_ids) print_id_line(ids);
}

void TokenPrinter::print(const std::string& bytes) { std::fwrite(bytes.data(), 1, bytes.size(), stdout); }

int64_t RunTimer::decode_ns() const {
  const Clock::time_point end = Clock::now();
  return std::chrono::duration_cast<std::chrono::nanoseconds>(end - first_token_.value_or(end)).count();
}

void RunTimer::print(size_t prompt_tokens, size_t generated_tokens) const {
  const Clock::time_point end = Clock::now();
  const Clock::time_point first = first_token_.value_or(end);
  print_line("prompt eval", prompt_tokens, first - start_);
  print_line("eval", generated_tokens > 0 ? generated_tokens - 1 : 0, end - first);
}

void RunTimer::print_line(const char* what, size_t tokens, Clock::duration took) {
  const double ms = std::chrono::duration<double, std::milli>(took).count();
  std::fprintf(stderr, "synapse run: %11s: %5zu tokens, %10.2f ms, %8.2f tok/s\n", what, tokens, ms,
               ms > 0 ? 1000.0 * static_cast<double>(tokens) / ms : 0.0);
}

}  // namespace synapse::cli

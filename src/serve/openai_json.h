// The JSON the server answers with, in OpenAI's shapes: a whole completion,
// the chunks of a streamed one, and error objects.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <span>
#include <string>

#include "serve/job.h"
#include "serve/request.h"
#include "tokenizer/tokenizer.h"

namespace synapse::serve {

// Serializes for the wire: invalid UTF-8 (a token's bytes) becomes U+FFFD
// instead of throwing.
std::string to_wire(const nlohmann::json& value);

// {"error": {"message", "type", "param", "code"}}, type named after the
// status as OpenAI names it.
nlohmann::json error_body(int status, const std::string& message, const std::string& param = {});

// The answer to one request, built as its tokens come.
class CompletionWriter {
 public:
  // Every object written names the model and its numerical mode.
  CompletionWriter(const CompletionRequest& request, const Tokenizer& tokenizer, std::string model,
                   std::string numerical_mode = "EquivalentNumerics");

  // Streaming: the chunk carrying one output (its text and logprobs), the
  // chat's opening chunk (the assistant's role) and the closing one (the
  // finish reason), and the usage chunk of stream_options.include_usage.
  nlohmann::json opening_chunk() const;
  nlohmann::json chunk(const TokenOut& token) const;
  nlohmann::json closing_chunk(FinishReason reason) const;
  nlohmann::json usage_chunk(const JobUsage& usage) const;

  // Not streaming: every output at once.
  nlohmann::json whole(std::span<const TokenOut> tokens, FinishReason reason, const JobUsage& usage) const;

  bool chat() const { return request_.endpoint == Endpoint::ChatCompletions; }

 private:
  nlohmann::json envelope(bool chunk) const;
  nlohmann::json choice(const std::string& text, std::span<const TokenOut> tokens, const char* finish_reason,
                        bool delta) const;
  nlohmann::json logprobs(std::span<const TokenOut> tokens) const;
  static nlohmann::json usage(const JobUsage& usage);

  const CompletionRequest& request_;
  const Tokenizer& tokenizer_;
  std::string model_;
  std::string numerical_mode_;
  std::string id_;
  int64_t created_;
};

}  // namespace synapse::serve

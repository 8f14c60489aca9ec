// The body of an OpenAI-style completion request (POST /v1/completions and
// /v1/chat/completions), parsed and checked before anything runs. Field
// names and defaults follow OpenAI's API and llama-server's extensions
// (top_k, min_p, n_probs, repeat_penalty, ignore_eos). Unknown fields are
// ignored, as both servers do.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "chat/chat_template.h"
#include "synapse/sampling.h"

namespace synapse::serve {

// A request the server refuses: the HTTP status, the field at fault (empty
// when none) and why, as OpenAI's error object reports them.
class RequestError : public std::runtime_error {
 public:
  RequestError(int status, std::string field, const std::string& message)
      : std::runtime_error(message), status_(status), field_(std::move(field)) {}
  int status() const { return status_; }
  const std::string& field() const { return field_; }

 private:
  int status_;
  std::string field_;
};

enum class Endpoint { Completions, ChatCompletions };

struct CompletionRequest {
  Endpoint endpoint = Endpoint::Completions;
  // Completions: the prompt as text or as token ids. Chat: the messages.
  std::variant<std::string, std::vector<int32_t>> prompt;
  std::vector<chat::ChatMessage> messages;
  std::string model;  // echoed back; any name is accepted (one model is served)
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  // max_tokens (or max_completion_tokens, n_predict); unset: until the end
  // of the turn or the context is full.
  std::optional<int32_t> max_tokens;
  SamplingParams sampling;  // the server's defaults, overridden by the request
  std::vector<std::string> stop;
  bool ignore_eos = false;
  // Log-probabilities of the chosen tokens, and of the top `top_logprobs`
  // alternatives at each position (completions: logprobs N; chat: logprobs
  // true with top_logprobs N; llama-server: n_probs N).
  bool logprobs = false;
  int32_t top_logprobs = 0;
};

inline constexpr int32_t kMaxTopLogprobs = 20;  // OpenAI's bound
inline constexpr size_t kMaxStopStrings = 16;

// Parses a JSON body for `endpoint`, starting from the server's sampling
// defaults. Throws RequestError(400) naming the field for invalid JSON, a
// wrong type, a value out of range or a missing prompt/messages.
CompletionRequest parse_completion_request(std::string_view body, Endpoint endpoint,
                                           const SamplingParams& defaults);

}  // namespace synapse::serve

#include "serve/openai_json.h"

#include <atomic>
#include <chrono>

namespace synapse::serve {

using nlohmann::json;

std::string to_wire(const json& value) { return value.dump(-1, ' ', false, json::error_handler_t::replace); }

json error_body(int status, const std::string& message, const std::string& param) {
  const char* type = status == 401   ? "authentication_error"
                     : status == 404 ? "not_found_error"
                     : status == 429 ? "rate_limit_error"
                     : status == 503 ? "unavailable_error"
                     : status < 500  ? "invalid_request_error"
                                     : "server_error";
  return {{"error",
           {{"message", message}, {"type", type}, {"param", param.empty() ? json() : json(param)}, {"code", status}}}};
}

namespace {

std::string next_id(bool chat) {
  static std::atomic<uint64_t> counter{0};
  const auto now = std::chrono::system_clock::now().time_since_epoch();
  char id[64];
  std::snprintf(id, sizeof id, "%s-%llx%04llx", chat ? "chatcmpl" : "cmpl",
                static_cast<unsigned long long>(std::chrono::duration_cast<std::chrono::microseconds>(now).count()),
                static_cast<unsigned long long>(counter++ & 0xffff));
  return id;
}

json bytes_of(const std::string& piece) {
  json bytes = json::array();
  for (unsigned char c : piece) bytes.push_back(c);
  return bytes;
}

}  // namespace

CompletionWriter::CompletionWriter(const CompletionRequest& request, const Tokenizer& tokenizer, std::string model,
                                   std::string numerical_mode)
    : request_(request),
      tokenizer_(tokenizer),
      model_(std::move(model)),
      numerical_mode_(std::move(numerical_mode)),
      id_(next_id(request.endpoint == Endpoint::ChatCompletions)),
      created_(std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
                   .count()) {}

json CompletionWriter::envelope(bool chunk) const {
  const char* object = chat() ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion";
  return {{"id", id_}, {"object", object}, {"created", created_}, {"model", model_}, {"numerical_mode", numerical_mode_}};
}

json CompletionWriter::logprobs(std::span<const TokenOut> tokens) const {
  if (!request_.logprobs) return nullptr;
  if (chat()) {
    json content = json::array();
    for (const TokenOut& t : tokens) {
      if (t.id < 0) continue;
      const std::string piece = tokenizer_.token_to_piece(t.id);
      json top = json::array();
      for (const TokenLogprob& alt : t.top) {
        const std::string alt_piece = tokenizer_.token_to_piece(alt.id);
        top.push_back({{"token", alt_piece}, {"logprob", alt.logprob}, {"bytes", bytes_of(alt_piece)}});
      }
      content.push_back({{"token", piece}, {"logprob", t.logprob}, {"bytes", bytes_of(piece)}, {"top_logprobs", top}});
    }
    return {{"content", content}};
  }
  json out = {{"tokens", json::array()}, {"token_logprobs", json::array()}, {"top_logprobs", json::array()}};
  for (const TokenOut& t : tokens) {
    if (t.id < 0) continue;
    out["tokens"].push_back(tokenizer_.token_to_piece(t.id));
    out["token_logprobs"].push_back(t.logprob);
    json top = json::object();
    for (const TokenLogprob& alt : t.top) top[tokenizer_.token_to_piece(alt.id)] = alt.logprob;
    out["top_logprobs"].push_back(top);
  }
  return out;
}

json CompletionWriter::choice(const std::string& text, std::span<const TokenOut> tokens, const char* finish_reason,
                              bool delta) const {
  // A closing chunk carries no token, so no logprobs either.
  json c = {{"index", 0}, {"logprobs", delta && tokens.empty() ? json() : logprobs(tokens)}, {"finish_reason", finish_reason ? json(finish_reason) : json()}};
  if (!chat()) c["text"] = text;
  else if (delta) c["delta"] = text.empty() ? json::object() : json{{"content", text}};
  else c["message"] = {{"role", "assistant"}, {"content", text}};
  return c;
}

json CompletionWriter::usage(const JobUsage& usage) {
  return {{"prompt_tokens", usage.prompt_tokens},
          {"completion_tokens", usage.completion_tokens},
          {"total_tokens", usage.prompt_tokens + usage.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", usage.cached_tokens}}}};
}

json CompletionWriter::opening_chunk() const {
  json out = envelope(true);
  out["choices"] = json::array({{{"index", 0}, {"delta", {{"role", "assistant"}, {"content", ""}}},
                                 {"logprobs", nullptr}, {"finish_reason", nullptr}}});
  return out;
}

json CompletionWriter::chunk(const TokenOut& token) const {
  json out = envelope(true);
  out["choices"] = json::array({choice(token.text, std::span<const TokenOut>(&token, 1), nullptr, true)});
  return out;
}

json CompletionWriter::closing_chunk(FinishReason reason) const {
  json out = envelope(true);
  out["choices"] = json::array({choice("", {}, to_string(reason), true)});
  return out;
}

json CompletionWriter::usage_chunk(const JobUsage& used) const {
  json out = envelope(true);
  out["choices"] = json::array();
  out["usage"] = usage(used);
  return out;
}

json CompletionWriter::whole(std::span<const TokenOut> tokens, FinishReason reason, const JobUsage& used) const {
  std::string text;
  for (const TokenOut& t : tokens) text += t.text;
  json out = envelope(false);
  out["choices"] = json::array({choice(text, tokens, to_string(reason), false)});
  out["usage"] = usage(used);
  return out;
}

}  // namespace synapse::serve

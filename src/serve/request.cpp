#include "serve/request.h"

#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>

namespace synapse::serve {
namespace {

using nlohmann::json;

[[noreturn]] void refuse(const std::string& field, const std::string& why) { throw RequestError(400, field, why); }

// The field's value when present and not null.
const json* field_of(const json& body, const char* name) {
  const auto it = body.find(name);
  return it == body.end() || it->is_null() ? nullptr : &*it;
}

double number(const json& value, const std::string& field) {
  if (!value.is_number()) refuse(field, "'" + field + "' must be a number");
  const double v = value.get<double>();
  if (!std::isfinite(v)) refuse(field, "'" + field + "' must be finite");
  return v;
}

// An integer in [lo, hi]; a float with an integral value counts.
int64_t integer(const json& value, const std::string& field, int64_t lo, int64_t hi) {
  const double v = number(value, field);
  if (v != std::floor(v)) refuse(field, "'" + field + "' must be an integer");
  if (v < static_cast<double>(lo) || v > static_cast<double>(hi))
    refuse(field, "'" + field + "' must be in [" + std::to_string(lo) + ", " + std::to_string(hi) + "]");
  return static_cast<int64_t>(v);
}

float number_in(const json& value, const std::string& field, double lo, double hi, bool lo_open = false) {
  const double v = number(value, field);
  if ((lo_open ? v <= lo : v < lo) || v > hi) {
    char range[96];
    std::snprintf(range, sizeof range, "%c%g, %g]", lo_open ? '(' : '[', lo, hi);
    refuse(field, "'" + field + "' must be in " + range);
  }
  return static_cast<float>(v);
}

bool boolean(const json& value, const std::string& field) {
  if (!value.is_boolean()) refuse(field, "'" + field + "' must be true or false");
  return value.get<bool>();
}

std::string text(const json& value, const std::string& field) {
  if (!value.is_string()) refuse(field, "'" + field + "' must be a string");
  return value.get<std::string>();
}

std::vector<int32_t> token_ids(const json& array, const std::string& field) {
  std::vector<int32_t> ids;
  ids.reserve(array.size());
  for (size_t i = 0; i < array.size(); ++i)
    ids.push_back(static_cast<int32_t>(
        integer(array[i], field + "[" + std::to_string(i) + "]", 0, std::numeric_limits<int32_t>::max())));
  return ids;
}

// A string, token ids, or a one-element array of either (OpenAI's batch of
// prompts, of which one is served per request).
std::variant<std::string, std::vector<int32_t>> prompt_of(const json& value) {
  if (value.is_string()) return value.get<std::string>();
  if (!value.is_array()) refuse("prompt", "'prompt' must be a string or an array of token ids");
  if (value.empty()) refuse("prompt", "'prompt' is empty");
  if (value[0].is_string() || value[0].is_array()) {
    if (value.size() != 1) refuse("prompt", "one prompt per request is served ('prompt' holds " +
                                                std::to_string(value.size()) + ")");
    return value[0].is_string() ? prompt_of(value[0]) : std::variant<std::string, std::vector<int32_t>>(
                                                            token_ids(value[0], "prompt[0]"));
  }
  return token_ids(value, "prompt");
}

// A message's content: a string, or an array of text parts joined.
std::string content_of(const json& value, const std::string& field) {
  if (value.is_null()) return {};
  if (value.is_string()) return value.get<std::string>();
  if (!value.is_array()) refuse(field, "'" + field + "' must be a string or an array of text parts");
  std::string joined;
  for (size_t i = 0; i < value.size(); ++i) {
    const std::string part = field + "[" + std::to_string(i) + "]";
    const json& p = value[i];
    if (!p.is_object()) refuse(part, "'" + part + "' must be an object");
    const json* type = field_of(p, "type");
    if (!type || text(*type, part + ".type") != "text") refuse(part + ".type", "only text content parts are served");
    const json* t = field_of(p, "text");
    if (!t) refuse(part + ".text", "'" + part + ".text' is missing");
    joined += text(*t, part + ".text");
  }
  return joined;
}

std::vector<chat::ChatMessage> messages_of(const json& value) {
  if (!value.is_array()) refuse("messages", "'messages' must be an array");
  if (value.empty()) refuse("messages", "'messages' is empty");
  std::vector<chat::ChatMessage> messages;
  for (size_t i = 0; i < value.size(); ++i) {
    const std::string at = "messages[" + std::to_string(i) + "]";
    const json& m = value[i];
    if (!m.is_object()) refuse(at, "'" + at + "' must be an object");
    const json* role = field_of(m, "role");
    if (!role) refuse(at + ".role", "'" + at + ".role' is missing");
    const auto content = m.find("content");
    messages.push_back({text(*role, at + ".role"),
                        content == m.end() ? std::string() : content_of(*content, at + ".content")});
  }
  return messages;
}

std::vector<std::string> stop_of(const json& value) {
  std::vector<std::string> stop;
  if (value.is_string()) {
    stop.push_back(value.get<std::string>());
  } else if (value.is_array()) {
    for (size_t i = 0; i < value.size(); ++i) stop.push_back(text(value[i], "stop[" + std::to_string(i) + "]"));
  } else {
    refuse("stop", "'stop' must be a string or an array of strings");
  }
  if (stop.size() > kMaxStopStrings) refuse("stop", "at most " + std::to_string(kMaxStopStrings) + " stop strings");
  for (const std::string& s : stop)
    if (s.empty()) refuse("stop", "a stop string is empty");
  return stop;
}

void parse_sampling(const json& body, SamplingParams& s) {
  if (const json* v = field_of(body, "temperature")) s.temp = number_in(*v, "temperature", 0, 100);
  if (const json* v = field_of(body, "top_k")) s.top_k = static_cast<int32_t>(integer(*v, "top_k", 0, 1 << 30));
  if (const json* v = field_of(body, "top_p")) s.top_p = number_in(*v, "top_p", 0, 1, /*lo_open=*/true);
  if (const json* v = field_of(body, "min_p")) s.min_p = number_in(*v, "min_p", 0, 1);
  if (const json* v = field_of(body, "repeat_penalty"))
    s.repeat_penalty = number_in(*v, "repeat_penalty", 0, 100, /*lo_open=*/true);
  if (const json* v = field_of(body, "repeat_last_n"))
    s.repeat_last_n = static_cast<int32_t>(integer(*v, "repeat_last_n", 0, 1 << 20));
  if (const json* v = field_of(body, "presence_penalty")) s.presence_penalty = number_in(*v, "presence_penalty", -2, 2);
  if (const json* v = field_of(body, "frequency_penalty"))
    s.frequency_penalty = number_in(*v, "frequency_penalty", -2, 2);
  if (const json* v = field_of(body, "seed")) {
    // llama-server's -1 (and any negative) is a random seed.
    const int64_t seed = integer(*v, "seed", std::numeric_limits<int64_t>::min() / 2, UINT32_MAX);
    s.seed = seed < 0 ? std::nullopt : std::optional<uint32_t>(static_cast<uint32_t>(seed));
  }
}

void parse_logprobs(const json& body, Endpoint endpoint, CompletionRequest& r) {
  if (const json* v = field_of(body, "logprobs")) {
    if (endpoint == Endpoint::ChatCompletions) {
      r.logprobs = boolean(*v, "logprobs");
    } else {  // completions: the number of alternatives
      r.top_logprobs = static_cast<int32_t>(integer(*v, "logprobs", 0, kMaxTopLogprobs));
      r.logprobs = true;
    }
  }
  if (const json* v = field_of(body, "top_logprobs")) {
    r.top_logprobs = static_cast<int32_t>(integer(*v, "top_logprobs", 0, kMaxTopLogprobs));
    if (endpoint == Endpoint::ChatCompletions && !r.logprobs)
      refuse("top_logprobs", "'top_logprobs' needs 'logprobs': true");
  }
  if (const json* v = field_of(body, "n_probs")) {
    r.top_logprobs = static_cast<int32_t>(integer(*v, "n_probs", 0, kMaxTopLogprobs));
    r.logprobs = r.logprobs || r.top_logprobs > 0;
  }
}

}  // namespace

CompletionRequest parse_completion_request(std::string_view body, Endpoint endpoint, const SamplingParams& defaults) {
  json doc = json::parse(body, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) refuse("", "the request body is not valid JSON");
  if (!doc.is_object()) refuse("", "the request body must be a JSON object");
  CompletionRequest r;
  r.endpoint = endpoint;
  r.sampling = defaults;
  if (endpoint == Endpoint::ChatCompletions) {
    const json* messages = field_of(doc, "messages");
    if (!messages) refuse("messages", "'messages' is missing");
    r.messages = messages_of(*messages);
  } else {
    const json* prompt = field_of(doc, "prompt");
    if (!prompt) refuse("prompt", "'prompt' is missing");
    r.prompt = prompt_of(*prompt);
  }
  if (const json* v = field_of(doc, "model")) r.model = text(*v, "model");
  if (const json* v = field_of(doc, "stream")) r.stream = boolean(*v, "stream");
  if (const json* options = field_of(doc, "stream_options")) {
    if (!options->is_object()) refuse("stream_options", "'stream_options' must be an object");
    if (const json* v = field_of(*options, "include_usage")) r.include_usage = boolean(*v, "stream_options.include_usage");
  }
  for (const char* name : {"max_tokens", "max_completion_tokens", "n_predict"})
    if (const json* v = field_of(doc, name)) {
      const int64_t n = integer(*v, name, -1, std::numeric_limits<int32_t>::max());
      if (n == 0) refuse(name, std::string("'") + name + "' must be at least 1 (or -1: no limit)");
      r.max_tokens = n < 0 ? std::nullopt : std::optional<int32_t>(static_cast<int32_t>(n));
    }
  if (const json* v = field_of(doc, "n"); v && number(*v, "n") != 1)
    refuse("n", "one choice per request is served ('n' must be 1)");
  parse_sampling(doc, r.sampling);
  if (const json* v = field_of(doc, "stop")) r.stop = stop_of(*v);
  if (const json* v = field_of(doc, "ignore_eos")) r.ignore_eos = boolean(*v, "ignore_eos");
  parse_logprobs(doc, endpoint, r);
  return r;
}

}  // namespace synapse::serve

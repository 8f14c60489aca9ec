// Request bodies: the fields OpenAI and llama-server define are read with
// their defaults, and every bad body is a 400 naming the field.
#include "serve/request.h"

#include <gtest/gtest.h>

#include "serve/stop_text.h"

namespace synapse::serve {
namespace {

CompletionRequest chat(const std::string& body) {
  return parse_completion_request(body, Endpoint::ChatCompletions, SamplingParams{});
}
CompletionRequest completion(const std::string& body) {
  return parse_completion_request(body, Endpoint::Completions, SamplingParams{});
}

// The field a refused body names.
std::string refused_field(const std::string& body, Endpoint endpoint = Endpoint::Completions) {
  try {
    parse_completion_request(body, endpoint, SamplingParams{});
  } catch (const RequestError& e) {
    EXPECT_EQ(e.status(), 400);
    return e.field();
  }
  return "(accepted)";
}

TEST(CompletionRequest, ReadsOpenAIAndLlamaServerFields) {
  const CompletionRequest r = chat(R"({"model": "m", "messages": [{"role": "system", "content": "be brief"},
      {"role": "user", "content": [{"type": "text", "text": "hi "}, {"type": "text", "text": "there"}]}],
      "stream": true, "stream_options": {"include_usage": true}, "max_tokens": 12, "temperature": 0.5,
      "top_p": 0.9, "top_k": 7, "min_p": 0.1, "seed": 42, "stop": ["\n\n", "END"], "logprobs": true,
      "top_logprobs": 3, "repeat_penalty": 1.1, "unknown_field": {"ignored": 1}})");
  ASSERT_EQ(r.messages.size(), 2u);
  EXPECT_EQ(r.messages[1].content, "hi there");
  EXPECT_TRUE(r.stream);
  EXPECT_TRUE(r.include_usage);
  EXPECT_EQ(r.max_tokens, 12);
  EXPECT_FLOAT_EQ(r.sampling.temp, 0.5f);
  EXPECT_FLOAT_EQ(r.sampling.top_p, 0.9f);
  EXPECT_EQ(r.sampling.top_k, 7);
  EXPECT_FLOAT_EQ(r.sampling.min_p, 0.1f);
  EXPECT_EQ(r.sampling.seed, 42u);
  EXPECT_EQ(r.stop, (std::vector<std::string>{"\n\n", "END"}));
  EXPECT_TRUE(r.logprobs);
  EXPECT_EQ(r.top_logprobs, 3);
}

TEST(CompletionRequest, LeavesTheServersDefaultsWhereTheBodyIsSilent) {
  SamplingParams defaults;
  defaults.temp = 0.2f;
  defaults.top_k = 5;
  const CompletionRequest r = parse_completion_request(R"({"prompt": "x"})", Endpoint::Completions, defaults);
  EXPECT_FLOAT_EQ(r.sampling.temp, 0.2f);
  EXPECT_EQ(r.sampling.top_k, 5);
  EXPECT_FALSE(r.max_tokens.has_value());
  EXPECT_FALSE(r.stream);
  EXPECT_EQ(completion(R"({"prompt": "x", "seed": -1})").sampling.seed, std::nullopt);
  EXPECT_EQ(completion(R"({"prompt": "x", "max_tokens": -1})").max_tokens, std::nullopt);
}

TEST(CompletionRequest, TakesPromptsAsTextOrTokenIds) {
  EXPECT_EQ(std::get<std::string>(completion(R"({"prompt": "hello"})").prompt), "hello");
  EXPECT_EQ(std::get<std::string>(completion(R"({"prompt": ["hello"]})").prompt), "hello");
  EXPECT_EQ(std::get<std::vector<int32_t>>(completion(R"({"prompt": [1, 2, 3]})").prompt),
            (std::vector<int32_t>{1, 2, 3}));
  EXPECT_EQ(std::get<std::vector<int32_t>>(completion(R"({"prompt": [[4, 5]]})").prompt),
            (std::vector<int32_t>{4, 5}));
  const CompletionRequest r = completion(R"({"prompt": "x", "logprobs": 2})");
  EXPECT_TRUE(r.logprobs);
  EXPECT_EQ(r.top_logprobs, 2);
}

TEST(CompletionRequest, RefusesBadBodiesNamingTheField) {
  EXPECT_EQ(refused_field("{not json"), "");
  EXPECT_EQ(refused_field("[1, 2]"), "");
  EXPECT_EQ(refused_field("{}"), "prompt");
  EXPECT_EQ(refused_field("{}", Endpoint::ChatCompletions), "messages");
  EXPECT_EQ(refused_field(R"({"messages": []})", Endpoint::ChatCompletions), "messages");
  EXPECT_EQ(refused_field(R"({"messages": [{"content": "x"}]})", Endpoint::ChatCompletions), "messages[0].role");
  EXPECT_EQ(refused_field(R"({"messages": [{"role": "user", "content": [{"type": "image_url"}]}]})",
                          Endpoint::ChatCompletions),
            "messages[0].content[0].type");
  EXPECT_EQ(refused_field(R"({"prompt": 5})"), "prompt");
  EXPECT_EQ(refused_field(R"({"prompt": ["a", "b"]})"), "prompt");
  EXPECT_EQ(refused_field(R"({"prompt": [1, -2]})"), "prompt[1]");
  EXPECT_EQ(refused_field(R"({"prompt": [1, 2.5]})"), "prompt[1]");
  EXPECT_EQ(refused_field(R"({"prompt": "x", "max_tokens": "8"})"), "max_tokens");
  EXPECT_EQ(refused_field(R"({"prompt": "x", "max_tokens": 0})"), "max_tokens");
  EXPECT_EQ(refused_field(R"({"prompt": "x", "temperature": -1})"), "temperature");
  EXPECT_EQ(refused_field(R"({"prompt": "x", "top_p": 0})"), "top_p");
  EXPECT_EQ(refused_field(R"({"prompt": "x", "top_k": 1.5})"), "top_k");
  EXPECT_EQ(refused_field(R"({"prompt": "x", "stream": "yes"})"), "stream");
  EXPECT_EQ(refused_field(R"({"prompt": "x", "stop": [1]})"), "stop[0]");
  EXPECT_EQ(refused_field(R"({"prompt": "x", "stop": ""})"), "stop");
  EXPECT_EQ(refused_field(R"({"prompt": "x", "logprobs": 21})"), "logprobs");
  EXPECT_EQ(refused_field(R"({"prompt": "x", "n": 2})"), "n");
  EXPECT_EQ(refused_field(R"({"prompt": "x", "seed": 1e300})"), "seed");
  EXPECT_EQ(refused_field(R"({"messages": [{"role": "user", "content": "x"}], "top_logprobs": 2})",
                          Endpoint::ChatCompletions),
            "top_logprobs");
}

TEST(StopText, SendsTextAsSoonAsNoStopStringCanBeginInIt) {
  StopText stop({"END", "\n\n"});
  EXPECT_EQ(stop.push("Hello E"), "Hello ");  // "E" may begin "END"
  EXPECT_EQ(stop.push("ND"), "");
  EXPECT_TRUE(stop.stopped());
  EXPECT_EQ(stop.push("more"), "");
  EXPECT_EQ(stop.flush(), "");
}

TEST(StopText, ReleasesAHeldBackTailThatDidNotBecomeAStopString) {
  StopText stop({"END"});
  EXPECT_EQ(stop.push("a\nEN"), "a\n");
  EXPECT_EQ(stop.push("D!"), "");
  StopText other({"END"});
  EXPECT_EQ(other.push("EN"), "");
  EXPECT_EQ(other.push("Z"), "ENZ");
  EXPECT_EQ(other.push("E"), "");
  EXPECT_EQ(other.flush(), "E");
  EXPECT_FALSE(other.stopped());
}

}  // namespace
}  // namespace synapse::serve

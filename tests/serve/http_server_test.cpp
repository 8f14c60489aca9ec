// The HTTP server on loopback, driven by an HTTP client: OpenAI's shapes,
// streaming, the refusals (400, 401, 404, 413, 429, 503) and a graceful stop.
#include "serve/http_server.h"

#include <gtest/gtest.h>
#include <httplib.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "chat/chat_template.h"
#include "serve/serve_fixture.h"

namespace synapse::serve {
namespace {

using nlohmann::json;

struct RunningServer {
  explicit RunningServer(ServerOptions options = {}, int slots = 4, size_t queue = 16, uint32_t max_ctx = 1024)
      : served(slots, queue, max_ctx),
        chat_template(chat::ChatTemplate::parse(*chat::builtin_chat_template("chatml"))),
        server(with_any_port(std::move(options)), served.metrics) {
    server.start();
    client = std::make_unique<httplib::Client>("127.0.0.1", server.bound_port());
    client->set_read_timeout(60);
  }
  void ready(const std::string& numerical_mode = "EquivalentNumerics") {
    ServedModel model;
    model.numerical_mode = numerical_mode;
    model.name = "tiny";
    model.path = served.path;
    model.tokenizer = served.tokenizer.get();
    model.chat_template = &chat_template;
    model.engine = served.engine.get();
    model.n_ctx = served.session->max_ctx();
    model.n_vocab = served.session->vocab();
    server.set_model(model);
  }
  httplib::Result post(const std::string& path, const std::string& body) {
    return client->Post(path.c_str(), body, "application/json");
  }
  static ServerOptions with_any_port(ServerOptions options) {
    options.port = 0;
    return options;
  }

  test::ServedTinyModel served;
  chat::ChatTemplate chat_template;
  HttpServer server;
  std::unique_ptr<httplib::Client> client;
};

json body_of(const httplib::Result& res) { return json::parse(res->body); }

// The data of each server-sent event in a stream.
std::vector<std::string> events(const std::string& stream) {
  std::vector<std::string> out;
  for (size_t at = 0; (at = stream.find("data: ", at)) != std::string::npos;) {
    const size_t end = stream.find("\n\n", at);
    out.push_back(stream.substr(at + 6, end - at - 6));
    at = end;
  }
  return out;
}

const char* kChat = R"({"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 6, "temperature": 0})";

TEST(HttpServer, HealthIs503WhileTheModelLoadsThen200) {
  RunningServer s;
  auto loading = s.client->Get("/health");
  ASSERT_TRUE(loading);
  EXPECT_EQ(loading->status, 503);
  EXPECT_EQ(s.post("/v1/chat/completions", kChat)->status, 503);
  s.ready();
  auto ready = s.client->Get("/health");
  EXPECT_EQ(ready->status, 200);
  EXPECT_EQ(body_of(ready)["status"], "ok");
}

TEST(HttpServer, ChatCompletionAnswersInOpenAIsShape) {
  RunningServer s;
  s.ready();
  auto res = s.post("/v1/chat/completions", kChat);
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  const json body = body_of(res);
  EXPECT_EQ(body["object"], "chat.completion");
  EXPECT_EQ(body["model"], "tiny");
  EXPECT_EQ(body["numerical_mode"], "EquivalentNumerics");
  EXPECT_EQ(body["choices"][0]["message"]["role"], "assistant");
  EXPECT_TRUE(body["choices"][0]["message"]["content"].is_string());
  EXPECT_EQ(body["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(body["usage"]["completion_tokens"], 6);
  EXPECT_EQ(body["usage"]["total_tokens"],
            body["usage"]["prompt_tokens"].get<int>() + body["usage"]["completion_tokens"].get<int>());
  // The same request again: greedy gives the same text, the prompt's pages are reused.
  const json again = body_of(s.post("/v1/chat/completions", kChat));
  EXPECT_EQ(again["choices"][0]["message"]["content"], body["choices"][0]["message"]["content"]);
  EXPECT_GT(again["usage"]["prompt_tokens_details"]["cached_tokens"].get<int>(), 0);
}

TEST(HttpServer, AStreamSendsDeltasThenTheFinishReasonUsageAndDone) {
  RunningServer s;
  s.ready();
  auto res = s.post("/v1/chat/completions",
                    R"({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 5, "temperature": 0,
                        "stream": true, "stream_options": {"include_usage": true}, "logprobs": true, "top_logprobs": 2})");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  EXPECT_EQ(res->get_header_value("Content-Type"), "text/event-stream");
  const std::vector<std::string> data = events(res->body);
  ASSERT_GE(data.size(), 4u);
  EXPECT_EQ(data.back(), "[DONE]");
  EXPECT_EQ(json::parse(data[0])["choices"][0]["delta"]["role"], "assistant");
  const json usage = json::parse(data[data.size() - 2]);
  EXPECT_EQ(usage["usage"]["completion_tokens"], 5);
  const json closing = json::parse(data[data.size() - 3]);
  EXPECT_EQ(closing["choices"][0]["finish_reason"], "length");
  int with_logprobs = 0;
  for (size_t i = 1; i + 3 < data.size(); ++i) {
    const json chunk = json::parse(data[i]);
    EXPECT_EQ(chunk["object"], "chat.completion.chunk");
    const json& lp = chunk["choices"][0]["logprobs"]["content"];
    if (!lp.empty()) {
      ++with_logprobs;
      EXPECT_LE(lp[0]["logprob"].get<double>(), 0.0);
      EXPECT_EQ(lp[0]["top_logprobs"].size(), 2u);
    }
  }
  EXPECT_EQ(with_logprobs, 5);
}

TEST(HttpServer, CompletionsTokenizeAndDetokenizeAgree) {
  RunningServer s;
  s.ready();
  const json tokens = body_of(s.post("/tokenize", R"({"content": "Hello world"})"))["tokens"];
  ASSERT_FALSE(tokens.empty());
  EXPECT_EQ(body_of(s.post("/detokenize", json{{"tokens", tokens}}.dump()))["content"], "Hello world");
  const json by_ids = body_of(s.post("/v1/completions", json{{"prompt", tokens}, {"max_tokens", 4}, {"temperature", 0}}.dump()));
  EXPECT_EQ(by_ids["object"], "text_completion");
  EXPECT_EQ(by_ids["usage"]["prompt_tokens"], tokens.size());
  EXPECT_EQ(body_of(s.client->Get("/v1/models"))["data"][0]["id"], "tiny");
  EXPECT_EQ(body_of(s.client->Get("/v1/models"))["data"][0]["meta"]["numerical_mode"], "EquivalentNumerics");
  EXPECT_EQ(body_of(s.client->Get("/props"))["total_slots"], 4);
}

TEST(HttpServer, EveryStreamedChunkOfAQualityBoundedServerSaysSo) {
  RunningServer s;
  s.ready("QualityBounded");  // synapse serve --drop-layers
  auto res = s.post("/v1/chat/completions",
                    R"({"messages": [{"role": "user", "content": "Hi"}], "max_tokens": 3, "stream": true})");
  ASSERT_TRUE(res);
  int chunks = 0;
  for (const std::string& data : events(res->body)) {
    if (data == "[DONE]") continue;
    EXPECT_EQ(json::parse(data)["numerical_mode"], "QualityBounded") << data;
    ++chunks;
  }
  EXPECT_GT(chunks, 0);
  EXPECT_EQ(body_of(s.client->Get("/v1/models"))["data"][0]["meta"]["numerical_mode"], "QualityBounded");
}

TEST(HttpServer, BadRequestsGetAnErrorObjectAndTheirStatus) {
  ServerOptions options;
  options.max_body_bytes = 4096;
  RunningServer s(options, 4, 16, /*max_ctx=*/64);
  s.ready();
  const auto expect_error = [&](const httplib::Result& res, int status, const std::string& param) {
    ASSERT_TRUE(res);
    EXPECT_EQ(res->status, status) << res->body;
    const json body = body_of(res);
    EXPECT_EQ(body["error"]["code"], status);
    EXPECT_FALSE(body["error"]["message"].get<std::string>().empty());
    if (!param.empty()) {
      EXPECT_EQ(body["error"]["param"], param);
    }
  };
  expect_error(s.post("/v1/chat/completions", "{oops"), 400, "");
  expect_error(s.post("/v1/chat/completions", R"({"messages": [{"role": "user", "content": "x"}], "top_k": "9"})"),
               400, "top_k");
  expect_error(s.post("/v1/completions", R"({"prompt": [1, 999999]})"), 400, "prompt");
  expect_error(s.post("/v1/completions", json{{"prompt", std::vector<int>(64, 5)}}.dump()), 400, "prompt");
  expect_error(s.post("/v1/completions", std::string(8192, ' ')), 413, "");
  expect_error(s.client->Get("/v1/nothing"), 404, "");
  expect_error(s.post("/detokenize", R"({"tokens": [-1]})"), 400, "tokens");
  expect_error(s.post("/tokenize", R"({"content": 3})"), 400, "content");
  // Counted once the answer is written, which may be just after the client read it.
  for (int i = 0; i < 100 && s.server.metrics().requests_failed.load() < 8; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_GE(s.server.metrics().requests_failed.load(), 8u);
}

TEST(HttpServer, AnApiKeyIsRequiredWhereOneIsSet) {
  ServerOptions options;
  options.api_key = "sesame";
  RunningServer s(options);
  s.ready();
  EXPECT_EQ(s.post("/v1/chat/completions", kChat)->status, 401);
  EXPECT_EQ(s.client->Get("/health")->status, 200);
  httplib::Headers auth = {{"Authorization", "Bearer sesame"}};
  EXPECT_EQ(s.client->Post("/v1/chat/completions", auth, kChat, "application/json")->status, 200);
  EXPECT_EQ(s.client->Get("/metrics", auth)->status, 200);
}

TEST(HttpServer, AFullQueueIs429WithRetryAfter) {
  RunningServer s(ServerOptions{}, /*slots=*/1, /*queue=*/0);
  s.ready();
  auto res = s.post("/v1/chat/completions", kChat);
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 429);
  EXPECT_EQ(res->get_header_value("Retry-After"), "1");
}

TEST(HttpServer, AClientLeavingAStreamCancelsItsSequence) {
  RunningServer s(ServerOptions{}, 2, 16, /*max_ctx=*/4096);
  s.ready();
  int chunks = 0;
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/completions";
  req.body = R"({"prompt": "Once", "stream": true, "ignore_eos": true})";
  req.set_header("Content-Type", "application/json");
  req.content_receiver = [&](const char*, size_t, uint64_t, uint64_t) { return ++chunks < 2; };
  s.client->send(req);
  // The server notices at its next write and drops the sequence.
  for (int i = 0; i < 500 && s.server.metrics().processing.load() != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(s.server.metrics().processing.load(), 0);
  // Stopped well before the context filled (as it would have, uncancelled).
  ASSERT_EQ(s.served.session->max_ctx(), 4096);
  EXPECT_LT(s.server.metrics().generated_tokens.load(), 2000u);
}

TEST(HttpServer, AClientLeavingAWholeAnswerCancelsItsSequence) {
  RunningServer s(ServerOptions{}, 2, 16, /*max_ctx=*/4096);
  s.ready();
  httplib::Client impatient("127.0.0.1", s.server.bound_port());
  impatient.set_read_timeout(0, 200'000);  // gives up after 0.2 s
  EXPECT_FALSE(impatient.Post("/v1/completions", R"({"prompt": "Once", "ignore_eos": true})", "application/json"));
  impatient.stop();
  for (int i = 0; i < 500 && s.server.metrics().processing.load() != 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_EQ(s.server.metrics().processing.load(), 0);
  ASSERT_EQ(s.served.session->max_ctx(), 4096);
  EXPECT_LT(s.server.metrics().generated_tokens.load(), 3000u);  // not run to the end of the context
}

TEST(HttpServer, ARefusedRequestClosesItsConnection) {
  ServerOptions options;
  options.api_key = "sesame";
  RunningServer s(options);
  s.ready();
  auto refused = s.post("/v1/chat/completions", kChat);
  ASSERT_TRUE(refused);
  EXPECT_EQ(refused->status, 401);
  EXPECT_EQ(refused->get_header_value("Connection"), "close");
  // The client's next request, on a new connection, is read whole.
  httplib::Headers auth = {{"Authorization", "Bearer sesame"}};
  EXPECT_EQ(s.client->Post("/v1/chat/completions", auth, kChat, "application/json")->status, 200);
}

TEST(HttpServer, DetokenizeRefusesDeeplyNestedTokensWithoutRecursing) {
  RunningServer s;
  s.ready();
  const std::string deep = std::string(100000, '[') + std::string(100000, ']');
  auto res = s.post("/detokenize", "{\"tokens\": [" + deep + "]}");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400);
  EXPECT_EQ(body_of(res)["error"]["param"], "tokens");
}

TEST(HttpServer, StoppingEndsARunningStreamWithAFinalEvent) {
  RunningServer s(ServerOptions{}, 2, 16, /*max_ctx=*/4096);
  s.ready();
  std::string stream;
  std::thread reader([&] {
    httplib::Client client("127.0.0.1", s.server.bound_port());
    client.set_read_timeout(60);
    httplib::Request req;
    req.method = "POST";
    req.path = "/v1/completions";
    req.body = R"({"prompt": "Once", "stream": true, "ignore_eos": true})";
    req.set_header("Content-Type", "application/json");
    req.content_receiver = [&](const char* data, size_t size, uint64_t, uint64_t) {
      stream.append(data, size);
      return true;
    };
    client.send(req);
  });
  for (int i = 0; i < 6000 && s.server.metrics().generated_tokens.load() == 0; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  s.server.stop();
  reader.join();
  const std::vector<std::string> data = events(stream);
  ASSERT_GE(data.size(), 2u);
  EXPECT_EQ(data.back(), "[DONE]");
  EXPECT_NE(data[data.size() - 2].find("shutting down"), std::string::npos) << data[data.size() - 2];
}

}  // namespace
}  // namespace synapse::serve

// The HTTP front of `synapse serve` (cpp-httplib): OpenAI's endpoints and
// llama-server's, a chat page at /, Prometheus metrics. It listens before
// the model is loaded (/health answers 503 until set_model()), and every
// answer to bad input is a JSON error object with a 4xx status.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <string>
#include <thread>

#include "chat/chat_template.h"
#include "serve/batch_engine.h"
#include "serve/metrics.h"
#include "synapse/sampling.h"
#include "tokenizer/tokenizer.h"

namespace httplib {
class Server;
}

namespace synapse::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;  // 0: any free port (bound_port() tells which)
  std::string api_key;  // non-empty: requests need "Authorization: Bearer KEY"
  size_t max_body_bytes = size_t{8} << 20;
  int timeout_seconds = 600;  // a request's whole run, and socket reads and writes
  int http_threads = 16;
  SamplingParams sampling;  // defaults for fields a request leaves out
  int32_t n_predict = -1;   // max_tokens of a request that gives none (-1: no limit)
  bool ignore_eos = false;  // generate past end-of-turn tokens in every request
};

// What the server answers with once the model is loaded; everything must
// outlive the server.
struct ServedModel {
  std::string name;  // the id /v1/models lists
  std::string path;
  const Tokenizer* tokenizer = nullptr;
  const chat::ChatTemplate* chat_template = nullptr;
  std::string chat_template_source;
  BatchEngine* engine = nullptr;
  int64_t n_ctx = 0;
  int64_t n_vocab = 0;
  // Said in every response: "EquivalentNumerics", or "QualityBounded" when
  // layers are dropped (--drop-layers).
  std::string numerical_mode = "EquivalentNumerics";
};

class HttpServer {
 public:
  // The metrics are the batch engine's too; they must outlive the server.
  HttpServer(ServerOptions options, ServerMetrics& metrics);
  ~HttpServer();  // stop()
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  // Binds the address and starts answering (503 but for /health and / until
  // the model is set). Throws Error(Io) when the address cannot be bound.
  void start();
  int bound_port() const { return port_; }
  void set_model(const ServedModel& model);
  // Graceful shutdown: new requests get 503, running jobs end (streams with
  // a final event), in-flight answers are given a few seconds to finish,
  // then the listener stops. Idempotent.
  void stop();

  ServerMetrics& metrics() { return metrics_; }

 private:
  void add_routes();

  ServerOptions options_;
  std::unique_ptr<httplib::Server> http_;
  std::thread listener_;
  int port_ = 0;
  ServerMetrics& metrics_;
  ServedModel model_;
  std::atomic<bool> ready_{false};
  std::atomic<bool> stopping_{false};
  std::atomic<int> in_flight_{0};
};

}  // namespace synapse::serve

#include "serve/http_server.h"

#include <httplib.h>
#include <sys/socket.h>

#include <algorithm>
#include <chrono>
#include <set>

#include "serve/chat_page.h"
#include "serve/completion_route.h"
#include "serve/openai_json.h"
#include "synapse/error.h"

namespace synapse::serve {
namespace {

using nlohmann::json;

// Paths answered without an API key, as llama-server exempts them.
const std::set<std::string> kPublicPaths = {"/", "/health", "/v1/health", "/models", "/v1/models"};
constexpr int kReadTimeoutSeconds = 10;
// Paths answered while the model loads.
const std::set<std::string> kLoadingPaths = {"/", "/health", "/v1/health", "/metrics"};

void send_json(httplib::Response& res, int status, const json& body) {
  res.status = status;
  res.set_content(to_wire(body), "application/json");
}

void send_error(httplib::Response& res, int status, const std::string& message, const std::string& param = {}) {
  if (status == 429) res.set_header("Retry-After", "1");
  send_json(res, status, error_body(status, message, param));
}

// A route whose errors become JSON error objects: RequestError with its
// status, a synapse::Error about the input as 400, anything else as 500.
template <class Handler>
httplib::Server::Handler json_route(Handler handler) {
  return [handler](const httplib::Request& req, httplib::Response& res) {
    try {
      handler(req, res);
    } catch (const RequestError& e) {
      send_error(res, e.status(), e.what(), e.field());
    } catch (const Error& e) {
      send_error(res, e.kind() == ErrorKind::InsufficientMemory ? 503 : 400, e.what());
    } catch (const std::exception& e) {
      send_error(res, 500, e.what());
    }
  };
}

json body_object(const httplib::Request& req) {
  json body = json::parse(req.body, nullptr, /*allow_exceptions=*/false);
  if (body.is_discarded() || !body.is_object()) throw RequestError(400, "", "the request body must be a JSON object");
  return body;
}

bool flag(const json& body, const char* name, bool fallback) {
  const auto it = body.find(name);
  if (it == body.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) throw RequestError(400, name, std::string("'") + name + "' must be true or false");
  return it->get<bool>();
}

json sampling_json(const SamplingParams& s) {
  return {{"temperature", s.temp},          {"top_k", s.top_k},
          {"top_p", s.top_p},               {"min_p", s.min_p},
          {"repeat_penalty", s.repeat_penalty}, {"repeat_last_n", s.repeat_last_n},
          {"presence_penalty", s.presence_penalty}, {"frequency_penalty", s.frequency_penalty},
          {"seed", s.seed ? json(*s.seed) : json(-1)}};
}

}  // namespace

HttpServer::HttpServer(ServerOptions options, ServerMetrics& metrics)
    : options_(std::move(options)), http_(std::make_unique<httplib::Server>()), metrics_(metrics) {
  add_routes();
}

HttpServer::~HttpServer() { stop(); }

void HttpServer::start() {
  // cpp-httplib listens with a backlog of 5, fixed when the library was
  // built: a burst of clients would have SYNs dropped and retried a second
  // later. The socket is listened on again, with the system's backlog.
  auto listening = std::make_shared<int>(-1);  // the library keeps the callback
  http_->set_socket_options([listening](socket_t socket) {
    const int yes = 1;
    ::setsockopt(socket, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);  // as the library's default does
    *listening = socket;
  });
  port_ = options_.port == 0 ? http_->bind_to_any_port(options_.host) : options_.port;
  if (port_ < 0 || (options_.port != 0 && !http_->bind_to_port(options_.host, options_.port)))
    throw Error(ErrorKind::Io, "cannot listen on " + options_.host + ":" + std::to_string(options_.port) +
                                   " (in use, or not an address of this machine)");
  if (*listening >= 0) ::listen(*listening, SOMAXCONN);
  auto listened = std::make_shared<std::atomic<bool>>(false);
  listener_ = std::thread([this, listened] {
    http_->listen_after_bind();
    *listened = true;
  });
  // The library's stop() does nothing until the listener runs: a failure
  // right after start() (a model that does not load) must be able to stop.
  while (!http_->is_running() && !*listened) std::this_thread::sleep_for(std::chrono::milliseconds(1));
}

void HttpServer::set_model(const ServedModel& model) {
  model_ = model;
  ready_ = true;
}

void HttpServer::stop() {
  if (stopping_.exchange(true)) return;
  if (ready_ && model_.engine) model_.engine->shutdown();
  // Answers in flight (streams writing their final event) get a moment.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (in_flight_ > 0 && std::chrono::steady_clock::now() < until)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  http_->stop();
  if (listener_.joinable()) listener_.join();
}

void HttpServer::add_routes() {
  httplib::Server& s = *http_;
  s.set_payload_max_length(options_.max_body_bytes);
  // Reading a request never takes long from a live client; a stalled one
  // must not hold a thread (nor delay a shutdown) for a whole --timeout.
  s.set_read_timeout(std::min(options_.timeout_seconds, kReadTimeoutSeconds));
  s.set_write_timeout(options_.timeout_seconds);
  const int threads = options_.http_threads;
  s.new_task_queue = [threads] { return new httplib::ThreadPool(static_cast<size_t>(threads)); };

  s.set_pre_routing_handler([this](const httplib::Request& req, httplib::Response& res) {
    // A refusal here leaves the body unread: the connection must not carry
    // another request (its bytes would be read as one).
    const auto refuse = [&res](int status, const std::string& message) {
      res.set_header("Connection", "close");
      send_error(res, status, message);
      return httplib::Server::HandlerResponse::Handled;
    };
    if (!options_.api_key.empty() && !kPublicPaths.count(req.path) &&
        req.get_header_value("Authorization") != "Bearer " + options_.api_key)
      return refuse(401, "a valid API key is needed: send 'Authorization: Bearer KEY'");
    if (stopping_ && req.path != "/health") return refuse(503, "the server is shutting down");
    if (!ready_ && !kLoadingPaths.count(req.path)) return refuse(503, "Loading model");
    return httplib::Server::HandlerResponse::Unhandled;
  });
  // Statuses the library sets itself (404, 413, 400 for a bad request line)
  // get an error object too.
  s.set_error_handler(httplib::Server::HandlerWithResponse([](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return httplib::Server::HandlerResponse::Unhandled;
    const std::string message = res.status == 404   ? "no route " + req.method + " " + req.path
                                : res.status == 413 && req.get_header_value("Content-Type").starts_with(
                                                           "application/x-www-form-urlencoded")
                                    ? "a form-encoded body is limited to 8 KiB: send Content-Type: application/json"
                                : res.status == 413 ? "the request body is too large"
                                                    : "the request was refused (HTTP " + std::to_string(res.status) + ")";
    send_error(res, res.status, message);
    return httplib::Server::HandlerResponse::Handled;
  }));
  s.set_logger([this](const httplib::Request&, const httplib::Response& res) {
    ++(res.status < 400 ? metrics_.requests_ok : metrics_.requests_failed);
  });

  s.Get("/", [](const httplib::Request&, httplib::Response& res) { res.set_content(chat_page_html(), "text/html"); });
  const auto health = [this](const httplib::Request&, httplib::Response& res) {
    if (stopping_) send_error(res, 503, "the server is shutting down");
    else if (!ready_) send_error(res, 503, "Loading model");
    else send_json(res, 200, {{"status", "ok"}});
  };
  s.Get("/health", health);
  s.Get("/v1/health", health);
  s.Get("/metrics", [this](const httplib::Request&, httplib::Response& res) {
    res.set_content(metrics_.prometheus(), "text/plain; version=0.0.4");
  });
  const auto models = json_route([this](const httplib::Request&, httplib::Response& res) {
    json meta = {{"n_ctx", model_.n_ctx}, {"n_vocab", model_.n_vocab}, {"numerical_mode", model_.numerical_mode}};
    send_json(res, 200,
              {{"object", "list"},
               {"data", json::array({{{"id", model_.name}, {"object", "model"}, {"created", 0},
                                      {"owned_by", "synapse"}, {"meta", meta}}})}});
  });
  s.Get("/v1/models", models);
  s.Get("/models", models);
  s.Get("/props", json_route([this](const httplib::Request&, httplib::Response& res) {
    send_json(res, 200,
              {{"default_generation_settings", {{"n_ctx", model_.n_ctx}, {"params", sampling_json(options_.sampling)}}},
               {"total_slots", model_.engine->slots()},
               {"model_path", model_.path},
               {"chat_template", model_.chat_template_source},
               {"build_info", "synapse 0.1.0"}});
  }));
  for (const auto& [path, endpoint] : {std::pair{"/v1/completions", Endpoint::Completions},
                                       std::pair{"/completions", Endpoint::Completions},
                                       std::pair{"/v1/chat/completions", Endpoint::ChatCompletions},
                                       std::pair{"/chat/completions", Endpoint::ChatCompletions}}) {
    const Endpoint e = endpoint;
    s.Post(path, json_route([this, e](const httplib::Request& req, httplib::Response& res) {
             answer_completion(req, res, e, model_, options_, in_flight_);
           }));
  }
  s.Post("/tokenize", json_route([this](const httplib::Request& req, httplib::Response& res) {
    const json body = body_object(req);
    const auto content = body.find("content");
    if (content == body.end() || !content->is_string()) throw RequestError(400, "content", "'content' must be a string");
    const std::vector<int32_t> ids = model_.tokenizer->encode(content->get<std::string>(), flag(body, "add_special", false),
                                                              flag(body, "parse_special", true));
    json tokens = json::array();
    const bool pieces = flag(body, "with_pieces", false);
    for (int32_t id : ids)
      tokens.push_back(pieces ? json{{"id", id}, {"piece", model_.tokenizer->token_to_piece(id)}} : json(id));
    send_json(res, 200, {{"tokens", tokens}});
  }));
  s.Post("/detokenize", json_route([this](const httplib::Request& req, httplib::Response& res) {
    const json body = body_object(req);
    const auto tokens = body.find("tokens");
    if (tokens == body.end() || !tokens->is_array()) throw RequestError(400, "tokens", "'tokens' must be an array of ids");
    std::vector<int32_t> ids;
    for (size_t i = 0; i < tokens->size(); ++i) {
      const json& t = (*tokens)[i];
      // Not t.dump(): it recurses once per level of a hostile nesting.
      if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= model_.n_vocab)
        throw RequestError(400, "tokens", "'tokens[" + std::to_string(i) + "]' is not an id of the vocabulary (0.." +
                                              std::to_string(model_.n_vocab - 1) + ")");
      ids.push_back(t.get<int32_t>());
    }
    send_json(res, 200, {{"content", model_.tokenizer->decode(ids)}});
  }));
}

}  // namespace synapse::serve

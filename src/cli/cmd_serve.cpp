// synapse serve: an OpenAI-compatible HTTP server (see serve/http_server.h)
// with continuous batching over --parallel sequences and a chat page at /.
// It listens at once (/health says 503 while the model loads) and shuts
// down gracefully on SIGTERM or SIGINT. Under `mpirun -np R synapse-mpi
// serve`, rank 0 serves and each rank runs its layers of every step
// (dist/pipeline_evaluator.h).
#include <pthread.h>
#include <signal.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <future>
#include <thread>
#include <filesystem>
#include <memory>
#include <optional>

#include "chat/chat_template.h"
#include "cli/chat_template_flag.h"
#include "cli/command.h"
#include "cli/kernel_flags.h"
#include "cli/layer_drop_flag.h"
#include "cli/memory_flags.h"
#include "cli/model_path.h"
#include "cli/pipeline_flags.h"
#include "cli/sampling_flags.h"
#include "cli/weight_warmup.h"
#include "dist/pipeline_evaluator.h"
#include "exec/batch_evaluator.h"
#include "exec/session.h"
#include "generate/chat_session.h"
#include "model/model.h"
#include "serve/batch_engine.h"
#include "serve/http_server.h"
#include "synapse/error.h"
#include "tokenizer/tokenizer.h"

namespace synapse::cli {
namespace {

struct ServeFlags {
  std::string model;
  std::string drop_layers;  // --drop-layers
  std::string alias;
  std::string chat_template;
  serve::ServerOptions server;
  int32_t parallel = 4;
  int32_t ctx = 0;
  int32_t ubatch = 512;
  int32_t queue = 0;  // 0: four per slot
  SamplingFlags sampling;
  KernelFlags kernels;
  MemoryFlags memory;
  PipelineFlags pipeline;  // stages on MPI ranks (synapse-mpi)
};

// SIGINT and SIGTERM, blocked in every thread so that main() alone takes
// them with sigwait.
sigset_t shutdown_signals() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

// Takes SIGINT and SIGTERM on a thread of its own: while the model loads
// they end the process at once; once it serves, the first asks for a
// graceful stop (the returned future) and a second ends the process.
std::future<int> watch_signals(const sigset_t& signals, const std::atomic<bool>& serving) {
  auto first = std::make_shared<std::promise<int>>();
  std::thread([signals, first, &serving] {
    int signal = 0;
    sigwait(&signals, &signal);
    if (!serving) std::_Exit(128 + signal);
    first->set_value(signal);
    sigwait(&signals, &signal);
    std::fprintf(stderr, "synapse serve: second signal: exiting now\n");
    std::_Exit(128 + signal);
  }).detach();
  return first->get_future();
}

// A later rank of `mpirun -np R synapse-mpi serve`: its layers of every
// step rank 0's engine runs, until rank 0 stops (signals are rank 0's to
// act on: mpirun hands them to every rank).
int serve_later_rank(dist::Transport& transport, const dist::PipelineOptions& pipeline,
                     const Model& model, const exec::SessionOptions& options) {
  dist::PipelineRank rank(transport, model, options, pipeline);
  warm_up_weights(model, rank.session());
  dist::serve_later_stage(rank);
  return kExitOk;
}

int serve_model(ServeFlags f) {
  const sigset_t signals = shutdown_signals();
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  ::signal(SIGPIPE, SIG_IGN);  // a client gone mid-stream is a failed write, not a signal
  static std::atomic<bool> serving{false};  // read by the signal thread until the process ends
  dist::Transport* transport = pipeline_transport(f.pipeline);
  const bool first = !transport || transport->rank() == 0;
  if (!first) serving = true;  // a later rank leaves when rank 0 stops it
  std::future<int> stop_signal = watch_signals(signals, serving);

  if (f.server.n_predict == 0) throw Error(ErrorKind::Usage, "-n 0 would generate nothing: give -1 (no limit) or more");
  const std::string path = model_file_path(f.model);
  f.server.sampling = sampling_params(f.sampling, f.ctx);
  const int queue = f.queue > 0 ? f.queue : 4 * f.parallel;
  // Every running or queued request holds a thread: more, and a spare few
  // for /health and the refusals.
  f.server.http_threads = std::max(f.server.http_threads, f.parallel + queue + 4);
  serve::ServerMetrics metrics;
  std::optional<serve::HttpServer> server;
  if (first) {
    server.emplace(f.server, metrics);
    server->start();
    std::fprintf(stderr, "synapse serve: listening on http://%s:%d (loading the model)\n", f.server.host.c_str(),
                 server->bound_port());
  }

  const std::unique_ptr<Tokenizer> tokenizer = first ? load_tokenizer(path) : nullptr;
  const std::string template_source = first ? chat_template_source(f.chat_template, path, "serve") : "";
  const chat::ChatTemplate chat_template = chat::ChatTemplate::parse(template_source);

  LoadOptions load;
  load.max_ctx = static_cast<uint32_t>(f.ctx);
  load.chunk = static_cast<uint32_t>(std::max(f.ubatch, f.parallel));
  const Model model = load_model(path, load);
  exec::SessionOptions options = session_options(f.kernels);
  apply_memory_flags(f.memory, model, options);
  apply_drop_layers(f.drop_layers, options);
  options.logits_rows = f.parallel;
  std::optional<dist::PipelineOptions> pipeline;
  if (transport) pipeline = pipeline_options(f.pipeline, model, transport->size());
  if (!first) return serve_later_rank(*transport, *pipeline, model, options);

  // The model's evaluator: a session here, or rank 0's stage of a pipeline.
  std::optional<exec::Session> session;
  std::optional<dist::PipelineRank> rank;
  std::unique_ptr<exec::BatchEvaluator> evaluator;
  if (pipeline) {
    rank.emplace(*transport, model, options, *pipeline);
    warm_up_weights(model, rank->session());
    evaluator = std::make_unique<dist::PipelineEvaluator>(*rank);
    report_pipeline("serve", *pipeline);
  } else {
    session.emplace(model, options);
    warm_up_weights(model, *session);
    report_numerical_mode(*session);
    evaluator = std::make_unique<exec::SessionEvaluator>(*session);
  }

  serve::EngineOptions engine_options;
  engine_options.slots = f.parallel;
  engine_options.queue_capacity = static_cast<size_t>(queue);
  engine_options.end_ids = end_of_turn_ids(tokenizer->vocabulary());
  serve::BatchEngine engine(*evaluator, *tokenizer, metrics, engine_options);

  serve::ServedModel served;
  served.name = f.alias.empty() ? std::filesystem::path(path).filename().string() : f.alias;
  served.path = path;
  served.tokenizer = tokenizer.get();
  served.chat_template = &chat_template;
  served.chat_template_source = template_source;
  served.engine = &engine;
  served.n_ctx = evaluator->max_ctx();
  served.n_vocab = evaluator->vocab();
  served.numerical_mode = session ? session->scheduler().layer_drop().numerical_mode()
                          : pipeline->wire == dist::Wire::F16 ? "QualityBounded"
                                                               : "EquivalentNumerics";
  server->set_model(served);
  serving = true;
  std::fprintf(stderr, "synapse serve: ready: %s, %d slots, context %lld per sequence, http://%s:%d/\n",
               served.name.c_str(), f.parallel, static_cast<long long>(served.n_ctx), f.server.host.c_str(),
               server->bound_port());

  const int signal = stop_signal.get();
  std::fprintf(stderr, "synapse serve: %s: finishing the requests in flight (again to exit now)\n",
               signal == SIGTERM ? "SIGTERM" : "SIGINT");
  server->stop();
  engine.shutdown();
  return kExitOk;  // the evaluator, going, stops the other ranks
}

const RegisterDashAlias serve_parallel_alias{"-np", "--parallel"};

Register serve_reg{{"serve", "OpenAI-compatible HTTP server with continuous batching and a chat page",
              [](CLI::App& app) -> std::function<int()> {
                auto f = std::make_shared<ServeFlags>();
                app.add_option("-m,--model", f->model, "GGUF model file with a vocabulary, or a folder holding one")
                    ->required()
                    ->check(CLI::ExistingPath);
                app.add_option("--host", f->server.host, "address to listen on");
                app.add_option("--port", f->server.port, "port to listen on (0: any free port)")->check(CLI::Range(0, 65535));
                app.add_option("--parallel", f->parallel, "(-np) sequences decoded together (slots)")
                    ->check(CLI::Range(1, 256));
                app.add_option("-c,--ctx-size", f->ctx, "context of each sequence (0: the model's, at most 4096)")
                    ->check(CLI::Range(0, 1 << 24));
                app.add_option("--ubatch-size", f->ubatch, "most tokens per step (prompts are prefilled in chunks)")
                    ->check(CLI::Range(1, 1 << 16));
                app.add_option("--api-key", f->server.api_key, "require 'Authorization: Bearer KEY'");
                app.add_option("-a,--alias", f->alias, "model name in the API (default: the file's name)");
                app.add_option("--chat-template", f->chat_template,
                               "template name (chatml, llama3, ...) or file, instead of the model's");
                app.add_option("--timeout", f->server.timeout_seconds, "seconds a request may run")
                    ->check(CLI::Range(1, 86400));
                app.add_option("--threads-http", f->server.http_threads, "threads answering HTTP requests")
                    ->check(CLI::Range(1, 1024));
                app.add_option("--queue-size", f->queue, "requests that may wait for a slot (0: 4 per slot)")
                    ->check(CLI::Range(0, 1 << 16));
                app.add_option("--max-body", f->server.max_body_bytes, "largest request body in bytes")
                    ->check(CLI::Range(size_t{1024}, size_t{1} << 30));
                app.add_option("-n,--n-predict", f->server.n_predict,
                               "most tokens per request that sets no max_tokens (-1: no limit)")
                    ->check(CLI::Range(-1, 1 << 30));
                app.add_flag("--ignore-eos", f->server.ignore_eos, "do not stop at end-of-turn tokens");
                add_sampling_flags(app, f->sampling);
                add_kernel_flags(app, f->kernels);
                add_memory_flags(app, f->memory);
                add_drop_layers_flag(app, f->drop_layers);
                add_pipeline_flags(app, f->pipeline);
                app.footer(
                    "\nExamples:\n"
                    "  synapse serve -m model.gguf --port 8080 -np 8\n"
                    "  mpirun -np 2 synapse-mpi serve -m model.gguf --port 8080 -np 8   # layers over 2 ranks\n"
                    "  curl http://127.0.0.1:8080/v1/chat/completions -H 'Content-Type: application/json' \\\n"
                    "       -d '{\"messages\": [{\"role\": \"user\", \"content\": \"Hello\"}]}'\n");
                return [f] { return serve_model(*f); };
              }}};

}  // namespace
}  // namespace synapse::cli

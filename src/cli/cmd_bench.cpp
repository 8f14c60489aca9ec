// synapse bench -m FILE [-p 512] [-n 128] [-t T] [-r R] [-o md|json|jsonl]:
// llama-bench's tests and output formats, run through the region scheduler
// (see generate/bench_runner.h for what each test measures), in one process
// or (mpirun -np R synapse-mpi bench) across pipeline ranks.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>

#include "cli/command.h"
#include "cli/kernel_flags.h"
#include "cli/layer_drop_flag.h"
#include "cli/memory_flags.h"
#include "cli/model_path.h"
#include "cli/pipeline_flags.h"
#include "cli/weight_warmup.h"
#include "dist/pipeline_generation.h"
#include "exec/session.h"
#include "generate/bench_runner.h"
#include "model/model.h"
#include "synapse/error.h"

namespace synapse::cli {
namespace {

struct BenchFlags {
  std::string model;
  std::string drop_layers;  // --drop-layers
  std::vector<uint32_t> prompts{512};
  std::vector<uint32_t> gens{128};
  std::vector<uint32_t> depths{0};
  KernelFlags kernels;
  MemoryFlags memory;
  int32_t reps = 5;
  bool no_warmup = false;
  uint32_t ubatch = 512;
  std::string output = "md";
  PipelineFlags pipeline;  // stages on MPI ranks (synapse-mpi)
};

// What bench prints: json and jsonl print each test as it finishes, as
// llama-bench does; md prints its table at the end.
class BenchOutput {
 public:
  BenchOutput(const std::string& format, const BenchModel& model, int threads)
      : format_(format), model_(model), threads_(threads) {
    if (format_ == "json") std::printf("[\n");
  }
  void add(BenchResult result, bool last) {
    if (format_ == "json") {
      std::printf("%s%s\n", bench_json(model_, threads_, result).dump(2).c_str(), last ? "" : ",");
    } else if (format_ == "jsonl") {
      std::printf("%s\n", bench_json(model_, threads_, result).dump().c_str());
    }
    std::fflush(stdout);
    results_.push_back(std::move(result));
  }
  void finish() {
    if (format_ == "json") std::printf("]\n");
    if (format_ == "md") std::fputs(bench_markdown(model_, threads_, results_).c_str(), stdout);
  }

 private:
  std::string format_;
  BenchModel model_;
  int threads_;
  std::vector<BenchResult> results_;
};

// mpirun -np R synapse-mpi bench: each test as generations through the
// pipeline, which every rank runs alike (rank 0 prints). pp<N>: N prompt
// tokens and the first token sampled from them; tg<N>: a one-token prompt
// and N - 1 more tokens, each a round of the pipeline: N one-token steps.
// Tokens are sampled greedily, so each step waits for the one before, as
// in a real decode.
int bench_pipelined(const BenchFlags& f, dist::Transport& transport, const Model& model,
                    const exec::SessionOptions& options, const std::vector<BenchTest>& tests,
                    BenchModel described) {
  for (const BenchTest& t : tests)
    if (t.n_depth > 0) throw Error(ErrorKind::Usage, "a pipelined bench takes no -d (yet)");
  const dist::PipelineOptions pipeline = pipeline_options(f.pipeline, model, transport.size());
  dist::PipelineRank rank(transport, model, options, pipeline);
  warm_up_weights(model, rank.session());
  const bool first = transport.rank() == 0;
  if (pipeline.wire == dist::Wire::F16) described.numerical_mode = "QualityBounded";
  std::optional<BenchOutput> output;
  if (first) output.emplace(f.output, described, thread_count(f.kernels));
  SamplingParams greedy;
  greedy.temp = 0;
  for (size_t i = 0; i < tests.size(); ++i) {
    const BenchTest& test = tests[i];
    const std::vector<int32_t> prompt =
        bench_tokens(std::max(test.n_prompt, 1u), static_cast<uint32_t>(model.info.n_vocab));
    GenerationOptions gen;
    gen.n_predict = test.n_prompt > 0 ? 1 : static_cast<int32_t>(test.n_gen);
    BenchResult result{test, {}};
    for (int rep = f.no_warmup ? 0 : -1; rep < f.reps; ++rep) {
      const auto start = std::chrono::steady_clock::now();
      rank.generate(greedy, prompt, gen);
      const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start);
      if (rep >= 0) result.samples_ns.push_back(static_cast<uint64_t>(ns.count()));
    }
    if (output) output->add(std::move(result), i + 1 == tests.size());
  }
  if (!output) return kExitOk;
  output->finish();
  report_pipeline("bench", pipeline);
  return kExitOk;
}

int bench(const BenchFlags& f) {
  const std::vector<BenchTest> tests = bench_tests(f.prompts, f.gens, f.depths);
  if (tests.empty()) throw Error(ErrorKind::Usage, "nothing to run: -p and -n are both 0");

  // One context holds the longest test and its depth; each test starts
  // from an empty one. Steps take at most the longest prompt or depth (at
  // least one token).
  uint32_t max_ctx = 0, longest_prompt = 1;
  for (const auto& t : tests) {
    max_ctx = std::max(max_ctx, t.context());
    longest_prompt = std::max({longest_prompt, t.n_prompt, t.n_depth});
  }
  const std::string path = model_file_path(f.model);
  const Model model = load_model(path, LoadOptions{.max_ctx = max_ctx, .chunk = std::min(f.ubatch, longest_prompt)});
  exec::SessionOptions options = session_options(f.kernels);
  apply_memory_flags(f.memory, model, options);
  apply_drop_layers(f.drop_layers, options);
  if (dist::Transport* transport = pipeline_transport(f.pipeline))
    return bench_pipelined(f, *transport, model, options, tests, describe_weights(model, path));
  exec::Session session(model, options);
  // As llama.cpp's loader does (it maps with MAP_POPULATE): a mixture of
  // experts' tests would otherwise read from disk each expert that a token
  // routes to first.
  warm_up_weights(model, session);
  BenchOutput output(f.output, describe_model(model, path, session), thread_count(f.kernels));
  for (size_t i = 0; i < tests.size(); ++i)
    output.add(run_bench_test(session, tests[i], f.reps, !f.no_warmup), i + 1 == tests.size());
  output.finish();
  report_numerical_mode(session);
  return kExitOk;
}

Register bench_reg{{"bench", "Measure prompt and generation throughput, llama-bench style",
              [](CLI::App& app) -> std::function<int()> {
                auto f = std::make_shared<BenchFlags>();
                app.add_option("-m,--model", f->model,
                               "model file (GGUF or llama2.c checkpoint), or a folder holding one GGUF")
                    ->required()
                    ->check(CLI::ExistingPath);
                app.add_option("-p,--n-prompt", f->prompts, "prompt lengths of the pp tests, comma list; 0 skips")
                    ->delimiter(',')
                    ->capture_default_str();
                app.add_option("-n,--n-gen", f->gens, "generated tokens of the tg tests, comma list; 0 skips")
                    ->delimiter(',')
                    ->capture_default_str();
                app.add_option("-d,--n-depth", f->depths,
                               "tokens already in the context when each test runs (filled untimed), comma list")
                    ->delimiter(',')
                    ->capture_default_str();
                add_kernel_flags(app, f->kernels);
                add_memory_flags(app, f->memory);
                add_drop_layers_flag(app, f->drop_layers);
                add_pipeline_flags(app, f->pipeline);
                app.add_option("-r,--repetitions", f->reps, "timed repetitions per test")
                    ->check(CLI::Range(1, 1000))
                    ->capture_default_str();
                app.add_flag("--no-warmup", f->no_warmup,
                             "skip each test's untimed warm-up run (llama-bench's flag; at long context it costs "
                             "as much as the test)");
                app.add_option("--ubatch-size", f->ubatch, "most prompt tokens per step")
                    ->check(CLI::Range(1, 1 << 16))
                    ->capture_default_str();
                app.add_option("-o,--output", f->output, "output format")
                    ->check(CLI::IsMember({"md", "json", "jsonl"}))
                    ->capture_default_str();
                app.footer(
                    "\nExamples:\n"
                    "  synapse bench -m model.gguf                        # pp512 and tg128, as llama-bench\n"
                    "  synapse bench -m model.gguf -p 64,512 -n 32 -r 3 -t 4 -o json\n"
                    "  synapse bench -m model.gguf -p 0 -n 32 -d 8192,32768   # decode deep in the context\n"
                    "  build/bench/peer/synapse-peer bench model.gguf --pp 512 --tg 128 -r 3  # llama.cpp\n"
                    "  mpirun -np 2 synapse-mpi bench -m model.gguf -p 512 -n 128   # layers split over 2 ranks\n");
                return [f] { return bench(*f); };
              }}};

}  // namespace
}  // namespace synapse::cli

// synapse bench -m FILE [-p 512] [-n 128] [-t T] [-r R] [-o md|json|jsonl]:
// llama-bench's tests and output formats, run through the region scheduler
// (see generate/bench_runner.h for what each test measures).
#include <algorithm>
#include <cstdio>
#include <memory>

#include "cli/command.h"
#include "cli/kernel_flags.h"
#include "cli/layer_drop_flag.h"
#include "cli/memory_flags.h"
#include "cli/model_path.h"
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
};

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
  exec::Session session(model, options);
  const BenchModel described = describe_model(model, path, session);
  const int threads = thread_count(f.kernels);

  std::vector<BenchResult> results;
  if (f.output == "json") std::printf("[\n");
  for (size_t i = 0; i < tests.size(); ++i) {
    results.push_back(run_bench_test(session, tests[i], f.reps, !f.no_warmup));
    // json and jsonl print each test as it finishes, as llama-bench does.
    if (f.output == "json") {
      std::printf("%s%s\n", bench_json(described, threads, results.back()).dump(2).c_str(),
                  i + 1 < tests.size() ? "," : "");
    } else if (f.output == "jsonl") {
      std::printf("%s\n", bench_json(described, threads, results.back()).dump().c_str());
    }
    std::fflush(stdout);
  }
  if (f.output == "json") std::printf("]\n");
  if (f.output == "md") std::fputs(bench_markdown(described, threads, results).c_str(), stdout);
  report_numerical_mode(session);
  return kExitOk;
}

Register reg{{"bench", "Measure prompt and generation throughput, llama-bench style",
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
                    "  build/bench/peer/synapse-peer bench model.gguf --pp 512 --tg 128 -r 3  # llama.cpp\n");
                return [f] { return bench(*f); };
              }}};

}  // namespace
}  // namespace synapse::cli

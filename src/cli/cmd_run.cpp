// synapse run: generate from a prompt of token ids (or text, where the model
// has a tokenizer), through the region scheduler.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <random>
#include <sstream>

#include "cli/command.h"
#include "cli/kernel_flags.h"
#include "cli/layer_drop_flag.h"
#include "cli/memory_flags.h"
#include "cli/model_path.h"
#include "cli/pipeline_flags.h"
#include "cli/quantize_at_load.h"
#include "cli/run_output.h"
#include "cli/weight_warmup.h"
#include "cli/sampling_flags.h"
#include "eval/perplexity_tool.h"
#include "exec/region_trace.h"
#include "exec/session.h"
#include "format/part_file.h"
#include "generate/draft_model.h"
#include "generate/generation.h"
#include "generate/parallel_generation.h"
#include "generate/speculative.h"
#include "model/model.h"
#include "synapse/error.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8_stream.h"

namespace synapse::cli {
namespace {

struct RunFlags {
  std::string model;
  std::string tokenizer;  // --tokenizer: overrides the model's own
  std::string quantize;   // --quantize TYPE: re-encoded at load
  std::string drop_layers;  // --drop-layers
  std::string tokens;
  std::string prompt;
  std::string prompt_file;  // -f
  int32_t n_predict = -1;
  SamplingFlags sampling;
  KernelFlags kernels;
  MemoryFlags memory;
  bool plan = false;
  int32_t ctx = 0;
  int32_t ubatch = 512;
  bool print_ids = false;
  bool raw = false;
  bool ignore_eos = false;
  bool no_display_prompt = false;
  std::string dump_logits;
  std::string trace_regions;
  // Speculative decoding: a draft model, or prompt lookup.
  std::string model_draft;
  int32_t draft_max = 16;
  int32_t draft_min = 0;
  int32_t lookup_ngram = 0;
  bool speculative() const { return !model_draft.empty() || lookup_ngram > 0; }
  // Continuations of the prompt decoded together in batched steps.
  int32_t parallel = 1;
  PipelineFlags pipeline;  // stages on MPI ranks (synapse-mpi)
};

std::vector<int32_t> parse_ids(const std::string& text) {
  std::vector<int32_t> ids;
  std::istringstream in(text);
  std::string word;
  while (in >> word) {
    size_t used = 0;
    long long v = 0;
    try {
      v = std::stoll(word, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used != word.size() || v < INT32_MIN || v > INT32_MAX)
      throw Error(ErrorKind::Usage, "--tokens: '" + word + "' is not a token id");
    ids.push_back(static_cast<int32_t>(v));
  }
  if (ids.empty()) throw Error(ErrorKind::Usage, "--tokens: no token ids given");
  return ids;
}

// The tokenizer --tokenizer names, else the model's: a GGUF file's
// vocabulary or a Hugging Face folder's tokenizer file. Without one we read,
// ids are printed (and the reason said once), unless a text prompt needs
// it (`required`): then what is wrong with the file is the error.
// llama2.c checkpoints have none.
std::unique_ptr<Tokenizer> tokenizer_for(const std::string& path, const std::string& flag, bool required) {
  if (!flag.empty()) return load_tokenizer(flag);
  std::error_code ec;
  const bool hf = std::filesystem::is_directory(path, ec) || path.ends_with(".safetensors");
  // Not a regular file (a FIFO would block the read): loading the model
  // says what is wrong with it.
  if (!hf && !std::filesystem::is_regular_file(path, ec)) return nullptr;
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  in.read(magic, 4);
  if (std::string(magic, 4) != "GGUF" && !hf) return nullptr;
  try {
    return load_tokenizer(path);
  } catch (const Error& e) {
    if (required) throw;
    std::fprintf(stderr, "synapse run: no usable tokenizer (%s); printing token ids\n", e.what());
    return nullptr;
  }
}

// Written as PATH.part and renamed by close(): a run that fails before
// leaves no file.
class LogitsDump {
 public:
  explicit LogitsDump(const std::string& path) : out_(path) {}
  void write(std::span<const float> row) {
    out_.append(reinterpret_cast<const uint8_t*>(row.data()), row.size_bytes());
  }
  void close() { out_.commit(); }

 private:
  PartFile out_;
};

// The drafter -md or --lookup-ngram asks for; a draft model must share the
// target's vocabulary.
std::unique_ptr<Drafter> make_drafter(const RunFlags& f, const Model& target, const Tokenizer* target_tokens,
                                      std::unique_ptr<Model>& draft_model, const exec::SessionOptions& options) {
  if (f.model_draft.empty()) return std::make_unique<NgramDrafter>(f.lookup_ngram);
  if (f.lookup_ngram > 0) throw Error(ErrorKind::Usage, "give one of -md FILE or --lookup-ngram N, not both");
  LoadOptions load;
  load.max_ctx = static_cast<uint32_t>(target.graph.bounds.at("max_ctx"));
  load.chunk = static_cast<uint32_t>(f.ubatch);
  const std::string path = model_file_path(f.model_draft);
  draft_model = std::make_unique<Model>(load_model(path, load));
  const std::unique_ptr<Tokenizer> draft_tokens = tokenizer_for(path, "", false);
  if (target_tokens && draft_tokens) {
    require_same_vocabulary(target_tokens->vocabulary(), draft_tokens->vocabulary());
  } else if (target_tokens || draft_tokens || draft_model->info.n_vocab != target.info.n_vocab) {
    throw Error(ErrorKind::InvalidValue, "the draft model's vocabulary cannot be matched with the target's (" +
                                             std::to_string(draft_model->info.n_vocab) + " against " +
                                             std::to_string(target.info.n_vocab) + " tokens, a token table in " +
                                             (target_tokens ? "the target only" : draft_tokens ? "the draft only" : "neither") + ")");
  }
  exec::SessionOptions draft_options = options;
  draft_options.all_logits = false;
  draft_options.logits_rows = 1;
  draft_options.memory = {};
  return std::make_unique<ModelDrafter>(*draft_model, draft_options, sampling_params(f.sampling, f.ctx));
}

void print_speculative_stats(const SpeculativeStats& stats, size_t generated) {
  std::fprintf(stderr,
               "synapse run: speculative: %lld drafted, %lld accepted (%.1f%%), %lld target passes for %zu tokens "
               "(%.2f per token)\n",
               static_cast<long long>(stats.drafted), static_cast<long long>(stats.accepted),
               100.0 * stats.acceptance_rate(), static_cast<long long>(stats.target_passes), generated,
               generated > 1 ? static_cast<double>(stats.target_passes) / static_cast<double>(generated - 1) : 0.0);
}

PrintOptions print_options(const RunFlags& f) { return {f.raw, !f.no_display_prompt, f.print_ids}; }

// -n, the stop token (unless --ignore-eos), and each token printed and timed.
GenerationOptions generation_options(const RunFlags& f, const Model& model, TokenPrinter& printer, RunTimer& timer) {
  GenerationOptions gen;
  gen.n_predict = f.n_predict;
  if (!f.ignore_eos && model.info.eos_token) gen.stop_tokens = {*model.info.eos_token};
  gen.on_token = [&printer, &timer](int32_t id) {
    timer.token_chosen();
    printer.token(id);
  };
  return gen;
}

// The continuations of --parallel P, when all are done (as text, or ids
// with --ids), then the aggregate decode rate; returns the tokens generated.
size_t print_continuations(const RunFlags& f, const std::vector<std::vector<int32_t>>& all, size_t prompt_tokens,
                         double seconds, const Tokenizer* tokenizer) {
  size_t generated = 0;
  for (size_t i = 0; i < all.size(); ++i) {
    generated += all[i].size();
    std::printf("[sequence %zu] ", i);
    if (tokenizer && !f.print_ids) {
      Utf8Stream text(f.raw ? Utf8Stream::Invalid::Keep : Utf8Stream::Invalid::Replace);
      std::string bytes = text.push(tokenizer->decode(all[i]));
      bytes += text.flush();
      std::fwrite(bytes.data(), 1, bytes.size(), stdout);
      std::printf("\n");
    } else {
      print_id_line(all[i]);
    }
  }
  std::fflush(stdout);
  std::fprintf(stderr, "synapse run: %d sequences: %zu prompt tokens once, %zu tokens generated in %.2f s, %.2f tok/s\n",
               f.parallel, prompt_tokens, generated, seconds,
               seconds > 0 ? static_cast<double>(generated) / seconds : 0.0);
  return generated;
}

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// Each rank's line: its layers, and whether its weights all stay resident
// or page (with the paging counters).
void report_rank_memory(const exec::Session& session, int rank, exec::StageRange range, int64_t tokens) {
  std::fprintf(stderr, "synapse run: rank %d, layers %u-%u: %s\n", rank, range.first_layer, range.end_layer - 1,
               session.residency() ? "weights page within the memory budget" : "every weight resident");
  print_memory_stats(session, tokens);
}

// mpirun -np R synapse-mpi run: this rank's stage of the pipeline; rank 0
// prints as a single-process run does, the others print nothing. With
// --trace-regions, each rank writes its own trace (rank_trace_path).
int run_pipelined(const RunFlags& f, dist::Transport& transport, const Model& model, const exec::SessionOptions& options,
                  std::span<const int32_t> prompt, const Tokenizer* tokenizer) {
  if (f.speculative() || !f.dump_logits.empty() || f.plan)
    throw Error(ErrorKind::Usage, "a pipelined run takes none of -md, --lookup-ngram, --dump-logits, --plan (yet)");
  dist::PipelineOptions pipeline = pipeline_options(f.pipeline, model, transport.size());
  pipeline.sequences = f.parallel;
  const int rank = transport.rank();
  std::unique_ptr<exec::RegionTraceWriter> trace;
  if (!f.trace_regions.empty()) {
    trace = std::make_unique<exec::RegionTraceWriter>(exec::rank_trace_path(f.trace_regions, rank), model, "s1", rank);
    pipeline.on_region = [&trace](const exec::RegionEvent& e, std::span<const exec::TensorRef>) { trace->write(e); };
    pipeline.on_hop = [&trace](const exec::HopEvent& hop) { trace->write(hop); };
  }
  const bool first = rank == 0;
  TokenPrinter printer(print_options(f), tokenizer);
  if (first && f.parallel == 1) printer.prompt(prompt);
  RunTimer timer;
  const GenerationOptions gen = generation_options(f, model, printer, timer);
  dist::PipelineRank stage(transport, model, options, pipeline);
  warm_up_weights(model, stage.session());
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::vector<int32_t>> all = stage.generate(sampling_params(f.sampling, f.ctx), prompt, gen);
  if (trace) trace->close();
  // Per token: the prompt's and each sequence's (a later rank does not
  // see how many ended early).
  report_rank_memory(stage.session(), rank, pipeline.ranges[static_cast<size_t>(rank)],
                     static_cast<int64_t>(prompt.size()) + int64_t{f.parallel} * std::max(f.n_predict, 0));
  if (!first) return kExitOk;
  if (f.parallel > 1) {
    print_continuations(f, all, prompt.size(), seconds_since(start), tokenizer);
  } else {
    printer.finish(all[0]);
    std::fflush(stdout);
    timer.print(prompt.size(), all[0].size());
  }
  report_pipeline("run", pipeline);
  return kExitOk;
}

// --parallel P: P continuations in batched steps.
void run_parallel(const RunFlags& f, exec::Session& session, std::span<const int32_t> prompt,
                  const GenerationOptions& gen, const Tokenizer* tokenizer) {
  const auto start = std::chrono::steady_clock::now();
  const std::vector<std::vector<int32_t>> all =
      generate_parallel(session, sampling_params(f.sampling, f.ctx), prompt, f.parallel, gen);
  const size_t generated = print_continuations(f, all, prompt.size(), seconds_since(start), tokenizer);
  print_memory_stats(session, static_cast<int64_t>(prompt.size() + generated));
  report_numerical_mode(session);
}

// The prompt text: -p's, or the file -f names less one final newline (as
// llama.cpp reads it: an editor ends a file with one).
std::string prompt_text(const RunFlags& f) {
  if (f.prompt_file.empty()) return f.prompt;
  if (!f.prompt.empty()) throw Error(ErrorKind::Usage, "give one of -p TEXT or -f FILE, not both");
  std::string text = eval::read_text_file(f.prompt_file);
  if (text.ends_with('\n')) text.pop_back();
  return text;
}

int run(const RunFlags& f) {
  const std::string text = prompt_text(f);
  if (!f.tokens.empty() && !text.empty())
    throw Error(ErrorKind::Usage, "give one of --tokens \"ID ...\" or a text prompt (-p, -f), not both");
  if (f.parallel > 1 && (f.speculative() || !f.dump_logits.empty()))
    throw Error(ErrorKind::Usage, "--parallel takes neither a drafter nor --dump-logits");
  std::vector<int32_t> prompt;
  if (!f.tokens.empty()) prompt = parse_ids(f.tokens);

  const std::string path = model_file_path(f.model);
  const std::unique_ptr<Tokenizer> tokenizer = tokenizer_for(path, f.tokenizer, !text.empty());
  if (!text.empty()) {
    if (!tokenizer) {
      // Neither GGUF nor a Hugging Face folder: a file that is no model
      // either (random bytes) says so before the tokenizer is missed.
      (void)load_model(path);
      throw Error(ErrorKind::Unsupported,
                  "a text prompt (-p, -f) needs a tokenizer, and this model file has none we read; use --tokens");
    }
    // As llama.cpp's CLI does: BOS per the vocabulary, special tokens matched.
    prompt = tokenizer->encode(text, true, true);
  }
  LoadOptions load;
  load.max_ctx = static_cast<uint32_t>(f.ctx);
  // A step never takes more tokens than the prompt, or than a speculative
  // verifier pass (the last token and draft-max drafts): a short prompt does
  // not plan (and charge to a budget) the buffers of a full --ubatch-size step.
  int64_t step = std::clamp<int64_t>(static_cast<int64_t>(prompt.size()), 1, f.ubatch);
  if (f.speculative()) step = std::max<int64_t>(step, f.draft_max + 1);
  step = std::max<int64_t>(step, f.parallel);  // a batched step holds a token of each
  load.chunk = static_cast<uint32_t>(step);
  const Model model = load_model_quantized(path, f.quantize, f.tokenizer, load);
  if (prompt.empty()) {  // no prompt: generate from BOS, as llama2.c does
    if (!model.info.bos_token)
      throw Error(ErrorKind::Usage, "the model has no BOS token: give a prompt with --tokens");
    prompt.push_back(*model.info.bos_token);
  }

  exec::SessionOptions options = session_options(f.kernels);
  apply_memory_flags(f.memory, model, options);
  apply_drop_layers(f.drop_layers, options);
  // The KV a run can reach: the prompt and the tokens it may generate.
  if (f.n_predict >= 0) {
    options.memory.kv_positions = static_cast<int64_t>(prompt.size()) + f.n_predict;
    // Each further --parallel continuation shares the prompt's pages but the
    // one the prompt ends in, which it copies.
    options.memory.kv_positions += static_cast<int64_t>(f.parallel - 1) * (f.n_predict + options.kv.page_rows);
  }
  options.all_logits = !f.dump_logits.empty();
  if (f.speculative()) options.logits_rows = f.draft_max + 1;
  if (f.parallel > 1) options.logits_rows = f.parallel;
  if (dist::Transport* transport = pipeline_transport(f.pipeline))
    return run_pipelined(f, *transport, model, options, prompt, tokenizer.get());
  exec::Session session(model, options);
  if (f.plan) {
    std::fputs(session.memory_plan().c_str(), stdout);
    return kExitOk;
  }
  warm_up_weights(model, session);
  SamplingParams sampling = sampling_params(f.sampling, f.ctx);
  Sampler sampler(sampling, static_cast<int32_t>(model.info.n_vocab));

  std::unique_ptr<exec::RegionTraceWriter> trace;
  if (!f.trace_regions.empty()) {
    trace = std::make_unique<exec::RegionTraceWriter>(f.trace_regions, model);
    session.scheduler().set_listener(
        [&trace](const exec::RegionEvent& e, std::span<const exec::TensorRef>) { trace->write(e); });
  }
  std::unique_ptr<LogitsDump> dump;
  if (!f.dump_logits.empty()) dump = std::make_unique<LogitsDump>(f.dump_logits);

  TokenPrinter printer(print_options(f), tokenizer.get());
  printer.prompt(prompt);
  RunTimer timer;
  GenerationOptions gen = generation_options(f, model, printer, timer);
  if (dump) {
    gen.keep_prompt_logits = true;
    gen.on_logits = [&dump](std::span<const float> row) { dump->write(row); };
  }
  if (f.parallel > 1) {
    run_parallel(f, session, prompt, gen, tokenizer.get());
    if (trace) trace->close();
    return kExitOk;
  }
  std::unique_ptr<Model> draft_model;
  std::unique_ptr<Drafter> drafter;
  if (f.speculative()) drafter = make_drafter(f, model, tokenizer.get(), draft_model, session_options(f.kernels));
  SpeculativeStats stats;
  const std::vector<int32_t> ids =
      drafter ? generate_speculative(session, sampler, prompt, gen, *drafter, {f.draft_max, f.draft_min}, stats)
              : generate(session, sampler, prompt, gen);
  printer.finish(ids);
  if (dump) dump->close();
  if (trace && drafter)
    trace->write(exec::SpeculationTotals{stats.drafted, stats.accepted, stats.target_passes,
                                         static_cast<int64_t>(ids.size()), timer.decode_ns()});
  if (trace) trace->close();
  std::fflush(stdout);  // the text before the timings when both go to one place
  timer.print(prompt.size(), ids.size());
  if (drafter) print_speculative_stats(stats, ids.size());
  print_memory_stats(session, static_cast<int64_t>(prompt.size() + ids.size()));
  report_numerical_mode(session);
  return kExitOk;
}

const RegisterDashAlias model_draft_alias{"-md", "--model-draft"};
const RegisterDashAlias parallel_alias{"-np", "--parallel"};

Register run_reg{{"run", "Generate tokens from a prompt through the region scheduler",
              [](CLI::App& app) -> std::function<int()> {
                auto f = std::make_shared<RunFlags>();
                app.add_option("-m,--model", f->model,
                               "model file (GGUF or llama2.c checkpoint), a folder holding one GGUF, or a Hugging "
                               "Face model folder (config.json, safetensors)")
                    ->required()
                    ->check(CLI::ExistingPath);
                app.add_option("--tokenizer", f->tokenizer,
                               "tokenizer file (tokenizer.json, tokenizer.model or a GGUF) instead of the model's own")
                    ->check(CLI::ExistingFile);
                add_pipeline_flags(app, f->pipeline);
                app.add_option("--quantize", f->quantize,
                               "TYPE (q8_0, q4_k_m, ...): quantize the model as it loads, as `synapse convert "
                               "--type TYPE` (a Hugging Face folder) or `synapse quantize` (a GGUF) would");
                app.add_option("--tokens", f->tokens, "prompt as token ids, e.g. \"1 2 3\" (default: BOS alone)");
                app.add_option("-p,--prompt", f->prompt, "prompt text (needs the model's tokenizer)");
                app.add_option("-f,--file", f->prompt_file, "a file holding the prompt text, instead of -p")
                    ->check(CLI::ExistingFile);
                app.add_option("-n,--n-predict", f->n_predict,
                               "tokens to generate (-1: until EOS or the context is full)");
                add_sampling_flags(app, f->sampling);
                add_kernel_flags(app, f->kernels);
                add_memory_flags(app, f->memory);
                add_drop_layers_flag(app, f->drop_layers);
                app.add_flag("--plan", f->plan, "print what the memory budget keeps resident and what it pages, then exit");
                app.add_option("-c,--ctx-size", f->ctx, "context size (0: the model's, at most 4096)")
                    ->check(CLI::Range(0, 1 << 24));
                app.add_option("--ubatch-size", f->ubatch, "most prompt tokens per step")
                    ->check(CLI::Range(1, 1 << 16));
                app.add_flag("--ids", f->print_ids, "print the generated ids on one final line");
                app.add_flag("--raw", f->raw,
                             "print the tokens' exact bytes (default: invalid UTF-8 becomes U+FFFD)");
                app.add_flag("--ignore-eos", f->ignore_eos, "do not stop at the end-of-sequence token");
                app.add_flag("--no-display-prompt", f->no_display_prompt, "print the generated text without the prompt");
                app.add_option("--dump-logits", f->dump_logits, "write float32 logits rows per position");
                app.add_option("--trace-regions", f->trace_regions, "write the region trace (JSONL)");
                app.add_option("--model-draft", f->model_draft,
                               "(-md) draft model for speculative decoding (same vocabulary)")
                    ->check(CLI::ExistingPath);
                app.add_option("--draft-max", f->draft_max, "tokens drafted per target pass")->check(CLI::Range(1, 256));
                app.add_option("--draft-min", f->draft_min, "fewer drafted tokens are not verified")
                    ->check(CLI::Range(0, 256));
                app.add_option("--lookup-ngram", f->lookup_ngram,
                               "draft from the longest earlier match of the last N tokens (prompt lookup)")
                    ->check(CLI::Range(1, 64));
                app.add_option("--parallel", f->parallel,
                               "(-np) continuations of the prompt decoded together in batched steps")
                    ->check(CLI::Range(1, 256));
                app.footer(
                    "\nExamples:\n"
                    "  synapse run -m model.gguf -p \"Once upon a time\" -n 64\n"
                    "  synapse run -m ~/models/qwen2.5-0.5b/ -p \"Hello\" --temp 0 --mem-budget 60%\n"
                    "  synapse run -m model.gguf -n 16 --trace-regions trace.jsonl && synapse trace trace.jsonl\n"
                    "  synapse run -m big.gguf -md small.gguf --draft-max 8 -p \"Hello\"\n"
                    "  synapse run -m model.gguf --lookup-ngram 3 -p \"a text that repeats itself\" --temp 0\n"
                    "  synapse run -m model.gguf -np 8 -p \"Once upon a time\" -n 32\n");
                return [f] { return run(*f); };
              }}};

}  // namespace
}  // namespace synapse::cli

// synapse eval TASK -m FILE [--length N] [--samples K] [--depth F] ...:
// synthetic long-context tasks (eval/long_context_tasks.h): each sample's
// prompt is evaluated and answered greedily, and the answer scored; prints
// one line per sample and the accuracy.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>

#include "chat/chat_template.h"
#include "cli/chat_template_flag.h"
#include "cli/command.h"
#include "cli/kernel_flags.h"
#include "cli/memory_flags.h"
#include "cli/model_path.h"
#include "eval/long_context_tasks.h"
#include "exec/session.h"
#include "generate/chat_session.h"
#include "generate/generation.h"
#include "model/model.h"
#include "synapse/error.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/utf8_stream.h"

namespace synapse::cli {
namespace {

struct EvalFlags {
  std::string task_name;
  std::string model;
  eval::LongContextOptions task;
  int samples = 5;
  int32_t n_predict = 0;  // 0: the task's own
  bool chat = false;
  std::string chat_template;
  std::string output = "text";
  KernelFlags kernels;
  MemoryFlags memory;
};

// Enough tokens for the answer: a number, or every variable's name.
int32_t answer_tokens(const EvalFlags& f) {
  if (f.n_predict > 0) return f.n_predict;
  return f.task.task == eval::LongContextTask::VariableTracking ? 8 * std::max(1, f.task.hops) + 8 : 16;
}

// The sample as the model reads it: completion style (context, question,
// the start of the answer), or with --chat the context and question as the
// user's message and the start of the answer opening the reply.
std::vector<int32_t> prompt_tokens(const eval::LongContextSample& s, const Tokenizer& tokenizer,
                                   const chat::ChatTemplate* chat_template) {
  if (!chat_template) return tokenizer.encode(s.context + "\n\n" + s.question + " " + s.answer_prefix, true, false);
  const chat::ChatMessage user{"user", s.context + "\n\n" + s.question};
  std::vector<int32_t> tokens = render_chat_prompt(*chat_template, tokenizer, std::span(&user, 1));
  const std::vector<int32_t> answer = tokenizer.encode(s.answer_prefix, false, false);
  tokens.insert(tokens.end(), answer.begin(), answer.end());
  return tokens;
}

int run_eval(const EvalFlags& f) {
  const std::optional<eval::LongContextTask> task = eval::long_context_task(f.task_name);
  if (!task) throw Error(ErrorKind::Usage, "unknown task '" + f.task_name + "' (tasks: " + eval::task_names() + ")");
  eval::LongContextOptions options = f.task;
  options.task = *task;
  const std::string path = model_file_path(f.model);
  const std::unique_ptr<Tokenizer> tokenizer = load_tokenizer(path);
  std::optional<chat::ChatTemplate> chat_template;
  if (f.chat) chat_template = chat::ChatTemplate::parse(chat_template_source(f.chat_template, path, "eval"));
  const auto count_tokens = [&](std::string_view text) {
    return static_cast<int64_t>(tokenizer->encode(text, false, false).size());
  };

  // Every prompt first, so the context is sized for the longest.
  std::vector<eval::LongContextSample> samples;
  std::vector<std::vector<int32_t>> prompts;
  size_t longest = 0;
  for (int i = 0; i < f.samples; ++i) {
    samples.push_back(eval::make_sample(options, i, count_tokens));
    prompts.push_back(prompt_tokens(samples.back(), *tokenizer, chat_template ? &*chat_template : nullptr));
    longest = std::max(longest, prompts.back().size());
  }
  const int32_t n_predict = answer_tokens(f);
  const Model model = load_model(path, {.max_ctx = static_cast<uint32_t>(longest + static_cast<size_t>(n_predict))});
  exec::SessionOptions session_opts = session_options(f.kernels);
  apply_memory_flags(f.memory, model, session_opts);
  exec::Session session(model, session_opts);
  SamplingParams greedy;
  greedy.temp = 0;
  Sampler sampler(greedy, static_cast<int32_t>(model.info.n_vocab));
  GenerationOptions generation;
  generation.n_predict = n_predict;
  generation.stop_tokens = end_of_turn_ids(tokenizer->vocabulary());

  double total = 0;
  nlohmann::json results = nlohmann::json::array();
  for (size_t i = 0; i < samples.size(); ++i) {
    session.reset();
    const auto start = std::chrono::steady_clock::now();
    const std::vector<int32_t> ids = generate(session, sampler, prompts[i], generation);
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const std::string answer = valid_utf8(tokenizer->decode(ids));
    const double score = eval::score_answer(answer, samples[i].expected);
    total += score;
    if (f.output == "json") {
      results.push_back({{"sample", i}, {"depth", samples[i].depth}, {"prompt_tokens", prompts[i].size()},
                         {"expected", samples[i].expected}, {"answer", answer}, {"score", score},
                         {"seconds", seconds}});
      continue;
    }
    std::string expected;
    for (const std::string& e : samples[i].expected) expected += (expected.empty() ? "" : " ") + e;
    std::string shown = answer;
    std::replace(shown.begin(), shown.end(), '\n', ' ');
    std::printf("%s sample %zu/%zu: depth %.2f, %zu tokens, %.1f s: expected %s, answered \"%s\" -> %.2f\n",
                f.task_name.c_str(), i + 1, samples.size(), samples[i].depth, prompts[i].size(), seconds,
                expected.c_str(), shown.c_str(), score);
    std::fflush(stdout);
  }
  const double accuracy = total / static_cast<double>(samples.size());
  if (f.output == "json") {
    const nlohmann::json out = {{"task", f.task_name}, {"length", options.length}, {"accuracy", accuracy},
                                {"samples", results}};
    std::printf("%s\n", out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace).c_str());
  } else {
    std::printf("%s: accuracy %.1f%% over %zu samples of about %lld tokens\n", f.task_name.c_str(), 100 * accuracy,
                samples.size(), static_cast<long long>(options.length));
  }
  return kExitOk;
}

Register eval_reg{{"eval", "Synthetic long-context tasks (pass key, needles, variable tracking): accuracy",
              [](CLI::App& app) -> std::function<int()> {
                auto f = std::make_shared<EvalFlags>();
                app.add_option("task", f->task_name, std::string("the task: ") + eval::task_names())->required();
                app.add_option("-m,--model", f->model, "GGUF model file with a vocabulary, or a folder holding one")
                    ->required()
                    ->check(CLI::ExistingPath);
                app.add_option("--length", f->task.length, "tokens per prompt, about")
                    ->capture_default_str()
                    ->check(CLI::Range(int64_t{64}, int64_t{1} << 24));
                app.add_option("--samples", f->samples, "prompts to ask")->capture_default_str()->check(CLI::Range(1, 100000));
                app.add_option("--depth", f->task.depth, "where the fact sits, 0 (start) to 1 (end); default: random")
                    ->check(CLI::Range(0.0, 1.0));
                app.add_option("--distractors", f->task.distractors, "niah-multikey: needles with other keys")
                    ->capture_default_str()
                    ->check(CLI::Range(0, eval::kMaxDistractors));
                app.add_option("--hops", f->task.hops, "vt: variables in the chain")
                    ->capture_default_str()
                    ->check(CLI::Range(1, 100));
                app.add_option("--seed", f->task.seed, "seed of the samples")->capture_default_str();
                app.add_option("-n,--n-predict", f->n_predict, "most answer tokens (default: the task's)")
                    ->check(CLI::Range(1, 4096));
                app.add_flag("--chat", f->chat, "ask through the chat template (the user's message; the reply opens with the answer's start)");
                app.add_option("--chat-template", f->chat_template, "with --chat: template name or file instead of the model's");
                app.add_option("-o,--output", f->output, "text or json")->check(CLI::IsMember({"text", "json"}));
                add_kernel_flags(app, f->kernels);
                add_memory_flags(app, f->memory);
                app.footer(
                    "\nExamples:\n"
                    "  synapse eval passkey -m model.gguf --length 8192 --samples 10\n"
                    "  synapse eval niah-multikey -m model.gguf --length 16384 --distractors 3 --chat\n"
                    "  synapse eval vt -m model.gguf --length 4096 --hops 4 -o json\n");
                return [f] { return run_eval(*f); };
              }}};

}  // namespace
}  // namespace synapse::cli

// synapse chat: an interactive multi-turn chat on stdin/stdout. Each line
// read is a user message; the reply streams as it is generated. The KV state
// is kept across turns (see generate/chat_session.h). /exit or end of input
// quits, /reset starts the conversation over.
#include <unistd.h>

#include <cstdio>
#include <iostream>
#include <memory>
#include <string>

#include "chat/chat_template.h"
#include "cli/chat_template_flag.h"
#include "cli/command.h"
#include "cli/kernel_flags.h"
#include "cli/memory_flags.h"
#include "cli/model_path.h"
#include "cli/sampling_flags.h"
#include "cli/weight_warmup.h"
#include "exec/session.h"
#include "generate/chat_session.h"
#include "model/model.h"
#include "synapse/error.h"
#include "tokenizer/tokenizer.h"

namespace synapse::cli {
namespace {

struct ChatFlags {
  std::string model;
  std::string chat_template;
  ChatOptions chat;
  SamplingFlags sampling;
  KernelFlags kernels;
  MemoryFlags memory;
  int32_t ctx = 0;
  bool stats = false;
};

std::string trim(const std::string& line) {
  const size_t first = line.find_first_not_of(" \t\r");
  if (first == std::string::npos) return {};
  return line.substr(first, line.find_last_not_of(" \t\r") - first + 1);
}

int chat_loop(const ChatFlags& f) {
  const std::string path = model_file_path(f.model);
  const std::unique_ptr<Tokenizer> tokenizer = load_tokenizer(path);
  chat::ChatTemplate chat_template = chat::ChatTemplate::parse(chat_template_source(f.chat_template, path, "chat"));
  LoadOptions load;
  load.max_ctx = static_cast<uint32_t>(f.ctx);
  const Model model = load_model(path, load);
  exec::SessionOptions options = session_options(f.kernels);
  apply_memory_flags(f.memory, model, options);
  exec::Session session(model, options);
  warm_up_weights(model, session);
  SamplingParams sampling = sampling_params(f.sampling, f.ctx);
  Sampler sampler(sampling, static_cast<int32_t>(model.info.n_vocab));
  ChatSession chat(session, *tokenizer, sampler, std::move(chat_template), f.chat);

  const bool interactive = ::isatty(STDIN_FILENO) == 1;
  if (interactive) std::fprintf(stderr, "synapse chat: /exit to quit, /reset to start over\n");
  std::string line;
  for (;;) {
    if (interactive) {
      std::fputs("> ", stdout);
      std::fflush(stdout);
    }
    if (!std::getline(std::cin, line)) break;  // end of input
    const std::string message = trim(line);
    if (message.empty()) continue;
    if (message == "/exit") break;
    if (message == "/reset") {
      chat.reset();
      std::fprintf(stderr, "synapse chat: conversation reset\n");
      continue;
    }
    try {
      chat.reply(message, [](std::string_view text) {
        std::fwrite(text.data(), 1, text.size(), stdout);
        std::fflush(stdout);
      });
    } catch (const Error& e) {  // e.g. the context is full: the chat goes on
      std::fprintf(stdout, "\n");
      std::fprintf(stderr, "synapse chat: error: %s\n", e.what());
      continue;
    }
    std::fputs("\n", stdout);
    std::fflush(stdout);
    if (f.stats) {
      const ChatTurnStats& t = chat.last_turn();
      std::fprintf(stderr, "synapse chat: prompt %lld tokens, %lld reused, %lld evaluated, %lld generated\n",
                   static_cast<long long>(t.prompt_tokens), static_cast<long long>(t.reused_tokens),
                   static_cast<long long>(t.prompt_tokens - t.reused_tokens),
                   static_cast<long long>(t.generated_tokens));
    }
  }
  return kExitOk;
}

Register chat_reg{{"chat", "Interactive multi-turn chat on stdin/stdout (/exit quits, /reset starts over)",
              [](CLI::App& app) -> std::function<int()> {
                auto f = std::make_shared<ChatFlags>();
                app.add_option("-m,--model", f->model, "GGUF model file with a vocabulary, or a folder holding one")
                    ->required()
                    ->check(CLI::ExistingPath);
                app.add_option("--system", f->chat.system, "system message");
                app.add_option("--chat-template", f->chat_template,
                               "template name (chatml, llama3, qwen2.5, ...) or file, instead of the model's "
                               "(default: the model's, else chatml)");
                app.add_option("-n,--n-predict", f->chat.n_predict,
                               "most tokens per reply (-1: until end of turn or the context is full)");
                add_sampling_flags(app, f->sampling);
                add_kernel_flags(app, f->kernels);
                add_memory_flags(app, f->memory);
                app.add_option("-c,--ctx-size", f->ctx, "context size (0: the model's, at most 4096)")
                    ->check(CLI::Range(0, 1 << 24));
                app.add_flag("--stats", f->stats, "after each reply, print on stderr how many tokens were evaluated");
                app.add_flag("--raw", f->chat.raw_bytes,
                             "print the tokens' exact bytes (default: invalid UTF-8 becomes U+FFFD)");
                app.footer(
                    "\nExamples:\n"
                    "  synapse chat -m model.gguf --system \"You are terse.\"\n"
                    "  synapse chat -m model.gguf --chat-template llama3 -n 256\n"
                    "  printf 'Hello\\n/exit\\n' | synapse chat -m model.gguf --temp 0 --stats\n");
                return [f] { return chat_loop(*f); };
              }}};

}  // namespace
}  // namespace synapse::cli

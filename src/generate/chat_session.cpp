#include "generate/chat_session.h"

#include <algorithm>
#include <array>

#include "generate/generation.h"
#include "synapse/error.h"
#include "tokenizer/utf8_stream.h"

namespace synapse {

namespace {

// Control tokens that close a turn in the chat formats we know (llama.cpp
// marks the same texts as end-of-generation when the file names no EOT).
constexpr std::array<std::string_view, 9> kEndOfTurnTexts = {
    "<|eot_id|>", "<|eom_id|>", "<|im_end|>",   "<|end|>",        "<end_of_turn>",
    "<|endoftext|>", "<EOT>",   "<|end_of_text|>", "<end_of_utterance>"};

std::string token_text(const Vocabulary& vocab, const std::optional<int32_t>& id) {
  return id ? vocab.tokens[static_cast<size_t>(*id)] : std::string();
}

}  // namespace

std::vector<int32_t> end_of_turn_ids(const Vocabulary& vocab) {
  std::vector<int32_t> ids;
  const auto add = [&ids](int32_t id) {
    if (std::find(ids.begin(), ids.end(), id) == ids.end()) ids.push_back(id);
  };
  if (vocab.eos_id) add(*vocab.eos_id);
  if (vocab.eot_id) add(*vocab.eot_id);
  for (int32_t id : vocab.special_ids()) {
    if (vocab.type(id) != TokenType::Control) continue;
    const std::string& text = vocab.tokens[static_cast<size_t>(id)];
    if (std::find(kEndOfTurnTexts.begin(), kEndOfTurnTexts.end(), text) != kEndOfTurnTexts.end()) add(id);
  }
  return ids;
}

ChatSession::ChatSession(exec::Session& session, const Tokenizer& tokenizer, Sampler& sampler,
                         chat::ChatTemplate chat_template, ChatOptions options)
    : session_(session),
      tokenizer_(tokenizer),
      sampler_(sampler),
      template_(std::move(chat_template)),
      options_(std::move(options)),
      stop_ids_(end_of_turn_ids(tokenizer.vocabulary())) {
  reset();
}

void ChatSession::reset() {
  messages_.clear();
  if (!options_.system.empty()) messages_.push_back({"system", options_.system});
  evaluated_.clear();
  session_.reset();
  sampler_.reset();
  last_turn_ = {};
}

std::vector<int32_t> render_chat_prompt(const chat::ChatTemplate& chat_template, const Tokenizer& tokenizer,
                                        std::span<const chat::ChatMessage> messages, const std::string& fixed_date) {
  const Vocabulary& vocab = tokenizer.vocabulary();
  chat::RenderOptions render;
  render.add_generation_prompt = true;
  render.bos_token = token_text(vocab, vocab.bos_id);
  render.eos_token = token_text(vocab, vocab.eos_id);
  render.fixed_date = fixed_date;
  const std::string text = chat_template.render(messages, render);
  // The template writes the special tokens as text; most write BOS too, so
  // it is added only where the vocabulary wants it and the text lacks it.
  std::vector<int32_t> ids = tokenizer.encode(text, /*add_special=*/false, /*parse_special=*/true);
  if (vocab.add_bos && vocab.bos_id && (ids.empty() || ids.front() != *vocab.bos_id))
    ids.insert(ids.begin(), *vocab.bos_id);
  if (ids.empty()) throw Error(ErrorKind::InvalidValue, "the chat template rendered an empty prompt");
  return ids;
}

std::string ChatSession::reply(std::string_view user_text, const std::function<void(std::string_view)>& on_text) {
  messages_.push_back({"user", std::string(user_text)});
  try {
    const std::vector<int32_t> prompt = render_chat_prompt(template_, tokenizer_, messages_, options_.fixed_date);
    const auto diverge = std::mismatch(prompt.begin(), prompt.end(), evaluated_.begin(), evaluated_.end()).first;
    // At least the last prompt token is evaluated: its logits give the reply's first token.
    const size_t reused = std::min(static_cast<size_t>(diverge - prompt.begin()), prompt.size() - 1);
    session_.rewind(static_cast<int64_t>(reused));
    evaluated_.resize(reused);

    Utf8Stream stream(options_.raw_bytes ? Utf8Stream::Invalid::Keep : Utf8Stream::Invalid::Replace);
    const auto emit = [&on_text](const std::string& text) {
      if (on_text && !text.empty()) on_text(text);
    };
    GenerationOptions gen;
    gen.n_predict = options_.n_predict;
    gen.stop_tokens = stop_ids_;
    gen.on_token = [&](int32_t id) {
      if (std::find(stop_ids_.begin(), stop_ids_.end(), id) == stop_ids_.end())
        emit(stream.push(tokenizer_.token_to_piece(id)));
    };
    const std::span<const int32_t> suffix = std::span(prompt).subspan(reused);
    std::vector<int32_t> generated = generate(session_, sampler_, suffix, gen);
    emit(stream.flush());

    // generate() evaluated the suffix and every generated token but the last.
    evaluated_.insert(evaluated_.end(), suffix.begin(), suffix.end());
    if (!generated.empty()) evaluated_.insert(evaluated_.end(), generated.begin(), generated.end() - 1);
    last_turn_ = {static_cast<int64_t>(prompt.size()), static_cast<int64_t>(reused),
                  static_cast<int64_t>(generated.size())};
    if (!generated.empty() &&
        std::find(stop_ids_.begin(), stop_ids_.end(), generated.back()) != stop_ids_.end())
      generated.pop_back();
    std::string text = tokenizer_.decode(generated);
    messages_.push_back({"assistant", text});
    return text;
  } catch (...) {
    // Keep the KV state and the conversation in step: drop the message and
    // whatever this turn evaluated.
    messages_.pop_back();
    if (session_.position() > static_cast<int64_t>(evaluated_.size()))
      session_.rewind(static_cast<int64_t>(evaluated_.size()));
    throw;
  }
}

}  // namespace synapse

// A multi-turn chat over one generation session. Each turn renders the whole
// conversation with the model's chat template and tokenizes it; the tokens
// that agree with what the KV state already holds are kept, and only the
// rest is evaluated (no re-prefill of earlier turns). Where the new prompt
// diverges from the evaluated tokens (a reply re-tokenizes differently than
// it was generated), the session is rewound to the common prefix first.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "chat/chat_template.h"
#include "exec/session.h"
#include "generate/sampler.h"
#include "tokenizer/tokenizer.h"

namespace synapse {

struct ChatOptions {
  std::string system;       // the system message; empty: none
  int32_t n_predict = -1;   // tokens per reply; < 0: until end of turn or the context is full
  std::string fixed_date;   // RenderOptions::fixed_date, for deterministic tests
  bool raw_bytes = false;   // on_text gets the tokens' exact bytes, not valid UTF-8 (Utf8Stream)
};

// What one turn did to the KV state.
struct ChatTurnStats {
  int64_t prompt_tokens = 0;  // tokens of the rendered conversation
  int64_t reused_tokens = 0;  // of them, already in the KV state
  int64_t generated_tokens = 0;
};

// The ids that end a reply: EOS, EOT and the control tokens chat templates
// close a turn with (<|im_end|>, <|eot_id|>, ...), as llama.cpp collects them.
std::vector<int32_t> end_of_turn_ids(const Vocabulary& vocab);

// The prompt of a conversation for the assistant's next reply: the messages
// rendered with the template (generation prompt added) and tokenized, BOS
// added where the vocabulary wants it and the text lacks it. Throws
// synapse::Error for a template error or an empty prompt.
std::vector<int32_t> render_chat_prompt(const chat::ChatTemplate& chat_template, const Tokenizer& tokenizer,
                                        std::span<const chat::ChatMessage> messages,
                                        const std::string& fixed_date = {});

class ChatSession {
 public:
  // session, tokenizer and sampler must outlive the chat.
  ChatSession(exec::Session& session, const Tokenizer& tokenizer, Sampler& sampler,
              chat::ChatTemplate chat_template, ChatOptions options);

  // Adds the user's message, generates the assistant's reply and returns it.
  // `on_text` receives the reply as it is generated, never splitting a UTF-8
  // code point, invalid bytes replaced unless options.raw_bytes. On an error (e.g. the context is full) the conversation is
  // as it was before the call.
  std::string reply(std::string_view user_text, const std::function<void(std::string_view)>& on_text = {});
  // Forgets the conversation (the system message stays) and the KV state.
  void reset();

  const ChatTurnStats& last_turn() const { return last_turn_; }
  const std::vector<chat::ChatMessage>& messages() const { return messages_; }

 private:
  exec::Session& session_;
  const Tokenizer& tokenizer_;
  Sampler& sampler_;
  chat::ChatTemplate template_;
  ChatOptions options_;
  std::vector<int32_t> stop_ids_;
  std::vector<chat::ChatMessage> messages_;
  std::vector<int32_t> evaluated_;  // the tokens in the KV state, in order
  ChatTurnStats last_turn_;
};

}  // namespace synapse

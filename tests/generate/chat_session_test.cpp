// ChatSession: later turns evaluate only what is new, and reusing the KV
// state gives the reply a fresh evaluation of the whole conversation gives.
#include "generate/chat_session.h"

#include <gtest/gtest.h>

#include <memory>

#include "generate/generation.h"
#include "model/model.h"
#include "support/greedy_params.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"
#include "synapse/error.h"

namespace synapse {
namespace {

constexpr const char* kChatMl =
    "{% for message in messages %}{{ '<|im_start|>' + message['role'] + '\\n' + message['content'] + "
    "'<|im_end|>' + '\\n' }}{% endfor %}{% if add_generation_prompt %}{{ '<|im_start|>assistant\\n' }}{% endif %}";

constexpr int32_t kReplyTokens = 6;

// The tiny qwen2 model: its vocabulary has ChatML's special tokens.
class ChatSessionTest : public testing::Test {
 protected:
  ChatSessionTest()
      : path_(test::write_tiny_model(dir_, "qwen2")),
        model_(load_model(path_)),
        tokenizer_(load_tokenizer(path_)),
        session_(model_),
        sampler_(test::greedy(), static_cast<int32_t>(model_.info.n_vocab)) {}

  ChatSession make_chat() {
    ChatOptions options;
    options.system = "You are terse.";
    options.n_predict = kReplyTokens;
    return ChatSession(session_, *tokenizer_, sampler_, chat::ChatTemplate::parse(kChatMl), options);
  }

  // What a fresh session generates for the conversation `messages`.
  std::string fresh_reply(const std::vector<chat::ChatMessage>& messages) {
    const std::string prompt = chat::ChatTemplate::parse(kChatMl).render(messages, chat::RenderOptions{});
    const std::vector<int32_t> ids = tokenizer_->encode(prompt, false, true);
    exec::Session fresh(model_);
    Sampler sampler(test::greedy(), static_cast<int32_t>(model_.info.n_vocab));
    GenerationOptions gen;
    gen.n_predict = kReplyTokens;
    gen.stop_tokens = end_of_turn_ids(tokenizer_->vocabulary());
    std::vector<int32_t> reply = generate(fresh, sampler, ids, gen);
    if (!reply.empty() && reply.back() == *tokenizer_->vocabulary().find("<|im_end|>")) reply.pop_back();
    return tokenizer_->decode(reply);
  }

  test::TempDir dir_;
  std::string path_;
  Model model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  exec::Session session_;
  Sampler sampler_;
};

TEST_F(ChatSessionTest, SecondTurnEvaluatesOnlyTheNewTokens) {
  ChatSession chat = make_chat();
  const std::string first = chat.reply("Hello there");
  const ChatTurnStats turn1 = chat.last_turn();
  EXPECT_EQ(turn1.reused_tokens, 0);
  EXPECT_GT(turn1.generated_tokens, 0);

  std::string streamed;
  const std::string second = chat.reply("Tell me more", [&](std::string_view text) { streamed += text; });
  const ChatTurnStats turn2 = chat.last_turn();
  EXPECT_EQ(streamed, second);
  // The first turn's prompt stays in the KV state; only the rest is evaluated.
  EXPECT_GE(turn2.reused_tokens, turn1.prompt_tokens);
  EXPECT_LT(turn2.prompt_tokens - turn2.reused_tokens, turn2.prompt_tokens);
  ASSERT_EQ(chat.messages().size(), 5u);  // system, user, assistant, user, assistant
  EXPECT_EQ(chat.messages()[2].content, first);

  // And the reply is the one a fresh evaluation of the conversation gives.
  std::vector<chat::ChatMessage> history(chat.messages().begin(), chat.messages().end() - 1);
  EXPECT_EQ(second, fresh_reply(history));
}

TEST_F(ChatSessionTest, ResetForgetsTheConversationAndTheKvState) {
  ChatSession chat = make_chat();
  const std::string first = chat.reply("Hello there");
  const int64_t first_prompt = chat.last_turn().prompt_tokens;
  chat.reply("Tell me more");
  chat.reset();
  ASSERT_EQ(chat.messages().size(), 1u);
  EXPECT_EQ(chat.messages()[0].role, "system");
  EXPECT_EQ(session_.position(), 0);
  EXPECT_EQ(chat.reply("Hello there"), first);
  EXPECT_EQ(chat.last_turn().reused_tokens, 0);
  EXPECT_EQ(chat.last_turn().prompt_tokens, first_prompt);
}

TEST_F(ChatSessionTest, ATurnThatDoesNotFitLeavesTheConversationAsItWas) {
  ChatSession chat = make_chat();
  chat.reply("Hello there");
  const int64_t position = session_.position();
  std::string too_long;  // two tokens per " 7": more than the context holds
  for (int64_t i = 0; i < session_.max_ctx(); ++i) too_long += " 7";
  EXPECT_THROW(chat.reply(too_long), Error);
  EXPECT_EQ(chat.messages().size(), 3u);
  EXPECT_EQ(session_.position(), position);
  chat.reply("Tell me more");
  EXPECT_GE(chat.last_turn().reused_tokens, 1);
}

TEST(ChatEndOfTurn, IncludesEosAndChatMlEnd) {
  test::TempDir dir;
  const auto tokenizer = load_tokenizer(test::write_tiny_model(dir, "qwen2"));
  const Vocabulary& vocab = tokenizer->vocabulary();
  const std::vector<int32_t> ids = end_of_turn_ids(vocab);
  EXPECT_NE(std::find(ids.begin(), ids.end(), *vocab.eos_id), ids.end());
  EXPECT_NE(std::find(ids.begin(), ids.end(), *vocab.find("<|im_end|>")), ids.end());
  EXPECT_EQ(std::find(ids.begin(), ids.end(), *vocab.find("<|im_start|>")), ids.end());
}

}  // namespace
}  // namespace synapse

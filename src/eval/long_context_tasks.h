// Synthetic long-context tasks that need no dataset and run on any model a
// user brings: a context of about `length` tokens of filler ("The grass is
// green. The sky is blue. ..." as in the pass-key paper and RULER's noise
// haystack) with facts hidden at chosen depths, then a question whose
// answer only a model that read the whole context can give.
//
//   passkey        "The pass key is 71432. Remember it." (Mohtashami & Jaggi)
//   niah           RULER's single needle: "One of the special magic numbers
//                  for KEY is: VALUE." asked by KEY
//   niah-multikey  the same among `distractors` needles with other keys
//   vt             RULER's variable tracking: VAR A = 12345, VAR B = VAR A,
//                  ... spread over the context; name every variable
//                  holding the value
//
// Each sample is a prompt (completion style: the question is followed by
// the start of its answer) and the answer strings it must contain.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace synapse::eval {

enum class LongContextTask { Passkey, Needle, NeedleMultiKey, VariableTracking };

// "passkey", "niah", "niah-multikey", "vt"; nullopt for another name.
std::optional<LongContextTask> long_context_task(std::string_view name);
const char* task_names();  // for help texts

// niah-multikey's needles each have a distinct key (an adjective and a
// noun): at most this many distractors.
inline constexpr int kMaxDistractors = 255;

struct LongContextOptions {
  LongContextTask task = LongContextTask::Passkey;
  int64_t length = 4096;   // tokens of the whole prompt, about
  double depth = -1;       // where the (first) fact sits, 0..1; < 0: a random depth per sample
  int distractors = 3;     // niah-multikey: needles with other keys, 0..kMaxDistractors
  int hops = 4;            // vt: variables in the chain
  uint32_t seed = 1;
};

struct LongContextSample {
  std::string context;   // the filler with the facts, then the instruction
  std::string question;  // asked after the context
  std::string answer_prefix;  // the start of the answer the model completes
  std::vector<std::string> expected;  // strings the answer must hold
  double depth = 0;
};

// Counts the tokens of a text (the model's tokenizer).
using TokenCounter = std::function<int64_t(std::string_view text)>;

// Sample `index` of a run: the same options and index give the same sample.
LongContextSample make_sample(const LongContextOptions& options, int index, const TokenCounter& count_tokens);

// The share of `expected` strings found in `answer`, 0..1 (RULER's
// string_match_all).
double score_answer(std::string_view answer, const std::vector<std::string>& expected);

}  // namespace synapse::eval

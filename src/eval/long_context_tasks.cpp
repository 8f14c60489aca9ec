#include "eval/long_context_tasks.h"

#include <algorithm>
#include <random>

#include "synapse/error.h"

namespace synapse::eval {
namespace {

constexpr std::string_view kFiller =
    "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again. ";

// Words for RULER-style keys ("adjective-noun") and variable names.
constexpr std::string_view kAdjectives[] = {"quiet", "brave", "shiny", "ancient", "gentle", "rapid", "golden", "hidden",
                                            "clever", "silent", "bright", "lucky", "frozen", "wild", "humble", "noble"};
constexpr std::string_view kNouns[] = {"river", "falcon", "lantern", "meadow", "harbor", "comet", "violin", "orchard",
                                       "glacier", "compass", "thunder", "pebble", "canyon", "willow", "beacon", "otter"};

struct Fact {
  double depth;  // 0..1
  std::string text;
};

std::string number(std::mt19937& rng, int digits) {
  std::uniform_int_distribution<int> first(1, 9), rest(0, 9);
  std::string n(1, static_cast<char>('0' + first(rng)));
  while (static_cast<int>(n.size()) < digits) n += static_cast<char>('0' + rest(rng));
  return n;
}

std::string key(std::mt19937& rng) {
  std::uniform_int_distribution<size_t> a(0, std::size(kAdjectives) - 1), n(0, std::size(kNouns) - 1);
  return std::string(kAdjectives[a(rng)]) + "-" + std::string(kNouns[n(rng)]);
}

// Distinct upper-case variable names of five letters.
std::vector<std::string> variable_names(std::mt19937& rng, int count) {
  std::vector<std::string> names;
  std::uniform_int_distribution<int> letter(0, 25);
  while (static_cast<int>(names.size()) < count) {
    std::string name;
    for (int i = 0; i < 5; ++i) name += static_cast<char>('A' + letter(rng));
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  return names;
}

// Filler of about `filler_tokens` tokens with the facts at their depths
// (in order of depth), each between two filler sentences.
std::string haystack(int64_t filler_tokens, std::vector<Fact> facts, const TokenCounter& count_tokens) {
  const int64_t unit = std::max<int64_t>(1, count_tokens(kFiller));
  const int64_t units = std::max<int64_t>(1, filler_tokens / unit);
  std::sort(facts.begin(), facts.end(), [](const Fact& a, const Fact& b) { return a.depth < b.depth; });
  std::string text;
  size_t next = 0;
  for (int64_t u = 0; u <= units; ++u) {
    while (next < facts.size() && facts[next].depth * static_cast<double>(units) <= static_cast<double>(u)) {
      text += facts[next++].text;
      text += ' ';
    }
    if (u < units) text += kFiller;
  }
  return text;
}

}  // namespace

std::optional<LongContextTask> long_context_task(std::string_view name) {
  if (name == "passkey") return LongContextTask::Passkey;
  if (name == "niah") return LongContextTask::Needle;
  if (name == "niah-multikey") return LongContextTask::NeedleMultiKey;
  if (name == "vt") return LongContextTask::VariableTracking;
  return std::nullopt;
}

const char* task_names() { return "passkey, niah, niah-multikey, vt"; }

LongContextSample make_sample(const LongContextOptions& o, int index, const TokenCounter& count_tokens) {
  std::mt19937 rng(o.seed * 7919u + static_cast<uint32_t>(index));
  std::uniform_real_distribution<double> any_depth(0.0, 1.0);
  const auto depth = [&] { return o.depth >= 0 ? o.depth : any_depth(rng); };
  LongContextSample s;
  s.depth = depth();
  std::vector<Fact> facts;
  std::string intro;
  switch (o.task) {
    case LongContextTask::Passkey: {
      const std::string pass = number(rng, 5);
      intro = "There is an important info hidden inside a lot of irrelevant text. Find it and memorize it. "
              "I will quiz you about the important information there.\n\n";
      facts.push_back({s.depth, "The pass key is " + pass + ". Remember it. " + pass + " is the pass key."});
      s.question = "What is the pass key?";
      s.answer_prefix = "The pass key is";
      s.expected = {pass};
      break;
    }
    case LongContextTask::Needle:
    case LongContextTask::NeedleMultiKey: {
      static_assert(std::size(kAdjectives) * std::size(kNouns) == kMaxDistractors + 1);
      if (o.distractors < 0 || o.distractors > kMaxDistractors)
        throw Error(ErrorKind::Usage, "--distractors " + std::to_string(o.distractors) + " is outside 0.." +
                                          std::to_string(kMaxDistractors) + " (each needle needs a distinct key)");
      const int needles = o.task == LongContextTask::Needle ? 1 : 1 + o.distractors;
      std::vector<std::string> keys;
      while (static_cast<int>(keys.size()) < needles) {
        std::string k = key(rng);
        if (std::find(keys.begin(), keys.end(), k) == keys.end()) keys.push_back(std::move(k));
      }
      const std::string value = number(rng, 7);
      facts.push_back({s.depth, "One of the special magic numbers for " + keys[0] + " is: " + value + "."});
      for (int i = 1; i < needles; ++i)
        facts.push_back({any_depth(rng), "One of the special magic numbers for " + keys[static_cast<size_t>(i)] +
                                             " is: " + number(rng, 7) + "."});
      intro = "Some special magic numbers are hidden within the following text. Make sure to memorize them. "
              "I will quiz you about the numbers afterwards.\n\n";
      s.question = "What is the special magic number for " + keys[0] + " mentioned in the provided text?";
      s.answer_prefix = "The special magic number for " + keys[0] + " mentioned in the provided text is";
      s.expected = {value};
      break;
    }
    case LongContextTask::VariableTracking: {
      const int hops = std::max(1, o.hops);
      const std::vector<std::string> names = variable_names(rng, hops);
      const std::string value = number(rng, 5);
      // The chain in order, from the sample's depth to the end.
      for (int i = 0; i < hops; ++i) {
        const double d = s.depth + (1.0 - s.depth) * static_cast<double>(i) / static_cast<double>(hops);
        const std::string rhs = i == 0 ? value : "VAR " + names[static_cast<size_t>(i - 1)];
        facts.push_back({d, "VAR " + names[static_cast<size_t>(i)] + " = " + rhs + "."});
      }
      intro = "Memorize and track the chain(s) of variable assignment hidden in the following text.\n\n";
      s.question = "Find all variables that are assigned the value " + value + " in the text above.";
      s.answer_prefix = "Answer: According to the chain(s) of variable assignment in the text above, " +
                        std::to_string(hops) + " variables are assigned the value " + value + ", they are:";
      s.expected = names;
      break;
    }
  }
  const int64_t fixed = count_tokens(intro) + count_tokens(s.question) + count_tokens(s.answer_prefix) + 16;
  int64_t fact_tokens = 0;
  for (const Fact& f : facts) fact_tokens += count_tokens(f.text) + 1;
  const int64_t filler = o.length - fixed - fact_tokens;
  if (filler < count_tokens(kFiller))
    throw Error(ErrorKind::Usage, "--length " + std::to_string(o.length) + " is too short for this task (it needs " +
                                      std::to_string(fixed + fact_tokens + count_tokens(kFiller)) + " tokens or more)");
  s.context = intro + haystack(filler, std::move(facts), count_tokens);
  return s;
}

double score_answer(std::string_view answer, const std::vector<std::string>& expected) {
  if (expected.empty()) return 0;
  size_t found = 0;
  for (const std::string& e : expected) found += answer.find(e) != std::string_view::npos ? 1 : 0;
  return static_cast<double>(found) / static_cast<double>(expected.size());
}

}  // namespace synapse::eval

// The synthetic long-context tasks: the facts sit where asked, once, in a
// prompt of about the asked length, and answers are scored by the strings
// they hold.
#include "eval/long_context_tasks.h"

#include <gtest/gtest.h>

#include <string>

#include "synapse/error.h"

namespace synapse::eval {
namespace {

// About four characters a token, as English with a BPE vocabulary.
int64_t four_chars_a_token(std::string_view text) { return static_cast<int64_t>(text.size() + 3) / 4; }

size_t occurrences(const std::string& text, const std::string& what) {
  size_t n = 0;
  for (size_t at = text.find(what); at != std::string::npos; at = text.find(what, at + 1)) ++n;
  return n;
}

LongContextOptions options(LongContextTask task, int64_t length, double depth = -1) {
  LongContextOptions o;
  o.task = task;
  o.length = length;
  o.depth = depth;
  return o;
}

TEST(LongContextTasks, PasskeySitsOnceAtTheAskedDepthOfAPromptOfTheAskedLength) {
  for (double depth : {0.0, 0.5, 1.0}) {
    const LongContextSample s = make_sample(options(LongContextTask::Passkey, 4000, depth), 0, four_chars_a_token);
    ASSERT_EQ(s.expected.size(), 1u);
    const std::string fact = "The pass key is " + s.expected[0] + ".";
    ASSERT_EQ(occurrences(s.context, fact), 1u);
    const double at = static_cast<double>(s.context.find(fact)) / static_cast<double>(s.context.size());
    EXPECT_NEAR(at, depth, 0.05) << "depth " << depth;
    const int64_t tokens = four_chars_a_token(s.context) + four_chars_a_token(s.question) +
                           four_chars_a_token(s.answer_prefix);
    EXPECT_NEAR(static_cast<double>(tokens), 4000.0, 4000.0 * 0.05);
    EXPECT_EQ(s.answer_prefix, "The pass key is");
  }
}

TEST(LongContextTasks, SamplesAreReproducibleAndDiffer) {
  const LongContextOptions o = options(LongContextTask::Needle, 2000);
  const LongContextSample a = make_sample(o, 3, four_chars_a_token), b = make_sample(o, 3, four_chars_a_token);
  EXPECT_EQ(a.context, b.context);
  EXPECT_EQ(a.expected, b.expected);
  EXPECT_NE(make_sample(o, 4, four_chars_a_token).expected, a.expected);
}

TEST(LongContextTasks, MultiKeyNeedleAsksForOneKeyAmongDistractors) {
  LongContextOptions o = options(LongContextTask::NeedleMultiKey, 3000);
  o.distractors = 3;
  const LongContextSample s = make_sample(o, 0, four_chars_a_token);
  EXPECT_EQ(occurrences(s.context, "One of the special magic numbers for "), 4u);
  EXPECT_EQ(occurrences(s.context, s.expected[0]), 1u);
  // The asked key's needle holds the expected value.
  const std::string key = s.question.substr(s.question.find("for ") + 4, s.question.find(" mentioned") - s.question.find("for ") - 4);
  EXPECT_EQ(occurrences(s.context, "for " + key + " is: " + s.expected[0] + "."), 1u);
}

// Each needle needs a distinct key; asking for more needles than keys is a
// usage error, not an endless search for one more key.
TEST(LongContextTasks, MultiKeyNeedleTakesAsManyDistractorsAsThereAreKeysAndRefusesMore) {
  LongContextOptions o = options(LongContextTask::NeedleMultiKey, 100000);
  o.distractors = kMaxDistractors;
  EXPECT_EQ(occurrences(make_sample(o, 0, four_chars_a_token).context, "One of the special magic numbers for "),
            static_cast<size_t>(kMaxDistractors) + 1);
  for (int distractors : {kMaxDistractors + 1, 1000, -1}) {
    o.distractors = distractors;
    try {
      make_sample(o, 0, four_chars_a_token);
      ADD_FAILURE() << distractors << " distractors were taken";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage) << e.what();
    }
  }
}

TEST(LongContextTasks, VariableTrackingChainsEveryVariableToTheValue) {
  LongContextOptions o = options(LongContextTask::VariableTracking, 2000, 0.2);
  o.hops = 5;
  const LongContextSample s = make_sample(o, 0, four_chars_a_token);
  ASSERT_EQ(s.expected.size(), 5u);
  // VAR first = value, then each VAR next = VAR previous, in order.
  size_t at = s.context.find("VAR " + s.expected[0] + " = ");
  ASSERT_NE(at, std::string::npos);
  for (size_t i = 1; i < s.expected.size(); ++i) {
    const size_t next = s.context.find("VAR " + s.expected[i] + " = VAR " + s.expected[i - 1] + ".");
    ASSERT_NE(next, std::string::npos) << i;
    EXPECT_GT(next, at);
    at = next;
  }
}

TEST(LongContextTasks, AnswersScoreTheShareOfExpectedStrings) {
  EXPECT_EQ(score_answer(" 71432. Remember", {"71432"}), 1.0);
  EXPECT_EQ(score_answer(" 71433", {"71432"}), 0.0);
  EXPECT_EQ(score_answer("AAAAA BBBBB", {"AAAAA", "BBBBB", "CCCCC", "DDDDD"}), 0.5);
}

TEST(LongContextTasks, ALengthTooShortForTheTaskIsAUsageError) {
  try {
    make_sample(options(LongContextTask::Passkey, 40), 0, four_chars_a_token);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.kind(), ErrorKind::Usage);
  }
  EXPECT_FALSE(long_context_task("needle").has_value());
  EXPECT_EQ(long_context_task("niah-multikey"), LongContextTask::NeedleMultiKey);
}

}  // namespace
}  // namespace synapse::eval

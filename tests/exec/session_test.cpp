// Sessions: chunked prefill, paged KV growth, input errors, cancellation.
#include <gtest/gtest.h>

#include <numeric>
#include <vector>

#include "exec/reference_interpreter.h"
#include "exec/session.h"
#include "exec/test_model.h"
#include "ir/tiny_graphs.h"
#include "synapse/error.h"

namespace synapse::exec {
namespace {

using ir::testing::build_dense;
using ir::testing::DenseConfig;
using testing::make_model;

std::vector<int32_t> prompt(size_t n) {
  std::vector<int32_t> tokens(n);
  for (size_t i = 0; i < n; ++i) tokens[i] = static_cast<int32_t>((i * 7 + 3) % 10);
  return tokens;
}

TEST(ExecSession, ChunkedPrefillEqualsTokenByTokenDecode) {
  const Model model = make_model(build_dense());  // chunk 4
  const std::vector<int32_t> tokens = prompt(10);
  SessionOptions paged;
  paged.kv.page_rows = 4;  // the prompt spans three pages
  paged.all_logits = true;
  Session chunked(model, paged), stepped(model);
  const std::vector<float> all = chunked.eval_all(tokens);
  ASSERT_EQ(all.size(), 10u * 10);
  for (size_t t = 0; t < tokens.size(); ++t) {
    const std::span<const float> row = stepped.eval(std::span(tokens).subspan(t, 1));
    for (size_t i = 0; i < row.size(); ++i) ASSERT_NEAR(row[i], all[t * 10 + i], 1e-4f) << "token " << t;
  }
  EXPECT_EQ(chunked.position(), 10);
  EXPECT_EQ(chunked.kv().pages_allocated(), 2 * 3);

  // And both equal the interpreter running the prompt as one step.
  ReferenceInterpreter interpreter(model);
  std::vector<int32_t> positions(tokens.size());
  std::iota(positions.begin(), positions.end(), 0);
  const std::vector<float> expected = interpreter.run(tokens, positions).logits;
  for (size_t i = 0; i < all.size(); ++i) ASSERT_NEAR(all[i], expected[i], 1e-4f);
}

TEST(ExecSession, LongContextReservesOnlyThePagesUsed) {
  DenseConfig config;
  config.max_ctx = 131072;
  config.chunk = 512;
  const Model model = make_model(build_dense(config));
  Session session(model);
  session.eval(prompt(4096));
  EXPECT_EQ(session.kv().pages_allocated(), 2 * 4096 / KvState::kDefaultPageRows);
  // Two F16 slots of width 4: 8 bytes a row.
  EXPECT_EQ(session.kv().bytes_allocated(), 2u * 4096 * 4 * 2);
}

TEST(ExecSession, RejectsBadInputBeforeAnyCompute) {
  const Model model = make_model(build_dense());  // vocab 10, max_ctx 32
  Session session(model);
  session.eval(prompt(3));
  for (const std::vector<int32_t>& bad : {std::vector<int32_t>{10}, std::vector<int32_t>{2, -1}, prompt(30),
                                          std::vector<int32_t>{}}) {
    try {
      session.eval(bad);
      FAIL() << "accepted a bad input";
    } catch (const Error& error) {
      EXPECT_EQ(error.kind(), ErrorKind::InvalidValue);
    }
  }
  EXPECT_EQ(session.position(), 3);
}

TEST(ExecSession, CancelledEvalLeavesTheSessionUsable) {
  const Model model = make_model(build_dense());
  const std::vector<int32_t> tokens = prompt(6);  // chunks of 4 and 2
  Session reference(model);
  const std::span<const float> logits = reference.eval(tokens);
  const std::vector<float> expected(logits.begin(), logits.end());

  Session session(model);
  // Cancel in the second chunk, after the first has written its KV.
  session.scheduler().set_listener([&](const RegionEvent& event, std::span<const TensorRef>) {
    if (event.step == 1 && std::string(event.kind) == "Attention") session.cancel();
  });
  try {
    session.eval(tokens);
    FAIL() << "a cancelled eval returned";
  } catch (const Error& error) {  // a typed error like any other
    EXPECT_EQ(error.kind(), ErrorKind::Cancelled);
  }
  EXPECT_EQ(session.position(), 0);
  session.scheduler().set_listener(nullptr);
  const std::span<const float> again = session.eval(tokens);
  EXPECT_EQ(std::vector<float>(again.begin(), again.end()), expected);
}

TEST(ExecSession, CancelWithNoEvalRunningDoesNotCancelTheNext) {
  const Model model = make_model(build_dense());
  Session reference(model);
  const std::span<const float> logits = reference.eval(prompt(6));
  const std::vector<float> expected(logits.begin(), logits.end());

  Session session(model);
  session.cancel();  // before any eval
  const std::span<const float> first = session.eval(prompt(6));
  EXPECT_EQ(std::vector<float>(first.begin(), first.end()), expected);
  session.cancel();  // between evals
  EXPECT_NO_THROW(session.eval(prompt(1)));
  EXPECT_EQ(session.position(), 7);
}

}  // namespace
}  // namespace synapse::exec

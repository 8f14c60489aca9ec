// Session::rewind: forgetting the tail of the context and evaluating a
// different continuation gives what a fresh session gives for that sequence.
#include <gtest/gtest.h>

#include <vector>

#include "exec/session.h"
#include "exec/test_model.h"
#include "ir/tiny_graphs.h"
#include "synapse/error.h"

namespace synapse::exec {
namespace {

using ir::testing::build_dense;
using testing::make_model;

TEST(ExecSessionRewind, ContinuationAfterRewindEqualsFreshEvaluation) {
  const Model model = make_model(build_dense());  // chunk 4
  const std::vector<int32_t> first = {1, 2, 3, 4, 5, 6};
  const std::vector<int32_t> replacement = {7, 8, 9};
  SessionOptions options;
  options.all_logits = true;
  Session rewound(model, options);
  rewound.eval(first);
  rewound.rewind(2);  // keep 1 2
  EXPECT_EQ(rewound.position(), 2);
  const std::vector<float> got = rewound.eval_all(replacement);

  Session fresh(model, options);
  const std::vector<float> expected = fresh.eval_all(std::vector<int32_t>{1, 2, 7, 8, 9});
  ASSERT_EQ(got.size() * 5, expected.size() * 3);
  const size_t skip = expected.size() - got.size();  // the rows of 1 2
  for (size_t i = 0; i < got.size(); ++i) ASSERT_NEAR(got[i], expected[skip + i], 1e-5f) << i;
  EXPECT_EQ(rewound.position(), 5);
}

TEST(ExecSessionRewind, RejectsPositionsOutsideTheContext) {
  const Model model = make_model(build_dense());
  Session session(model);
  session.eval(std::vector<int32_t>{1, 2});
  EXPECT_THROW(session.rewind(3), Error);
  EXPECT_THROW(session.rewind(-1), Error);
  session.rewind(2);  // a no-op
  EXPECT_EQ(session.position(), 2);
  session.rewind(0);
  EXPECT_EQ(session.position(), 0);
}

}  // namespace
}  // namespace synapse::exec

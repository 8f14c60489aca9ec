// A decode step allocates nothing: after a warm-up step, N decode steps make
// no heap allocation (counted by the test binary's operator new).
#include <gtest/gtest.h>

#include <vector>

#include "exec/session.h"
#include "exec/test_model.h"
#include "ir/tiny_graphs.h"
#include "support/alloc_counter.h"

namespace synapse::exec {
namespace {

TEST(ExecDecodeAlloc, DecodeStepsAllocateNothing) {
  for (const Model& model : {testing::make_model(ir::testing::build_dense()),
                             testing::make_model(ir::testing::build_moe())}) {
    Session session(model);
    session.scheduler().set_listener([](const RegionEvent&, std::span<const TensorRef>) {});
    session.eval(std::vector<int32_t>{1, 2, 3});
    const std::vector<int32_t> tokens{4, 5, 6, 7, 8, 9, 0, 1};
    session.eval(std::span(tokens).first(1));  // warm-up
    {
      test::AllocationCounter counter;
      for (size_t t = 1; t < tokens.size(); ++t) session.eval(std::span(tokens).subspan(t, 1));
      EXPECT_EQ(counter.count(), 0u);
    }
    EXPECT_EQ(session.position(), 11);
  }
}

}  // namespace
}  // namespace synapse::exec

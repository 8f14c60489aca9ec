#include "ir/fingerprint.h"

#include <gtest/gtest.h>

#include "ir/tiny_graphs.h"

namespace synapse::ir {
namespace {

using testing::build_dense;
using testing::DenseConfig;

TEST(IrFingerprint, StableAndIndependentOfSessionSizes) {
  const std::string base = fingerprint_hex(build_dense());
  EXPECT_EQ(base.size(), 64u);
  EXPECT_EQ(fingerprint_hex(build_dense()), base);
  EXPECT_EQ(fingerprint_hex(build_dense(DenseConfig{.max_ctx = 131072})), base);
  EXPECT_EQ(fingerprint_hex(build_dense(DenseConfig{.chunk = 512, .max_ctx = 4096})), base);
}

// Fingerprints name compiled plans and caches across versions: a change of
// these values must come with a new kEncodingVersion.
TEST(IrFingerprint, KnownValues) {
  EXPECT_EQ(fingerprint_hex(build_dense()), "8ba773b380cb6d2a36be3202c76cb03ac018fa066f5e783b86b6bc2a4089a4a0");
  EXPECT_EQ(fingerprint_hex(build_dense(DenseConfig{.down_encoding = Encoding::Q4_K})),
            "2ceee3747f71cba08af168e7d341cfd30e988c52b7c87c882898281887ea748f");
}

TEST(IrFingerprint, IgnoresWhereTheBytesAreAndNames) {
  const std::string base = fingerprint_hex(build_dense());
  Graph moved = build_dense();
  for (WeightDescriptor& weight : moved.weights) {
    weight.offset += 4096;
    weight.file = 1;
    weight.name += ".renamed";
  }
  for (Value& value : moved.values) value.name.clear();
  EXPECT_EQ(fingerprint_hex(moved), base);
}

TEST(IrFingerprint, ChangesOnEverySemanticChange) {
  const std::string base = fingerprint_hex(build_dense());
  EXPECT_NE(fingerprint_hex(build_dense(DenseConfig{.eps = 1e-6f})), base);
  EXPECT_NE(fingerprint_hex(build_dense(DenseConfig{.theta = 500000.0f})), base);
  EXPECT_NE(fingerprint_hex(build_dense(DenseConfig{.heads = 4, .kv_heads = 2, .head_dim = 2})), base);
  EXPECT_NE(fingerprint_hex(build_dense(DenseConfig{.kv_heads = 2})), base);
  EXPECT_NE(fingerprint_hex(build_dense(DenseConfig{.down_encoding = Encoding::Q8_0})), base);
  EXPECT_NE(fingerprint_hex(build_dense(DenseConfig{.up_before_gate = true})), base);
  EXPECT_NE(fingerprint_hex(build_dense(DenseConfig{.attention_accepts_holes = true})), base);

  Graph policy = build_dense();
  policy.regions[2].activation = {PolicyDecision{testing::value_named(policy, "h1")}, Provenance::TrainedPolicy,
                                  OutputsAbsent{}};
  EXPECT_NE(fingerprint_hex(policy), base);
}

}  // namespace
}  // namespace synapse::ir

// CPU causal attention (online softmax over key blocks, threaded over
// queries) against the reference attention in FP64.
#include "kernels/cpu/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "kernels/cpu/per_cpu_target.h"

namespace synapse::cpu {
namespace {

using CpuAttentionOnTarget = target_test::PerCpuTarget;

struct PagedRows {
  std::vector<std::vector<uint8_t>> pages;
  std::vector<std::vector<uint64_t>> written;
  std::vector<const uint8_t*> page_ptrs;
  std::vector<const uint64_t*> written_ptrs;
  ref::StateRows view;
};

// count random rows of width elements stored in `encoding`, in pages of
// page_rows; every 7th row a hole.
PagedRows make_rows(int64_t count, int64_t width, int64_t page_rows, std::mt19937& rng, bool holes,
                    Encoding encoding = Encoding::F32) {
  std::normal_distribution<float> normal(0.0f, 1.0f);
  PagedRows rows;
  const uint64_t row_size = row_bytes(encoding, static_cast<uint64_t>(width));
  const int64_t pages = (count + page_rows - 1) / page_rows;
  std::vector<float> row(static_cast<size_t>(width));
  for (int64_t p = 0; p < pages; ++p) {
    rows.pages.emplace_back(static_cast<size_t>(page_rows) * row_size);
    rows.written.emplace_back(static_cast<size_t>((page_rows + 63) / 64), ~uint64_t{0});
    for (int64_t r = 0; r < page_rows; ++r) {
      for (float& v : row) v = normal(rng);
      quantize_row(encoding, row.data(), rows.pages.back().data() + r * row_size, width);
      if (holes && (p * page_rows + r) % 7 == 3) rows.written.back()[r / 64] &= ~(uint64_t{1} << (r % 64));
    }
  }
  for (auto& page : rows.pages) rows.page_ptrs.push_back(page.data());
  for (auto& page : rows.written) rows.written_ptrs.push_back(page.data());
  rows.view = {rows.page_ptrs.data(), holes ? rows.written_ptrs.data() : nullptr, page_rows, width, count,
               encoding, row_size};
  return rows;
}

TEST_P(CpuAttentionOnTarget, MatchesReference) {
  const CpuTarget target = GetParam();
  struct Case {
    int64_t heads, kv_heads, head_dim, context, tokens;
    bool holes;
  };
  std::mt19937 rng(5);
  for (const Encoding encoding : {Encoding::F32, Encoding::F16, Encoding::Q8_0}) {
    for (const Case c : {Case{4, 4, 16, 1, 1, false}, Case{8, 2, 64, 200, 3, false}, Case{6, 3, 40, 150, 150, true},
                         Case{2, 1, 128, 70, 1, true}}) {
      if (encoding == Encoding::Q8_0 && c.head_dim % 32 != 0) continue;  // Q8_0 heads are whole blocks
      const ref::AttentionShape shape{c.heads, c.kv_heads, c.head_dim, 1.0f / std::sqrt(float(c.head_dim))};
      const PagedRows k = make_rows(c.context, c.kv_heads * c.head_dim, 32, rng, c.holes, encoding);
      const PagedRows v = make_rows(c.context, c.kv_heads * c.head_dim, 32, rng, c.holes, encoding);
      std::vector<float> q(static_cast<size_t>(c.tokens * c.heads * c.head_dim));
      std::normal_distribution<float> normal(0.0f, 2.0f);
      for (float& value : q) value = normal(rng);
      std::vector<int32_t> positions(static_cast<size_t>(c.tokens));
      for (int64_t t = 0; t < c.tokens; ++t) positions[t] = static_cast<int32_t>(c.context - c.tokens + t);
      std::vector<float> expected(q.size()), scores(static_cast<size_t>(c.context));
      ref::causal_attention(q.data(), positions.data(), c.tokens, k.view, v.view, shape, expected.data(),
                            scores.data(), ref::Accumulation::F64);
      for (int threads : {1, 2}) {
        ThreadPool pool(threads);
        std::vector<float> out(q.size());
        causal_attention(q.data(), positions.data(), c.tokens, k.view, v.view, shape, out.data(), target, pool);
        for (size_t i = 0; i < out.size(); ++i)
          ASSERT_NEAR(out[i], expected[i], 2e-5f) << to_string(target) << " " << encoding_info(encoding).name
                                                  << " element " << i;
      }
    }
  }
}

TEST(CpuAttention, QueryResultDoesNotDependOnBatch) {
  std::mt19937 rng(9);
  const ref::AttentionShape shape{4, 2, 32, 0.2f};
  const PagedRows k = make_rows(90, 64, 16, rng, false), v = make_rows(90, 64, 16, rng, false);
  std::vector<float> q(static_cast<size_t>(10 * 4 * 32));
  std::normal_distribution<float> normal(0.0f, 1.0f);
  for (float& value : q) value = normal(rng);
  std::vector<int32_t> positions(10);
  for (int t = 0; t < 10; ++t) positions[t] = 80 + t;
  ThreadPool pool(2);
  std::vector<float> batch(q.size()), single(128);
  causal_attention(q.data(), positions.data(), 10, k.view, v.view, shape, batch.data(), best_cpu_target(), pool);
  for (int t = 0; t < 10; ++t) {
    causal_attention(&q[t * 128], &positions[t], 1, k.view, v.view, shape, single.data(), best_cpu_target(), pool);
    EXPECT_EQ(0, std::memcmp(single.data(), &batch[t * 128], 128 * sizeof(float))) << "token " << t;
  }
}

SYNAPSE_PER_CPU_TARGET(CpuAttentionOnTarget);

}  // namespace
}  // namespace synapse::cpu

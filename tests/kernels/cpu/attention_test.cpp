// CPU causal attention (tiles of queries sharing a kv head, online softmax
// over key blocks and chunks) against the reference attention in FP64, and
// its batch invariance: a query's bits do not depend on the batch, its tile
// or the thread count.
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

std::vector<float> random_queries(int64_t tokens, const ref::AttentionShape& shape, std::mt19937& rng) {
  std::vector<float> q(static_cast<size_t>(tokens * shape.heads * shape.head_dim));
  std::normal_distribution<float> normal(0.0f, 2.0f);
  for (float& value : q) value = normal(rng);
  return q;
}

// The tokens' positions: the last `tokens` of a context of `context` keys.
std::vector<int32_t> last_positions(int64_t tokens, int64_t context) {
  std::vector<int32_t> positions(static_cast<size_t>(tokens));
  for (int64_t t = 0; t < tokens; ++t) positions[t] = static_cast<int32_t>(context - tokens + t);
  return positions;
}

TEST_P(CpuAttentionOnTarget, MatchesReference) {
  const CpuTarget target = GetParam();
  struct Case {
    int64_t heads, kv_heads, head_dim, context, tokens;
    bool holes;
  };
  // Group sizes 1 to 7, contexts within one key block up to three chunks,
  // one token (a decode step: chunks split over the tasks; with 16 kv heads
  // of 128, in ranges of heads) up to several tiles per kv head (too many
  // for split chunks, each tile one task).
  const Case cases[] = {{4, 4, 16, 1, 1, false},      {8, 2, 64, 200, 3, false},   {6, 3, 40, 150, 150, true},
                        {2, 1, 128, 70, 1, true},      {14, 2, 64, 1000, 1, true},  {14, 2, 64, 1000, 20, false},
                        {32, 8, 64, 600, 5, true},     {8, 2, 128, 1100, 9, true},  {8, 2, 128, 1100, 40, true},
                        {16, 16, 128, 1100, 1, true}};
  std::mt19937 rng(5);
  for (const Encoding encoding : {Encoding::F32, Encoding::F16, Encoding::Q8_0}) {
    for (const Case c : cases) {
      if (encoding == Encoding::Q8_0 && c.head_dim % 32 != 0) continue;  // Q8_0 heads are whole blocks
      const ref::AttentionShape shape{c.heads, c.kv_heads, c.head_dim, 1.0f / std::sqrt(float(c.head_dim))};
      const PagedRows k = make_rows(c.context, c.kv_heads * c.head_dim, 32, rng, c.holes, encoding);
      const PagedRows v = make_rows(c.context, c.kv_heads * c.head_dim, 32, rng, c.holes, encoding);
      const std::vector<float> q = random_queries(c.tokens, shape, rng);
      const std::vector<int32_t> positions = last_positions(c.tokens, c.context);
      std::vector<float> expected(q.size()), scores(static_cast<size_t>(c.context));
      ref::causal_attention(q.data(), positions.data(), c.tokens, k.view, v.view, shape, expected.data(),
                            scores.data(), ref::Accumulation::F64);
      for (int threads : {1, 2}) {
        ThreadPool pool(threads);
        std::vector<float> out(q.size());
        causal_attention(q.data(), positions.data(), c.tokens, k.view, v.view, shape, out.data(), target, pool);
        for (size_t i = 0; i < out.size(); ++i)
          ASSERT_NEAR(out[i], expected[i], 2e-5f)
              << to_string(target) << " " << encoding_info(encoding).name << " heads " << c.heads << "/"
              << c.kv_heads << " dim " << c.head_dim << " context " << c.context << " element " << i;
      }
    }
  }
}

// Each token of a prefill batch, computed alone (a decode step) with 1 to 3
// threads and inside batches that start elsewhere (other tiles, other tile
// neighbours), gives the same bits as in the whole batch: a decode step's
// tile holds a few queries, the batch's up to 64 (head_dim 40 is not whole
// vectors of any target; 16 kv heads of 128 have more chunk states than
// the split buffer holds, so a decode step splits them in ranges of heads).
TEST_P(CpuAttentionOnTarget, QueryResultDoesNotDependOnBatchOrThreads) {
  const CpuTarget target = GetParam();
  struct Case {
    int64_t heads, kv_heads, head_dim;
  };
  constexpr int64_t kContext = 1300, kTokens = 24;  // three chunks; tiles of up to 64 queries cut tokens
  std::mt19937 rng(9);
  for (const Encoding encoding : {Encoding::F32, Encoding::F16, Encoding::Q8_0}) {
    for (const Case c : {Case{14, 2, 64}, Case{8, 2, 128}, Case{32, 8, 64}, Case{6, 3, 40}, Case{16, 16, 128}}) {
      if (encoding == Encoding::Q8_0 && c.head_dim % 32 != 0) continue;  // Q8_0 heads are whole blocks
      const ref::AttentionShape shape{c.heads, c.kv_heads, c.head_dim, 1.0f / std::sqrt(float(c.head_dim))};
      const int64_t width = c.heads * c.head_dim;
      const PagedRows k = make_rows(kContext, c.kv_heads * c.head_dim, 64, rng, true, encoding);
      const PagedRows v = make_rows(kContext, c.kv_heads * c.head_dim, 64, rng, true, encoding);
      const std::vector<float> q = random_queries(kTokens, shape, rng);
      const std::vector<int32_t> positions = last_positions(kTokens, kContext);
      ThreadPool two(2);
      std::vector<float> batch(q.size());
      causal_attention(q.data(), positions.data(), kTokens, k.view, v.view, shape, batch.data(), target, two);
      const auto expect_same = [&](int64_t first, int64_t tokens, ThreadPool& pool) {
        std::vector<float> part(static_cast<size_t>(tokens * width));
        causal_attention(&q[first * width], &positions[first], tokens, k.view, v.view, shape, part.data(), target,
                         pool);
        EXPECT_EQ(0, std::memcmp(part.data(), &batch[first * width], part.size() * sizeof(float)))
            << to_string(target) << " " << encoding_info(encoding).name << " dim " << c.head_dim << " tokens "
            << first << ".." << first + tokens - 1 << " on " << pool.size() << " threads";
      };
      for (int threads : {1, 2, 3}) {
        ThreadPool pool(threads);
        for (int64_t t = 0; t < kTokens; ++t) expect_same(t, 1, pool);
        expect_same(5, 13, pool);
      }
    }
  }
}

// A context of one key; keys past a token's position (written by later
// tokens of the batch) stay invisible.
TEST(CpuAttention, SeesOnlyKeysUpToItsPosition) {
  std::mt19937 rng(3);
  const ref::AttentionShape shape{2, 1, 32, 0.3f};
  const PagedRows k = make_rows(100, 32, 16, rng, false), v = make_rows(100, 32, 16, rng, false);
  const std::vector<float> q = random_queries(2, shape, rng);
  const std::vector<int32_t> positions{0, 70};
  ThreadPool pool(2);
  std::vector<float> out(q.size());
  causal_attention(q.data(), positions.data(), 2, k.view, v.view, shape, out.data(), best_cpu_target(), pool);
  std::vector<float> value(32);
  dequantize_row(Encoding::F32, v.view.row(0), value.data(), 32);
  for (int64_t h = 0; h < 2; ++h)
    for (int64_t e = 0; e < 32; ++e) EXPECT_EQ(out[h * 32 + e], value[e]) << "head " << h << " element " << e;
  std::vector<float> expected(q.size()), scores(100);
  ref::causal_attention(q.data(), positions.data(), 2, k.view, v.view, shape, expected.data(), scores.data(),
                        ref::Accumulation::F64);
  for (size_t i = 64; i < out.size(); ++i) EXPECT_NEAR(out[i], expected[i], 2e-5f) << "element " << i;
}

SYNAPSE_PER_CPU_TARGET(CpuAttentionOnTarget);

}  // namespace
}  // namespace synapse::cpu

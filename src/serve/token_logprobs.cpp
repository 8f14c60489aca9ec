#include "serve/token_logprobs.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace synapse::serve {

void fill_logprobs(std::span<const float> logits, int top, TokenOut& token) {
  float max = -std::numeric_limits<float>::infinity();
  for (float v : logits) max = std::max(max, v);
  double sum = 0;
  for (float v : logits) sum += std::exp(static_cast<double>(v - max));
  const float log_sum = max + static_cast<float>(std::log(sum));
  const auto at = [&](int32_t id) { return logits[static_cast<size_t>(id)] - log_sum; };
  token.logprob = token.id >= 0 ? at(token.id) : 0.0f;

  // A min-heap of the best `top` so far (the worst on top).
  const auto better = [&](int32_t a, int32_t b) {
    const float la = logits[static_cast<size_t>(a)], lb = logits[static_cast<size_t>(b)];
    return la > lb || (la == lb && a < b);
  };
  std::vector<int32_t> best;
  best.reserve(static_cast<size_t>(top) + 1);
  for (int32_t id = 0; top > 0 && id < static_cast<int32_t>(logits.size()); ++id) {
    if (static_cast<int>(best.size()) == top && !better(id, best.front())) continue;
    best.push_back(id);
    std::push_heap(best.begin(), best.end(), better);
    if (static_cast<int>(best.size()) > top) {
      std::pop_heap(best.begin(), best.end(), better);
      best.pop_back();
    }
  }
  std::sort(best.begin(), best.end(), better);
  token.top.clear();
  for (int32_t id : best) token.top.push_back({id, at(id)});
}

}  // namespace synapse::serve

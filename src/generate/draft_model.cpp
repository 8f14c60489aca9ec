#include "generate/draft_model.h"

#include <algorithm>
#include <string>

#include "ir/sha256.h"
#include "synapse/error.h"

namespace synapse {
namespace {

// Each token's length, then its bytes: no two tables share an encoding.
ir::Sha256Digest table_digest(const Vocabulary& vocab) {
  ir::Sha256 hash;
  for (const std::string& token : vocab.tokens) {
    hash.update(std::to_string(token.size()) + ':');
    hash.update(token);
  }
  return hash.finish();
}

int32_t argmax(std::span<const float> row) {
  return static_cast<int32_t>(std::max_element(row.begin(), row.end()) - row.begin());
}

}  // namespace

void require_same_vocabulary(const Vocabulary& target, const Vocabulary& draft) {
  if (table_digest(target) == table_digest(draft)) return;
  const std::string prefix = "the draft model's vocabulary is not the target's: ";
  const auto common = static_cast<size_t>(std::min(target.size(), draft.size()));
  for (size_t id = 0; id < common; ++id)
    if (target.tokens[id] != draft.tokens[id])
      throw Error(ErrorKind::InvalidValue, prefix + "token " + std::to_string(id) + " is '" + target.tokens[id] +
                                               "' in the target and '" + draft.tokens[id] + "' in the draft");
  throw Error(ErrorKind::InvalidValue, prefix + "the target has " + std::to_string(target.size()) +
                                           " tokens, the draft " + std::to_string(draft.size()));
}

ModelDrafter::ModelDrafter(const Model& model, exec::SessionOptions options, const SamplingParams& sampling)
    : session_(model, std::move(options)) {
  if (sampling.temp <= 0) return;
  SamplingParams draft = sampling;
  draft.repeat_penalty = 1.0f;
  draft.frequency_penalty = 0.0f;
  draft.presence_penalty = 0.0f;
  draft.repeat_last_n = 0;
  // Its own random sequence, reproducible where the target's is.
  if (draft.seed) *draft.seed += 1;
  sampler_.emplace(draft, static_cast<int32_t>(session_.vocab()));
}

std::vector<int32_t> ModelDrafter::draft(std::span<const int32_t> context, int max) {
  q_ = {};
  if (max < 1 || context.empty()) return {};
  // Keep the KV of the longest evaluated prefix of the context, but always
  // evaluate at least its last token: its logits give the first draft.
  const auto same = static_cast<size_t>(
      std::mismatch(evaluated_.begin(), evaluated_.end(), context.begin(), context.end()).first - evaluated_.begin());
  const size_t keep = std::min(same, context.size() - 1);
  session_.rewind(static_cast<int64_t>(keep));
  evaluated_.resize(keep);
  // Drafts that would not fit the draft's context are not proposed.
  const int64_t room = session_.max_ctx() - static_cast<int64_t>(context.size());
  if (room < 0) return {};
  const int count = static_cast<int>(std::min<int64_t>(max, room + 1));
  std::span<const float> logits = session_.eval(context.subspan(keep));
  evaluated_.insert(evaluated_.end(), context.begin() + static_cast<std::ptrdiff_t>(keep), context.end());
  const size_t vocab = static_cast<size_t>(session_.vocab());
  if (sampler_ && rows_.size() < static_cast<size_t>(count) * vocab) rows_.resize(static_cast<size_t>(count) * vocab);
  std::vector<int32_t> drafts;
  while (true) {
    if (sampler_) {
      const std::span<float> q = std::span<float>(rows_).subspan(drafts.size() * vocab, vocab);
      sampler_->distribution(logits, q);
      drafts.push_back(sampler_->draw_from(q));
    } else {
      drafts.push_back(argmax(logits));
    }
    if (static_cast<int>(drafts.size()) == count) break;
    logits = session_.eval(std::span<const int32_t>(&drafts.back(), 1));
    evaluated_.push_back(drafts.back());
  }
  if (sampler_) q_ = std::span<const float>(rows_).first(drafts.size() * vocab);
  return drafts;
}

}  // namespace synapse

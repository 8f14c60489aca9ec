#include "generate/speculative.h"

#include <algorithm>
#include <string>

#include "synapse/error.h"

namespace synapse {

NgramDrafter::NgramDrafter(int max_ngram) : max_ngram_(max_ngram) {
  if (max_ngram < 1) throw Error(ErrorKind::Usage, "--lookup-ngram must be at least 1");
}

std::vector<int32_t> NgramDrafter::draft(std::span<const int32_t> context, int max) {
  const auto size = static_cast<int64_t>(context.size());
  if (max < 1) return {};
  for (int64_t n = std::min<int64_t>(max_ngram_, size - 1); n >= 1; --n) {
    const std::span<const int32_t> tail = context.last(static_cast<size_t>(n));
    // The latest earlier occurrence followed by `max` tokens, else the
    // earliest (followed by the most: a run of one token repeats).
    int64_t found = -1;
    for (int64_t start = size - n - 1; start >= 0; --start) {
      if (!std::equal(tail.begin(), tail.end(), context.begin() + start)) continue;
      found = start + n;
      if (size - found >= max) break;
    }
    if (found < 0) continue;
    const int64_t count = std::min<int64_t>(max, size - found);
    return {context.begin() + found, context.begin() + found + count};
  }
  return {};
}

namespace {

// The target's choice at one row of a pass: a draft that stands, or its own.
struct Choice {
  int32_t token;
  bool draft_stands;
};

// Chooses the token at a row given the draft there (none past the drafts).
class Verifier {
 public:
  Verifier(Sampler& sampler, size_t vocab) : sampler_(sampler), vocab_(vocab) {
    if (sampler.params().temp > 0) {
      p_.resize(vocab);
      residual_.resize(vocab);
    }
  }

  Choice choose(std::span<const float> row, const int32_t* draft, std::span<const float> q) {
    if (!draft) return {sampler_.sample(row), false};
    if (sampler_.params().temp <= 0) {
      const int32_t token = sampler_.sample(row);
      return {token, token == *draft};
    }
    sampler_.distribution(row, p_);
    const auto d = static_cast<size_t>(*draft);
    const float q_draft = q.empty() ? 1.0f : q[d];
    if (sampler_.uniform() * q_draft < p_[d]) return {*draft, true};
    double left = 0.0;
    for (size_t j = 0; j < vocab_; ++j) {
      const float q_j = q.empty() ? (j == d ? 1.0f : 0.0f) : q[j];
      residual_[j] = std::max(0.0f, p_[j] - q_j);
      left += residual_[j];
    }
    // Rounding alone can leave nothing where p and q agree: p itself then.
    return {sampler_.draw_from(left > 0.0 ? residual_ : p_), false};
  }

 private:
  Sampler& sampler_;
  size_t vocab_;
  std::vector<float> p_, residual_;
};

// A target pass as a branch of the session's sequence: commit(k) keeps its
// first k tokens; leaving without a commit (a throw) rolls all of it back.
class TentativePass {
 public:
  explicit TentativePass(exec::Session& session) : session_(session) { session_.begin_branch(); }
  ~TentativePass() {
    if (open_) session_.rollback_tail();
  }
  TentativePass(const TentativePass&) = delete;
  TentativePass& operator=(const TentativePass&) = delete;
  void commit(int64_t k) {
    session_.commit_prefix(k);
    open_ = false;
  }

 private:
  exec::Session& session_;
  bool open_ = true;
};

}  // namespace

std::vector<int32_t> generate_speculative(exec::Session& session, Sampler& sampler, std::span<const int32_t> prompt,
                                          const GenerationOptions& options, Drafter& drafter,
                                          const SpeculativeOptions& speculative, SpeculativeStats& stats) {
  if (options.on_logits) throw Error(ErrorKind::Unsupported, "speculative decoding does not dump logits");
  if (speculative.draft_max < 1 || speculative.draft_min < 0 || speculative.draft_min > speculative.draft_max)
    throw Error(ErrorKind::Usage, "--draft-max must be at least 1 and --draft-min within [0, draft-max]");
  if (session.scheduler().logits_rows() < speculative.draft_max + 1)
    throw Error(ErrorKind::InvalidValue, "the target session must plan draft_max + 1 logits rows");

  // The prompt and the first token, as generate() does them.
  GenerationOptions first = options;
  first.n_predict = std::min<int32_t>(options.n_predict < 0 ? 1 : options.n_predict, 1);
  std::vector<int32_t> out = generate(session, sampler, prompt, first);
  // As in generate(): the last generated token is never evaluated.
  const int64_t room = session.max_ctx() - session.position() + 1;
  const int64_t limit = options.n_predict < 0 ? room : std::min<int64_t>(options.n_predict, room);
  const auto is_stop = [&](int32_t t) {
    return std::find(options.stop_tokens.begin(), options.stop_tokens.end(), t) != options.stop_tokens.end();
  };
  if (out.empty() || is_stop(out.back())) return out;

  std::vector<int32_t> context(prompt.begin(), prompt.end());
  context.push_back(out.back());
  std::vector<int32_t> batch;
  batch.reserve(static_cast<size_t>(speculative.draft_max) + 1);
  const size_t vocab = static_cast<size_t>(session.vocab());
  Verifier verifier(sampler, vocab);
  while (static_cast<int64_t>(out.size()) < limit) {
    // Room for the drafts and the token after them, within -n and the context.
    const int64_t left = limit - static_cast<int64_t>(out.size());
    const int want = static_cast<int>(std::min<int64_t>(speculative.draft_max, left - 1));
    std::vector<int32_t> drafts = want > 0 ? drafter.draft(context, want) : std::vector<int32_t>{};
    if (static_cast<int>(drafts.size()) > want) drafts.resize(static_cast<size_t>(want));
    if (static_cast<int>(drafts.size()) < std::max(speculative.draft_min, 1)) drafts.clear();

    batch.assign(1, context.back());
    batch.insert(batch.end(), drafts.begin(), drafts.end());
    // The pass is a branch: only what the target keeps is committed.
    TentativePass pass(session);
    const std::span<const float> rows = session.eval_last(batch, static_cast<int64_t>(batch.size()));
    ++stats.target_passes;
    stats.drafted += static_cast<int64_t>(drafts.size());
    // Row i is the target's logits after batch[0..i]; drafts[i] stands while
    // the target's choice there keeps it.
    const std::span<const float> q = drafts.empty() ? std::span<const float>() : drafter.draft_distributions();
    size_t kept = 0;
    bool stop = false;
    for (size_t i = 0; i < batch.size(); ++i) {
      const int32_t* draft = i < drafts.size() ? &drafts[i] : nullptr;
      const Choice choice =
          verifier.choose(rows.subspan(i * vocab, vocab), draft, q.empty() ? q : q.subspan(i * vocab, vocab));
      sampler.accept(choice.token);
      out.push_back(choice.token);
      context.push_back(choice.token);
      if (options.on_token) options.on_token(choice.token);
      stop = is_stop(choice.token) || static_cast<int64_t>(out.size()) >= limit;
      if (stop || !choice.draft_stands) break;
      ++kept;
    }
    stats.accepted += static_cast<int64_t>(kept);
    // Keep the evaluated last token and the kept drafts; the new last token
    // is evaluated by the next pass.
    pass.commit(1 + static_cast<int64_t>(kept));
    if (stop) break;
  }
  return out;
}

}  // namespace synapse

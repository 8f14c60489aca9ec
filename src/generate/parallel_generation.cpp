#include "generate/parallel_generation.h"

#include <algorithm>
#include <string>

#include "generate/sampler.h"
#include "synapse/error.h"

namespace synapse {

std::vector<std::vector<int32_t>> generate_parallel(exec::Session& session, const SamplingParams& params,
                                                    std::span<const int32_t> prompt, int sequences,
                                                    const GenerationOptions& options) {
  if (sequences < 1 || sequences > session.scheduler().logits_rows())
    throw Error(ErrorKind::InvalidValue, std::to_string(sequences) + " parallel sequences; the session plans 1.." +
                                             std::to_string(session.scheduler().logits_rows()));
  const int64_t limit = generation_limit(session, prompt, options.n_predict);

  struct Continuation {
    exec::SequenceId id;
    Sampler sampler;
    std::vector<int32_t> out;
    int32_t next = 0;
    bool done = false;
  };
  std::vector<Continuation> all;
  all.reserve(static_cast<size_t>(sequences));
  const auto n_vocab = static_cast<int32_t>(session.vocab());
  const std::span<const float> first = session.eval(prompt);
  const std::vector<float> prompt_logits(first.begin(), first.end());
  for (int i = 0; i < sequences; ++i) {
    SamplingParams own = params;
    if (params.seed) own.seed = *params.seed + static_cast<uint32_t>(i);
    all.push_back({i == 0 ? exec::SequenceId{0} : session.fork(0), Sampler(own, n_vocab), {}, 0, false});
    for (int32_t t : prompt) all.back().sampler.accept(t);
  }

  const auto vocab = static_cast<size_t>(session.vocab());
  std::vector<exec::SequenceTokens> batch;
  std::vector<Continuation*> in_batch;
  batch.reserve(all.size());
  in_batch.reserve(all.size());
  // The logits each continuation samples from next: the prompt's, then its
  // row of the last batch.
  std::vector<std::span<const float>> logits(all.size(), std::span<const float>(prompt_logits));
  for (int64_t step = 0; step < limit; ++step) {
    batch.clear();
    in_batch.clear();
    for (size_t i = 0; i < all.size(); ++i) {
      Continuation& c = all[i];
      if (c.done) continue;
      c.next = c.sampler.sample(logits[i]);
      c.sampler.accept(c.next);
      c.out.push_back(c.next);
      c.done = step + 1 == limit || std::find(options.stop_tokens.begin(), options.stop_tokens.end(), c.next) !=
                                        options.stop_tokens.end();
      if (c.done) continue;
      batch.push_back({c.id, std::span<const int32_t>(&c.next, 1)});
      in_batch.push_back(&c);
    }
    if (batch.empty()) break;
    const std::span<const float> rows = session.eval_batch(batch);
    for (size_t b = 0; b < in_batch.size(); ++b)
      logits[static_cast<size_t>(in_batch[b] - all.data())] = rows.subspan(b * vocab, vocab);
  }
  std::vector<std::vector<int32_t>> out;
  for (Continuation& c : all) out.push_back(std::move(c.out));
  return out;
}

}  // namespace synapse

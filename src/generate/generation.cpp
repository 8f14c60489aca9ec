#include "generate/generation.h"

#include <algorithm>

#include "synapse/error.h"

namespace synapse {

int64_t generation_limit(const exec::Session& session, std::span<const int32_t> prompt, int32_t n_predict) {
  if (prompt.empty()) throw Error(ErrorKind::InvalidValue, "the prompt has no tokens");
  for (size_t i = 0; i < prompt.size(); ++i)
    if (prompt[i] < 0 || prompt[i] >= session.vocab())
      throw Error(ErrorKind::InvalidValue, "prompt token " + std::to_string(i) + " (id " + std::to_string(prompt[i]) +
                                               ") is outside the vocabulary of " + std::to_string(session.vocab()));
  const int64_t room = session.max_ctx() - session.position() - static_cast<int64_t>(prompt.size());
  if (room < 0)
    throw Error(ErrorKind::InvalidValue, "the prompt has " + std::to_string(prompt.size()) +
                                             " tokens; the context (-c) holds " +
                                             std::to_string(session.max_ctx() - session.position()));
  // The last generated token is never evaluated, so `room + 1` tokens fit.
  return n_predict < 0 ? room + 1 : std::min<int64_t>(n_predict, room + 1);
}

std::vector<int32_t> generate(exec::Session& session, Sampler& sampler,
                              std::span<const int32_t> prompt, const GenerationOptions& options) {
  const int64_t limit = generation_limit(session, prompt, options.n_predict);

  for (int32_t t : prompt) sampler.accept(t);
  std::span<const float> logits;
  std::vector<float> prompt_rows;  // [prompt, vocab], only when they are wanted
  if (options.keep_prompt_logits && options.on_logits) {
    prompt_rows = session.eval_all(prompt);
    const size_t vocab = static_cast<size_t>(session.vocab());
    for (size_t i = 0; i < prompt.size(); ++i)
      options.on_logits(std::span<const float>(prompt_rows).subspan(i * vocab, vocab));
    logits = std::span<const float>(prompt_rows).subspan((prompt.size() - 1) * vocab, vocab);
  } else {
    logits = session.eval(prompt);
  }

  std::vector<int32_t> out;
  out.reserve(static_cast<size_t>(std::max<int64_t>(limit, 0)));
  for (int64_t i = 0; i < limit; ++i) {
    const int32_t token = sampler.sample(logits);
    sampler.accept(token);
    out.push_back(token);
    if (options.on_token) options.on_token(token);
    if (std::find(options.stop_tokens.begin(), options.stop_tokens.end(), token) != options.stop_tokens.end()) break;
    if (i + 1 == limit) break;
    logits = session.eval(std::span<const int32_t>(&token, 1));
    if (options.on_logits) options.on_logits(logits);
  }
  return out;
}

}  // namespace synapse

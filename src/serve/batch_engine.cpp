#include "serve/batch_engine.h"

#include <algorithm>
#include <cstdio>

#include "generate/sampler.h"
#include "serve/stop_text.h"
#include "serve/token_logprobs.h"
#include "synapse/error.h"
#include "tokenizer/utf8_stream.h"

namespace synapse::serve {

// A job holding a slot: its sequence, the tokens it holds and will hold, and
// how its text comes out.
struct BatchEngine::Active {
  std::shared_ptr<Job> job;
  exec::SequenceId sequence;
  std::vector<int32_t> tokens;  // the prompt, then each token generated
  size_t evaluated = 0;         // of them, in the sequence's KV pages
  Sampler sampler;
  Utf8Stream utf8;
  StopText stop;
  JobUsage usage;
  Clock::time_point last_token;
  FinishReason finished = FinishReason::None;  // set by the step that ends it
  std::string error;                           // why, for FinishReason::Error
  bool in_flight = false;                      // in a step submitted and not collected
};

BatchEngine::BatchEngine(exec::BatchEvaluator& model, const Tokenizer& tokenizer, ServerMetrics& metrics,
                         EngineOptions options)
    : session_(model),
      max_ctx_(model.max_ctx()),
      vocab_(model.vocab()),
      tokenizer_(tokenizer),
      metrics_(metrics),
      options_(std::move(options)) {
  if (options_.slots < 1 || options_.slots > model.logits_rows() || options_.slots > model.chunk())
    throw Error(ErrorKind::InvalidValue, std::to_string(options_.slots) + " slots; the session plans 1.." +
                                             std::to_string(std::min<int64_t>(model.logits_rows(), model.chunk())));
  steps_.resize(static_cast<size_t>(std::max(model.depth(), 1)));
  for (Step& s : steps_) {
    s.batch.reserve(static_cast<size_t>(options_.slots));
    s.owners.reserve(static_cast<size_t>(options_.slots));
  }
  thread_ = std::thread([this] { loop(); });
}

BatchEngine::~BatchEngine() { shutdown(); }

std::shared_ptr<Job> BatchEngine::submit(JobRequest request) {
  if (request.prompt.empty() || static_cast<int64_t>(request.prompt.size()) >= max_ctx_)
    throw Error(ErrorKind::InvalidValue, "a prompt of " + std::to_string(request.prompt.size()) +
                                             " tokens; the context holds " + std::to_string(max_ctx_));
  for (int32_t id : request.prompt)
    if (id < 0 || id >= vocab_)
      throw Error(ErrorKind::InvalidValue, "token id " + std::to_string(id) + " is outside the vocabulary (" +
                                               std::to_string(vocab_) + " ids)");
  auto job = std::make_shared<Job>(std::move(request));
  {
    std::lock_guard lock(mutex_);
    if (stop_ || queue_.size() >= options_.queue_capacity) return nullptr;
    queue_.push_back(job);
    ++metrics_.queued;
  }
  wake_.notify_one();
  return job;
}

void BatchEngine::shutdown() {
  {
    std::lock_guard lock(mutex_);
    stop_ = true;
  }
  wake_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void BatchEngine::loop() {
  for (;;) {
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stop_ || !queue_.empty() || !active_.empty(); });
      if (stop_) {
        for (const std::shared_ptr<Job>& job : queue_) job->finish(FinishReason::Shutdown);
        metrics_.queued -= static_cast<int64_t>(queue_.size());
        queue_.clear();
        break;
      }
      // Admission between steps: into free slots, in arrival order.
      while (!queue_.empty() && static_cast<int>(active_.size()) < options_.slots) {
        std::shared_ptr<Job> job = std::move(queue_.front());
        queue_.pop_front();
        --metrics_.queued;
        lock.unlock();
        admit(std::move(job));
        lock.lock();
      }
    }
    try {
      step();
    } catch (const std::exception& e) {
      abandon(e.what());
    }
  }
  while (in_flight_ > 0) {  // the steps on their way come back first
    for (Active* a : steps_[oldest_].owners) a->in_flight = false;
    oldest_ = (oldest_ + 1) % steps_.size();
    --in_flight_;
    try {
      session_.collect();
    } catch (const std::exception& e) {  // a rank gone: nothing more comes back
      std::fprintf(stderr, "synapse serve: a step in flight at shutdown failed: %s\n", e.what());
      in_flight_ = 0;
    }
  }
  while (!active_.empty()) retire(active_.size() - 1, FinishReason::Shutdown);
  drop_cached();
  publish_kv();
}

void BatchEngine::abandon(const std::string& error) {
  std::fprintf(stderr, "synapse serve: the model failed: %s\n", error.c_str());
  for (const std::unique_ptr<Active>& a : active_) {
    --metrics_.processing;
    a->job->finish(FinishReason::Error, error);
  }
  active_.clear();
  cached_.clear();
  in_flight_ = 0;
}

void BatchEngine::admit(std::shared_ptr<Job> job) {
  const JobRequest& request = job->request();
  std::unique_ptr<Active> a;
  try {
    Sampler sampler(request.sampling, static_cast<int32_t>(session_.vocab()));  // checks the parameters
    int64_t reused = 0;
    const exec::SequenceId sequence = start_sequence(request.prompt, reused);
    a.reset(new Active{job, sequence, request.prompt, static_cast<size_t>(reused), std::move(sampler), Utf8Stream(),
                       StopText(request.stop), {}, {}, FinishReason::None, {}});
    a->usage.cached_tokens = reused;
  } catch (const std::exception& e) {  // bad sampling parameters, no memory: this request fails alone
    job->finish(FinishReason::Error, e.what());
    return;
  }
  for (int32_t id : request.prompt) a->sampler.accept(id);
  a->usage.prompt_tokens = static_cast<int64_t>(request.prompt.size());
  ++metrics_.processing;
  active_.push_back(std::move(a));
}

exec::SequenceId BatchEngine::start_sequence(const std::vector<int32_t>& prompt, int64_t& reused) {
  // At least the prompt's last token is evaluated: its logits start the reply.
  const size_t most = prompt.size() - 1;
  const auto common = [&](const std::vector<int32_t>& held, size_t count) {
    const size_t n = std::min({held.size(), count, most});
    return static_cast<size_t>(std::mismatch(prompt.begin(), prompt.begin() + static_cast<ptrdiff_t>(n), held.begin()).first -
                               prompt.begin());
  };
  size_t best = 0;
  const Cached* best_cached = nullptr;
  const Active* best_active = nullptr;
  for (const Cached& c : cached_)
    if (const size_t n = common(c.tokens, c.tokens.size()); n > best) best = n, best_cached = &c, best_active = nullptr;
  for (const auto& a : active_)
    if (const size_t n = common(a->tokens, a->evaluated); n > best) best = n, best_active = a.get(), best_cached = nullptr;
  reused = static_cast<int64_t>(best);
  if (best_cached) {  // taken over: the cache no longer holds it
    const exec::SequenceId id = best_cached->sequence;
    cached_.erase(cached_.begin() + (best_cached - &cached_.front()));
    session_.rewind(id, reused);
    return id;
  }
  const exec::SequenceId id = session_.fork(best_active ? best_active->sequence : 0);
  session_.rewind(id, reused);
  return id;
}

void BatchEngine::step() {
  const Clock::time_point now = Clock::now();
  for (size_t i = active_.size(); i-- > 0;) {
    const Active& a = *active_[i];
    if (a.in_flight) continue;  // ended once its step is back
    if (a.job->cancelled()) retire(i, FinishReason::Cancelled);
    else if (now >= a.job->request().deadline) retire(i, FinishReason::Timeout);
  }
  if (active_.empty() && in_flight_ == 0) return publish_kv();
  // The sequences shared among the steps the model takes at once.
  const size_t depth = steps_.size();
  const size_t share = (active_.size() + depth - 1) / depth;
  while (in_flight_ < depth && submit(share)) {
  }
  if (in_flight_ > 0) collect();
  for (size_t i = active_.size(); i-- > 0;)
    if (!active_[i]->in_flight && active_[i]->finished != FinishReason::None)
      retire(i, active_[i]->finished, active_[i]->error);
  publish_kv();
}

bool BatchEngine::submit(size_t entries) {
  Step& s = steps_[(oldest_ + in_flight_) % steps_.size()];
  s.batch.clear();
  s.owners.clear();
  int64_t budget = session_.chunk();
  for (int prefill = 0; prefill < 2; ++prefill)
    for (size_t i = 0; i < active_.size() && budget > 0 && s.batch.size() < entries; ++i) {
      Active& a = *active_[i];
      const int64_t pending = static_cast<int64_t>(a.tokens.size() - a.evaluated);
      if (a.in_flight || a.finished != FinishReason::None || pending < 1 || (pending > 1) != (prefill == 1)) continue;
      const int64_t n = std::min(pending, budget);
      s.batch.push_back({a.sequence, std::span<const int32_t>(a.tokens).subspan(a.evaluated, static_cast<size_t>(n))});
      s.owners.push_back(&a);
      budget -= n;
    }
  if (s.batch.empty()) return false;
  try {
    session_.submit(s.batch);
  } catch (const std::exception& e) {
    // Short of KV memory, cached sequences give their pages back first (the
    // step is retried); with none left, or on any other failure, the newest
    // request in the step gives way.
    const auto* error = dynamic_cast<const Error*>(&e);
    if (error && error->kind() == ErrorKind::InsufficientMemory && !cached_.empty()) {
      drop_cached();
      return false;
    }
    for (size_t i = active_.size(); i-- > 0;)
      if (std::find(s.owners.begin(), s.owners.end(), active_[i].get()) != s.owners.end()) {
        active_[i]->finished = FinishReason::Error;
        active_[i]->error = e.what();
        break;
      }
    return false;
  }
  for (Active* a : s.owners) a->in_flight = true;
  ++in_flight_;
  return true;
}

void BatchEngine::collect() {
  Step& s = steps_[oldest_];
  oldest_ = (oldest_ + 1) % steps_.size();
  --in_flight_;
  std::span<const float> rows;
  try {
    rows = session_.collect();
  } catch (const std::exception& e) {  // a pipeline rank gone: the step's requests fail
    for (Active* a : s.owners) {
      a->in_flight = false;
      a->finished = FinishReason::Error;
      a->error = e.what();
    }
    return;
  }
  const auto vocab = static_cast<size_t>(session_.vocab());
  for (size_t b = 0; b < s.batch.size(); ++b) {
    Active& a = *s.owners[b];
    a.in_flight = false;
    a.evaluated += s.batch[b].tokens.size();
    if (a.evaluated != a.tokens.size()) continue;
    try {
      advance(a, rows.subspan(b * vocab, vocab));
    } catch (const std::exception& e) {  // e.g. a row the sampler cannot draw from: that request fails alone
      a.finished = FinishReason::Error;
      a.error = e.what();
    }
  }
}

void BatchEngine::advance(Active& a, std::span<const float> row) {
  const JobRequest& request = a.job->request();
  TokenOut out;
  out.id = a.sampler.sample(row);
  a.sampler.accept(out.id);
  const Clock::time_point now = Clock::now();
  if (a.usage.completion_tokens == 0) {
    metrics_.time_to_first_token.observe(std::chrono::duration<double>(now - a.job->submitted()).count());
  } else {
    metrics_.inter_token_latency.observe(std::chrono::duration<double>(now - a.last_token).count());
  }
  a.last_token = now;
  const bool end = !request.ignore_eos && std::find(options_.end_ids.begin(), options_.end_ids.end(), out.id) !=
                                              options_.end_ids.end();
  if (!end) {
    ++a.usage.completion_tokens;
    ++metrics_.generated_tokens;
    a.tokens.push_back(out.id);
    out.text = a.stop.push(a.utf8.push(tokenizer_.token_to_piece(out.id)));
    if (request.logprobs) fill_logprobs(row, request.top_logprobs, out);
  }
  FinishReason& reason = a.finished;
  if (end || a.stop.stopped()) reason = FinishReason::Stop;
  else if (request.max_tokens >= 0 && a.usage.completion_tokens >= request.max_tokens) reason = FinishReason::Length;
  else if (static_cast<int64_t>(a.tokens.size()) >= max_ctx_) reason = FinishReason::Length;
  if (reason != FinishReason::None && !a.stop.stopped()) out.text += a.stop.push(a.utf8.flush()) + a.stop.flush();
  if (end) out.id = -1;  // the end-of-turn token is not part of the answer, only its held-back text
  if (!end || !out.text.empty()) a.job->emit(std::move(out));
}

void BatchEngine::retire(size_t index, FinishReason reason, const std::string& error) {
  std::unique_ptr<Active> a = std::move(active_[index]);
  active_.erase(active_.begin() + static_cast<ptrdiff_t>(index));
  --metrics_.processing;
  metrics_.prompt_tokens += static_cast<uint64_t>(a->usage.prompt_tokens);
  metrics_.cached_prompt_tokens += static_cast<uint64_t>(a->usage.cached_tokens);
  a->job->set_usage(a->usage);
  a->job->finish(reason, error);
  if (reason == FinishReason::Stop || reason == FinishReason::Length) {
    a->tokens.resize(a->evaluated);
    cache(a->sequence, std::move(a->tokens));
  } else {
    session_.drop(a->sequence);
  }
}

void BatchEngine::cache(exec::SequenceId sequence, std::vector<int32_t> tokens) {
  cached_.push_back({sequence, std::move(tokens)});
  while (static_cast<int>(cached_.size()) > options_.slots) {
    session_.drop(cached_.front().sequence);
    cached_.pop_front();
  }
}

void BatchEngine::drop_cached() {
  for (const Cached& c : cached_) session_.drop(c.sequence);
  cached_.clear();
}

void BatchEngine::publish_kv() {
  const uint64_t bytes = session_.kv_bytes();
  const uint64_t page = session_.kv_page_bytes();
  metrics_.kv_bytes = bytes;
  metrics_.kv_pages = page > 0 ? bytes / page : 0;
}

}  // namespace synapse::serve

// One request's generation as the batch engine runs it and an HTTP thread
// reads it: the engine appends tokens and finally a finish reason; the
// reader takes what is new, waiting for it, and may cancel at any time.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <vector>

#include "synapse/sampling.h"

namespace synapse::serve {

using Clock = std::chrono::steady_clock;

struct JobRequest {
  std::vector<int32_t> prompt;
  SamplingParams sampling;
  int64_t max_tokens = -1;  // < 0: until an end-of-turn token or the context is full
  std::vector<std::string> stop;
  bool ignore_eos = false;
  bool logprobs = false;
  int32_t top_logprobs = 0;
  Clock::time_point deadline = Clock::time_point::max();
};

struct TokenLogprob {
  int32_t id = 0;
  float logprob = 0;
};

// A generated token and the text it lets out (text can lag a token: a
// UTF-8 sequence or a possible stop string is held back until decided).
// The last output of a job may carry text alone (id -1).
struct TokenOut {
  int32_t id = -1;
  std::string text;
  float logprob = 0;                // when the request asked for logprobs
  std::vector<TokenLogprob> top;  // the top_logprobs most likely ids
};

enum class FinishReason { None, Stop, Length, Cancelled, Timeout, Shutdown, Error };
const char* to_string(FinishReason reason);  // OpenAI's finish_reason

struct JobUsage {
  int64_t prompt_tokens = 0;
  int64_t cached_tokens = 0;  // of the prompt, found in the KV pages of an earlier sequence
  int64_t completion_tokens = 0;
};

class Job {
 public:
  explicit Job(JobRequest request) : request_(std::move(request)), submitted_(Clock::now()) {}

  // Reader: moves new outputs into `out` (appending), waiting up to `wait`
  // when there are none. Returns true once the job has finished and `out`
  // holds everything it made.
  bool take(std::vector<TokenOut>& out, std::chrono::milliseconds wait);
  void cancel() { cancelled_ = true; }
  FinishReason finish_reason() const;
  std::string error() const;  // why, for FinishReason::Error
  JobUsage usage() const;

  // Engine side.
  const JobRequest& request() const { return request_; }
  Clock::time_point submitted() const { return submitted_; }
  bool cancelled() const { return cancelled_; }
  void emit(TokenOut token);
  void set_usage(const JobUsage& usage);
  void finish(FinishReason reason, std::string error = {});

 private:
  const JobRequest request_;
  const Clock::time_point submitted_;
  std::atomic<bool> cancelled_{false};
  mutable std::mutex mutex_;
  std::condition_variable ready_;
  std::deque<TokenOut> outputs_;  // guarded by mutex_, as are the fields below
  FinishReason reason_ = FinishReason::None;
  std::string error_;
  JobUsage usage_;
};

}  // namespace synapse::serve

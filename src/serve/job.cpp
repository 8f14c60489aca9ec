#include "serve/job.h"

namespace synapse::serve {

const char* to_string(FinishReason reason) {
  switch (reason) {
    case FinishReason::None: return "";
    case FinishReason::Stop: return "stop";
    case FinishReason::Length: return "length";
    case FinishReason::Cancelled: return "cancelled";
    case FinishReason::Timeout: return "timeout";
    case FinishReason::Shutdown: return "shutdown";
    case FinishReason::Error: return "error";
  }
  return "";
}

bool Job::take(std::vector<TokenOut>& out, std::chrono::milliseconds wait) {
  std::unique_lock lock(mutex_);
  ready_.wait_for(lock, wait, [this] { return !outputs_.empty() || reason_ != FinishReason::None; });
  for (TokenOut& token : outputs_) out.push_back(std::move(token));
  outputs_.clear();
  return reason_ != FinishReason::None;
}

FinishReason Job::finish_reason() const {
  std::lock_guard lock(mutex_);
  return reason_;
}

std::string Job::error() const {
  std::lock_guard lock(mutex_);
  return error_;
}

JobUsage Job::usage() const {
  std::lock_guard lock(mutex_);
  return usage_;
}

void Job::emit(TokenOut token) {
  {
    std::lock_guard lock(mutex_);
    outputs_.push_back(std::move(token));
  }
  ready_.notify_all();
}

void Job::set_usage(const JobUsage& usage) {
  std::lock_guard lock(mutex_);
  usage_ = usage;
}

void Job::finish(FinishReason reason, std::string error) {
  {
    std::lock_guard lock(mutex_);
    if (reason_ != FinishReason::None) return;
    reason_ = reason;
    error_ = std::move(error);
  }
  ready_.notify_all();
}

}  // namespace synapse::serve

#include "serve/metrics.h"

#include <cstdio>

namespace synapse::serve {
namespace {

std::string number(double v) {
  char text[32];
  std::snprintf(text, sizeof text, "%.9g", v);
  return text;
}

std::string metric(const std::string& name, const char* type, const std::string& help, double value) {
  return "# HELP " + name + " " + help + "\n# TYPE " + name + " " + type + "\n" + name + " " + number(value) + "\n";
}

}  // namespace

void LatencyHistogram::observe(double seconds) {
  std::lock_guard lock(mutex_);
  for (size_t i = 0; i < kBounds.size(); ++i)
    if (seconds <= kBounds[i]) ++buckets_[i];
  ++count_;
  sum_ += seconds;
}

std::string LatencyHistogram::prometheus(const std::string& name, const std::string& help) const {
  std::lock_guard lock(mutex_);
  std::string out = "# HELP " + name + " " + help + "\n# TYPE " + name + " histogram\n";
  for (size_t i = 0; i < kBounds.size(); ++i)
    out += name + "_bucket{le=\"" + number(kBounds[i]) + "\"} " + std::to_string(buckets_[i]) + "\n";
  out += name + "_bucket{le=\"+Inf\"} " + std::to_string(count_) + "\n";
  out += name + "_sum " + number(sum_) + "\n" + name + "_count " + std::to_string(count_) + "\n";
  return out;
}

std::string ServerMetrics::prometheus() const {
  const auto u = [](const auto& a) { return static_cast<double>(a.load()); };
  std::string out;
  out += metric("synapse_requests_ok_total", "counter", "Requests answered with a 2xx status.", u(requests_ok));
  out += metric("synapse_requests_failed_total", "counter", "Requests answered with a 4xx or 5xx status.",
                u(requests_failed));
  out += metric("synapse_prompt_tokens_total", "counter", "Prompt tokens of finished requests.", u(prompt_tokens));
  out += metric("synapse_prompt_tokens_cached_total", "counter",
                "Prompt tokens whose KV pages were reused from an earlier sequence.", u(cached_prompt_tokens));
  out += metric("synapse_tokens_generated_total", "counter", "Tokens generated.", u(generated_tokens));
  out += metric("synapse_requests_queued", "gauge", "Requests waiting for a slot.", u(queued));
  out += metric("synapse_requests_processing", "gauge", "Requests holding a slot.", u(processing));
  out += metric("synapse_kv_pages_in_use", "gauge", "KV pages allocated (a page holds every layer's rows).",
                u(kv_pages));
  out += metric("synapse_kv_bytes_in_use", "gauge", "Bytes of the KV pages allocated.", u(kv_bytes));
  out += time_to_first_token.prometheus("synapse_time_to_first_token_seconds",
                                        "From a request's arrival to its first generated token.");
  out += inter_token_latency.prometheus("synapse_inter_token_latency_seconds",
                                        "Between consecutive generated tokens of a request.");
  return out;
}

}  // namespace synapse::serve

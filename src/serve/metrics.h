// The server's counters, gauges and latency histograms, written by the
// batch engine and the HTTP handlers and read as Prometheus text (GET
// /metrics). Every member is safe to touch from any thread.
#pragma once

#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>

namespace synapse::serve {

// Cumulative buckets of seconds, as Prometheus histograms count them.
class LatencyHistogram {
 public:
  static constexpr std::array<double, 12> kBounds = {0.005, 0.01, 0.025, 0.05, 0.1, 0.25,
                                                     0.5,   1,    2.5,   5,    10,  30};
  void observe(double seconds);
  // The histogram's lines for `name` (with its HELP text).
  std::string prometheus(const std::string& name, const std::string& help) const;

 private:
  mutable std::mutex mutex_;
  std::array<uint64_t, kBounds.size()> buckets_{};
  uint64_t count_ = 0;
  double sum_ = 0;
};

struct ServerMetrics {
  std::atomic<uint64_t> requests_ok{0};      // requests answered with 2xx
  std::atomic<uint64_t> requests_failed{0};  // 4xx and 5xx
  std::atomic<uint64_t> prompt_tokens{0};
  std::atomic<uint64_t> cached_prompt_tokens{0};  // prompt tokens whose KV pages were reused
  std::atomic<uint64_t> generated_tokens{0};
  std::atomic<int64_t> queued{0};      // waiting for a slot
  std::atomic<int64_t> processing{0};  // holding a slot
  std::atomic<uint64_t> kv_bytes{0};
  std::atomic<uint64_t> kv_pages{0};
  LatencyHistogram time_to_first_token;
  LatencyHistogram inter_token_latency;

  std::string prometheus() const;
};

}  // namespace synapse::serve

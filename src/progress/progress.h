// Progress of long work (synth, loading weights, paged warm-up; later
// quantize, convert, perplexity) on stderr: on a terminal one bar rewritten
// in place, elsewhere a plain line now and then; each gives bytes, rate and
// ETA. Work that ends before the first report prints nothing, so short runs
// and tests stay quiet; SYNAPSE_PROGRESS=0 in the environment silences it.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>

namespace synapse {

struct ProgressStyle {
  bool terminal = false;  // a bar rewritten in place; else whole lines
  double quiet_s = 0.5;   // no report before this much time has passed
  double every_s = 0.5;   // then at most one report per this many seconds
};

// Where reports go and how they look.
struct ProgressOutput {
  ProgressStyle style;
  std::function<void(std::string_view)> sink;  // null: nowhere
};

// stderr, styled for a terminal or a log; no sink when SYNAPSE_PROGRESS=0.
ProgressOutput stderr_progress();

class Progress {
 public:
  using Seconds = std::function<double()>;  // a monotonic clock

  // Reports on stderr_progress().
  Progress(std::string label, uint64_t total_bytes);
  // Reports to `output` with `clock` (tests fake both).
  Progress(std::string label, uint64_t total_bytes, ProgressOutput output, Seconds clock);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  // `done` bytes of the total so far; reports when the throttle allows.
  // Reaching the total finishes.
  void update(uint64_t done);
  // The final report, where anything was reported; called by the destructor.
  void finish();

 private:
  std::string label_;
  uint64_t total_;
  ProgressOutput output_;
  Seconds clock_;
  double start_;
  double last_report_ = -1;  // < 0: nothing reported yet
  uint64_t done_ = 0;
  bool finished_ = false;
};

// One report: "LABEL [####......]  40%  1.2 GiB / 3.0 GiB  250.0 MiB/s  ETA 7 s"
// (terminal, led by '\r') or "LABEL: 40%, 1.2 GiB of 3.0 GiB, 250.0 MiB/s, ETA 7 s\n".
std::string format_progress(std::string_view label, uint64_t done, uint64_t total, double elapsed_s,
                            bool terminal);

}  // namespace synapse

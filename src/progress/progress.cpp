#include "progress/progress.h"

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "memory/memory_budget.h"

namespace synapse {

namespace {

using memory::format_bytes;

constexpr int kBarWidth = 24;

double steady_seconds() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

std::string format_duration(double seconds) {
  const auto s = static_cast<long long>(std::llround(std::max(seconds, 0.0)));
  char text[32];
  if (s < 60) std::snprintf(text, sizeof text, "%lld s", s);
  else if (s < 3600) std::snprintf(text, sizeof text, "%lld:%02lld", s / 60, s % 60);
  else std::snprintf(text, sizeof text, "%lld:%02lld:%02lld", s / 3600, s / 60 % 60, s % 60);
  return text;
}

}  // namespace

std::string format_progress(std::string_view label, uint64_t done, uint64_t total, double elapsed_s,
                            bool terminal) {
  const double fraction = total > 0 ? std::min(1.0, static_cast<double>(done) / static_cast<double>(total)) : 1.0;
  const double rate = elapsed_s > 0 ? static_cast<double>(done) / elapsed_s : 0.0;
  const bool finished = done >= total;
  std::string eta;
  if (finished) eta = "in " + format_duration(elapsed_s);
  else if (rate > 0) eta = "ETA " + format_duration(static_cast<double>(total - done) / rate);
  else eta = "ETA ?";
  const int percent = static_cast<int>(fraction * 100);
  const std::string speed = format_bytes(static_cast<uint64_t>(rate)) + "/s";
  char text[256];
  if (terminal) {
    const int filled = static_cast<int>(fraction * kBarWidth);
    const std::string bar = std::string(static_cast<size_t>(filled), '#') + std::string(kBarWidth - filled, '.');
    // Trailing spaces wipe a longer line left by the previous report.
    std::snprintf(text, sizeof text, "\r%.*s [%s] %3d%%  %s / %s  %s  %s   ", static_cast<int>(label.size()),
                  label.data(), bar.c_str(), percent, format_bytes(done).c_str(), format_bytes(total).c_str(),
                  speed.c_str(), eta.c_str());
  } else {
    std::snprintf(text, sizeof text, "%.*s: %d%%, %s of %s, %s, %s\n", static_cast<int>(label.size()),
                  label.data(), percent, format_bytes(done).c_str(), format_bytes(total).c_str(), speed.c_str(),
                  eta.c_str());
  }
  return text;
}

ProgressOutput stderr_progress() {
  ProgressOutput out;
  out.style.terminal = ::isatty(STDERR_FILENO) == 1;
  if (!out.style.terminal) {  // a log: fewer lines
    out.style.quiet_s = 2;
    out.style.every_s = 5;
  }
  const char* setting = std::getenv("SYNAPSE_PROGRESS");
  if (setting == nullptr || std::strcmp(setting, "0") != 0) {
    out.sink = [](std::string_view text) {
      std::fwrite(text.data(), 1, text.size(), stderr);
      std::fflush(stderr);
    };
  }
  return out;
}

Progress::Progress(std::string label, uint64_t total_bytes)
    : Progress(std::move(label), total_bytes, stderr_progress(), steady_seconds) {}

Progress::Progress(std::string label, uint64_t total_bytes, ProgressOutput output, Seconds clock)
    : label_(std::move(label)),
      total_(total_bytes),
      output_(std::move(output)),
      clock_(std::move(clock)),
      start_(clock_()) {}

Progress::~Progress() { finish(); }

void Progress::update(uint64_t done) {
  done_ = done;
  if (done_ >= total_) return finish();  // the final report
  if (!output_.sink || finished_) return;
  const double now = clock_();
  if (now - start_ < output_.style.quiet_s) return;
  if (last_report_ >= 0 && now - last_report_ < output_.style.every_s) return;
  last_report_ = now;
  output_.sink(format_progress(label_, done_, total_, now - start_, output_.style.terminal));
}

void Progress::finish() {
  if (finished_) return;
  finished_ = true;
  if (!output_.sink || last_report_ < 0) return;  // nothing shown: nothing to close
  output_.sink(format_progress(label_, done_, total_, clock_() - start_, output_.style.terminal));
  if (output_.style.terminal) output_.sink("\n");
}

}  // namespace synapse

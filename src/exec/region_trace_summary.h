// Reading a region trace back (the JSONL of RegionTraceWriter) into run-level
// aggregates (SPEC §9): regions executed and skipped per step and token,
// weight bytes per token, the expert histogram per layer, and the token x
// region activity that `synapse trace --heatmap` draws.
#pragma once

#include <cstdint>
#include <cstdio>
#include <istream>
#include <map>
#include <string>
#include <vector>

namespace synapse::exec {

struct TraceStep {
  uint64_t step = 0;
  int64_t position = 0;  // of the step's first token
  int64_t tokens = 0;    // the trace's "tokens", else the distance to the next step's position
  uint32_t executed = 0;
  uint32_t skipped = 0;  // Skipped, Bypassed and Absent
  uint64_t weight_bytes = 0;
  // Outcome per region id: 'E'xecuted, 'S'kipped, 'B'ypassed, 'A'bsent, '?' not traced.
  std::string activity;
};

struct TraceSummary {
  std::vector<TraceStep> steps;  // in the order they appear
  // Executions of each Expert region, by layer, then expert index.
  std::map<uint32_t, std::vector<uint64_t>> expert_histogram;
  uint32_t regions = 0;  // highest region id + 1
};

// Throws Error(InvalidValue) naming the line number for a line that is not
// a region event. A trace with several sessions is summarized as one.
TraceSummary summarize_trace(std::istream& in);

// The per-step table, per-token means and the expert histogram, as text.
void print_trace_summary(const TraceSummary& summary, std::FILE* out);

// An SVG heatmap: one row per step, one column per region, coloured by
// outcome (executed dark, skipped light).
std::string trace_heatmap_svg(const TraceSummary& summary);

}  // namespace synapse::exec

// Reading a region trace back (the JSONL of RegionTraceWriter) into run-level
// aggregates (SPEC §9): regions executed and skipped per step and token,
// weight bytes per token, the expert histogram per layer, draft acceptance,
// and the token x region activity that `synapse trace --heatmap` draws.
#pragma once

#include <cstdint>
#include <cstdio>
#include <istream>
#include <map>
#include <string>
#include <vector>

#include "exec/region_trace.h"
#include "memory/expert_cache_sim.h"

namespace synapse::exec {

struct TraceStep {
  int rank = 0;  // the pipeline rank that ran it
  uint64_t step = 0;
  int64_t position = 0;  // of the step's first token
  int64_t tokens = 0;    // the trace's "tokens", else the distance to the next step's position
  uint32_t executed = 0;
  uint32_t skipped = 0;  // Skipped, Bypassed and Absent
  uint64_t weight_bytes = 0;
  // Paged weights: bytes loaded from disk for the step, of those loaded
  // ahead by prefetch, and the most resident at once.
  uint64_t loaded_bytes = 0;
  uint64_t prefetched_bytes = 0;
  uint64_t peak_resident_bytes = 0;
  // Outcome per region id: 'E'xecuted, 'S'kipped, 'B'ypassed, 'A'bsent, '?' not traced.
  std::string activity;
};

// Which expert an Expert region runs.
struct ExpertRegion {
  uint32_t layer = 0;
  uint32_t expert = 0;
};

// A pipeline rank's share of the run.
struct RankTotals {
  uint64_t steps = 0;
  int64_t region_ns = 0;  // in its regions
};

// The frames of one hop between pipeline ranks (from, to).
struct HopTotals {
  uint64_t frames = 0;
  uint64_t bytes = 0;
  std::vector<int64_t> latency_ns;  // per frame
  int64_t wait_ns = 0;              // the receiver's, in all
  int64_t round_trip_ns = 0;        // measured before the run (0: not)
};

struct TraceSummary {
  std::vector<TraceStep> steps;  // in the order they appear
  // Executions of each Expert region, by layer, then expert index.
  std::map<uint32_t, std::vector<uint64_t>> expert_histogram;
  uint32_t regions = 0;  // highest region id + 1
  // Every Expert region seen, executed or not, by region id.
  std::map<uint32_t, ExpertRegion> expert_regions;
  // Executed Expert regions whose weights were resident (a cache hit) or
  // had to be loaded; both 0 when nothing paged.
  uint64_t expert_hits = 0;
  uint64_t expert_loads = 0;
  // A speculative run's totals, summed over its "speculation" lines.
  SpeculationTotals speculation;
  // A pipelined run's, by rank and by hop.
  std::map<int, RankTotals> ranks;
  std::map<std::pair<int, int>, HopTotals> hops;
};

// Throws Error(InvalidValue) naming the line number for a line that is not
// a region event or a speculation record. A trace with several sessions is summarized as one.
TraceSummary summarize_trace(std::istream& in);
// The same over several traces, as one run (a pipelined run's ranks).
void add_trace(TraceSummary& summary, std::istream& in);

// The per-step table, per-token means, the expert histogram, and a
// pipelined run's time per rank and frames per hop, as text.
void print_trace_summary(const TraceSummary& summary, std::FILE* out);

// The routing of a summarized trace, for memory::simulate_expert_cache;
// throws Error(InvalidValue) if the trace has no Expert regions.
memory::RoutingTrace routing_trace(const TraceSummary& summary);

// An SVG heatmap: one row per step, one column per region, coloured by
// outcome (executed dark, skipped light).
std::string trace_heatmap_svg(const TraceSummary& summary);

}  // namespace synapse::exec

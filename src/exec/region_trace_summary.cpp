#include "exec/region_trace_summary.h"

#include <algorithm>
#include <cinttypes>
#include <tuple>
#include <utility>
#include <nlohmann/json.hpp>

#include "synapse/error.h"

namespace synapse::exec {
namespace {

using nlohmann::json;

char outcome_code(const std::string& outcome) {
  if (outcome == "Executed") return 'E';
  if (outcome == "Skipped") return 'S';
  if (outcome == "Bypassed") return 'B';
  if (outcome == "Absent") return 'A';
  return '?';
}

[[noreturn]] void bad_line(size_t line, const std::string& why) {
  throw Error(ErrorKind::InvalidValue, "trace line " + std::to_string(line) + ": " + why);
}

// Adds a speculation record's counts to the summary's.
void add_speculation(TraceSummary& summary, const json& record, size_t line) {
  SpeculationTotals& t = summary.speculation;
  for (auto [key, total] : {std::pair{"drafted", &t.drafted}, {"accepted", &t.accepted},
                            {"target_passes", &t.target_passes}, {"committed", &t.committed},
                            {"decode_ns", &t.decode_ns}}) {
    if (!record.contains(key)) bad_line(line, std::string("no \"") + key + "\"");
    *total += record[key].get<int64_t>();
  }
}

// Adds a pipeline hop's frame, or the hop's measured round trip.
void add_hop(TraceSummary& summary, const json& hop, size_t line) {
  for (const char* key : {"kind", "from", "to", "bytes", "latency_ns", "wait_ns"})
    if (!hop.contains(key)) bad_line(line, std::string("no \"") + key + "\"");
  HopTotals& totals = summary.hops[{hop["from"].get<int>(), hop["to"].get<int>()}];
  if (hop["kind"] == "link") {
    totals.round_trip_ns = hop["latency_ns"].get<int64_t>();
    return;
  }
  ++totals.frames;
  totals.bytes += hop["bytes"].get<uint64_t>();
  totals.latency_ns.push_back(hop["latency_ns"].get<int64_t>());
  totals.wait_ns += hop["wait_ns"].get<int64_t>();
}

// Adds one event to the summary; a new (rank, step, position) opens a step.
void add_event(TraceSummary& summary, const json& event, size_t line) {
  if (!event.is_object()) bad_line(line, "not a JSON object");
  if (event.contains("event")) {
    if (event["event"] == "hop") return add_hop(summary, event, line);
    if (event["event"] != "speculation") bad_line(line, "unknown event");
    return add_speculation(summary, event, line);
  }
  for (const char* key : {"step", "position", "region", "outcome", "kind", "weight_bytes_touched"})
    if (!event.contains(key)) bad_line(line, std::string("no \"") + key + "\"");
  const auto step = event["step"].get<uint64_t>();
  const auto position = event["position"].get<int64_t>();
  const auto region = event["region"].get<uint32_t>();
  const int rank = event.value("rank", 0);
  RankTotals& rank_totals = summary.ranks[rank];
  rank_totals.region_ns += event.value("duration_ns", int64_t{0});
  if (summary.steps.empty() || summary.steps.back().step != step || summary.steps.back().position != position ||
      summary.steps.back().rank != rank) {
    ++rank_totals.steps;
    TraceStep next;
    next.rank = rank;
    next.step = step;
    next.position = position;
    next.tokens = event.value("tokens", int64_t{0});  // 0: not traced
    summary.steps.push_back(std::move(next));
  }
  TraceStep& s = summary.steps.back();
  const char code = outcome_code(event["outcome"].get<std::string>());
  if (code == '?') bad_line(line, "unknown outcome");
  if (code == 'E') {
    ++s.executed;
  } else {
    ++s.skipped;
  }
  s.weight_bytes += event["weight_bytes_touched"].get<uint64_t>();
  const auto loaded = event.value("weight_bytes_loaded", uint64_t{0});
  s.loaded_bytes += loaded;
  s.prefetched_bytes += event.value("weight_bytes_prefetched", uint64_t{0});
  const auto resident = event.value("weight_bytes_resident", uint64_t{0});
  s.peak_resident_bytes = std::max(s.peak_resident_bytes, resident);
  if (s.activity.size() <= region) s.activity.resize(region + 1, '?');
  s.activity[region] = code;
  summary.regions = std::max(summary.regions, region + 1);
  if (event["kind"].get<std::string>() != "Expert") return;
  const ExpertRegion expert{event.value("layer", 0u), event.value("expert", 0u)};
  summary.expert_regions[region] = expert;
  if (code == 'E' && resident > 0) ++(loaded > 0 ? summary.expert_loads : summary.expert_hits);
  if (code == 'E') {
    std::vector<uint64_t>& counts = summary.expert_histogram[expert.layer];
    if (counts.size() <= expert.expert) counts.resize(expert.expert + 1, 0);
    ++counts[expert.expert];
  }
}

double median_ms(std::vector<int64_t> values) {
  if (values.empty()) return 0;
  const auto middle = values.begin() + static_cast<std::ptrdiff_t>(values.size() / 2);
  std::nth_element(values.begin(), middle, values.end());
  return static_cast<double>(*middle) / 1e6;
}

// Time per rank and frames per hop, for a pipelined run's traces.
void print_pipeline(const TraceSummary& summary, std::FILE* out) {
  for (const auto& [rank, totals] : summary.ranks)
    std::fprintf(out, "rank %d: %" PRIu64 " steps, %.1f ms in its regions\n", rank, totals.steps,
                 static_cast<double>(totals.region_ns) / 1e6);
  for (const auto& [hop, totals] : summary.hops) {
    std::fprintf(out, "hop %d->%d: %" PRIu64 " frames, %" PRIu64 " bytes, median latency %.3f ms, receiver waited %.1f ms",
                 hop.first, hop.second, totals.frames, totals.bytes, median_ms(totals.latency_ns),
                 static_cast<double>(totals.wait_ns) / 1e6);
    if (totals.round_trip_ns > 0)
      std::fprintf(out, ", link round trip %.3f ms", static_cast<double>(totals.round_trip_ns) / 1e6);
    std::fprintf(out, "\n");
  }
}

}  // namespace

TraceSummary summarize_trace(std::istream& in) {
  TraceSummary summary;
  add_trace(summary, in);
  return summary;
}

void add_trace(TraceSummary& summary, std::istream& in) {
  const size_t first_step = summary.steps.size();
  std::string text;
  size_t line = 0;
  while (std::getline(in, text)) {
    ++line;
    if (text.empty()) continue;
    try {
      add_event(summary, json::parse(text), line);
    } catch (const json::exception& e) {
      bad_line(line, e.what());
    }
  }
  // Without a "tokens" field a step spans the positions up to the next step
  // (the last one: one token).
  for (size_t i = first_step; i < summary.steps.size(); ++i) {
    TraceStep& s = summary.steps[i];
    if (s.tokens > 0) continue;
    const int64_t gap = i + 1 < summary.steps.size() ? summary.steps[i + 1].position - s.position : 1;
    s.tokens = gap > 0 ? gap : 1;
  }
  for (TraceStep& s : summary.steps) s.activity.resize(summary.regions, '?');
}

void print_trace_summary(const TraceSummary& summary, std::FILE* out) {
  const bool ranks = summary.ranks.size() > 1;
  const int first_rank = summary.ranks.empty() ? 0 : summary.ranks.begin()->first;
  if (ranks) std::fprintf(out, "%4s ", "rank");
  std::fprintf(out, "%6s %8s %6s %9s %8s %14s %14s\n", "step", "position", "tokens", "executed", "skipped",
               "weight_bytes", "bytes/token");
  int64_t tokens = 0;
  uint64_t executed = 0, skipped = 0, bytes = 0, loaded = 0, prefetched = 0, peak_resident = 0;
  for (const TraceStep& s : summary.steps) {
    loaded += s.loaded_bytes;
    prefetched += s.prefetched_bytes;
    peak_resident = std::max(peak_resident, s.peak_resident_bytes);
    if (ranks) std::fprintf(out, "%4d ", s.rank);
    std::fprintf(out, "%6" PRIu64 " %8" PRId64 " %6" PRId64 " %9u %8u %14" PRIu64 " %14" PRIu64 "\n", s.step,
                 s.position, s.tokens, s.executed, s.skipped, s.weight_bytes,
                 s.weight_bytes / static_cast<uint64_t>(std::max<int64_t>(s.tokens, 1)));
    if (s.rank == first_rank) tokens += s.tokens;  // every rank runs each token
    executed += s.executed;
    skipped += s.skipped;
    bytes += s.weight_bytes;
  }
  if (tokens > 0)
    std::fprintf(out, "steps %" PRIu64 ", tokens %" PRId64 ", regions %u: per token %.2f executed, %.2f skipped, %.0f bytes\n",
                 summary.ranks.empty() ? uint64_t{0} : summary.ranks.begin()->second.steps, tokens, summary.regions, static_cast<double>(executed) / tokens,
                 static_cast<double>(skipped) / tokens, static_cast<double>(bytes) / tokens);
  if (tokens > 0 && peak_resident > 0) {
    const uint64_t experts = summary.expert_hits + summary.expert_loads;
    std::fprintf(out,
                 "paging: %.0f bytes loaded per token (%.1f%% of them prefetched), peak resident weights %" PRIu64
                 " bytes",
                 static_cast<double>(loaded) / tokens, loaded ? 100.0 * static_cast<double>(prefetched) / loaded : 0.0,
                 peak_resident);
    if (experts > 0)
      std::fprintf(out, ", expert cache hit rate %.1f%% (%" PRIu64 " of %" PRIu64 ")",
                   100.0 * static_cast<double>(summary.expert_hits) / static_cast<double>(experts), summary.expert_hits,
                   experts);
    std::fprintf(out, "\n");
  }
  const SpeculationTotals& spec = summary.speculation;
  if (spec.target_passes > 0)
    std::fprintf(out,
                 "speculation: %" PRId64 " drafted, %" PRId64 " accepted (%.1f%%), %" PRId64
                 " target passes for %" PRId64 " tokens (%.2f per token), %.2f committed tokens/s\n",
                 spec.drafted, spec.accepted,
                 spec.drafted > 0 ? 100.0 * static_cast<double>(spec.accepted) / static_cast<double>(spec.drafted) : 0.0,
                 spec.target_passes, spec.committed,
                 spec.committed > 0 ? static_cast<double>(spec.target_passes) / static_cast<double>(spec.committed) : 0.0,
                 spec.decode_ns > 0 ? 1e9 * static_cast<double>(spec.committed) / static_cast<double>(spec.decode_ns) : 0.0);
  if (summary.ranks.size() > 1 || !summary.hops.empty()) print_pipeline(summary, out);
  if (summary.expert_histogram.empty()) return;
  std::fprintf(out, "expert executions per layer (expert: count)\n");
  for (const auto& [layer, counts] : summary.expert_histogram) {
    std::fprintf(out, "layer %u:", layer);
    for (size_t e = 0; e < counts.size(); ++e) std::fprintf(out, " %zu:%" PRIu64, e, counts[e]);
    std::fprintf(out, "\n");
  }
}

memory::RoutingTrace routing_trace(const TraceSummary& summary) {
  if (summary.expert_regions.empty())
    throw Error(ErrorKind::InvalidValue, "the trace has no Expert regions (not a mixture-of-experts run?)");
  // Expert regions in layer, then expert order.
  std::vector<std::tuple<uint32_t, uint32_t, uint32_t>> regions;  // layer, expert, region id
  memory::RoutingTrace trace;
  for (const auto& [region, e] : summary.expert_regions) {
    regions.emplace_back(e.layer, e.expert, region);
    if (trace.experts_per_layer.size() <= e.layer) trace.experts_per_layer.resize(e.layer + 1, 0);
    trace.experts_per_layer[e.layer] = std::max(trace.experts_per_layer[e.layer], e.expert + 1);
  }
  std::sort(regions.begin(), regions.end());
  for (const TraceStep& step : summary.steps) {
    std::vector<memory::ExpertUse>& uses = trace.steps.emplace_back();
    for (const auto& [layer, expert, region] : regions)
      if (region < step.activity.size() && step.activity[region] == 'E') uses.push_back({layer, expert});
  }
  return trace;
}

}  // namespace synapse::exec

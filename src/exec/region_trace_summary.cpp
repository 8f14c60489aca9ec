#include "exec/region_trace_summary.h"

#include <cinttypes>
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

// Adds one event to the summary; a new (step, position) pair opens a step.
void add_event(TraceSummary& summary, const json& event, size_t line) {
  if (!event.is_object()) bad_line(line, "not a JSON object");
  for (const char* key : {"step", "position", "region", "outcome", "kind", "weight_bytes_touched"})
    if (!event.contains(key)) bad_line(line, std::string("no \"") + key + "\"");
  const auto step = event["step"].get<uint64_t>();
  const auto position = event["position"].get<int64_t>();
  const auto region = event["region"].get<uint32_t>();
  if (summary.steps.empty() || summary.steps.back().step != step || summary.steps.back().position != position) {
    TraceStep next;
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
  if (s.activity.size() <= region) s.activity.resize(region + 1, '?');
  s.activity[region] = code;
  summary.regions = std::max(summary.regions, region + 1);
  if (code == 'E' && event["kind"].get<std::string>() == "Expert") {
    std::vector<uint64_t>& counts = summary.expert_histogram[event.value("layer", 0u)];
    const auto expert = event.value("expert", 0u);
    if (counts.size() <= expert) counts.resize(expert + 1, 0);
    ++counts[expert];
  }
}

}  // namespace

TraceSummary summarize_trace(std::istream& in) {
  TraceSummary summary;
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
  for (size_t i = 0; i < summary.steps.size(); ++i) {
    TraceStep& s = summary.steps[i];
    if (s.tokens > 0) continue;
    const int64_t gap = i + 1 < summary.steps.size() ? summary.steps[i + 1].position - s.position : 1;
    s.tokens = gap > 0 ? gap : 1;
  }
  for (TraceStep& s : summary.steps) s.activity.resize(summary.regions, '?');
  return summary;
}

void print_trace_summary(const TraceSummary& summary, std::FILE* out) {
  std::fprintf(out, "%6s %8s %6s %9s %8s %14s %14s\n", "step", "position", "tokens", "executed", "skipped",
               "weight_bytes", "bytes/token");
  int64_t tokens = 0;
  uint64_t executed = 0, skipped = 0, bytes = 0;
  for (const TraceStep& s : summary.steps) {
    std::fprintf(out, "%6" PRIu64 " %8" PRId64 " %6" PRId64 " %9u %8u %14" PRIu64 " %14" PRIu64 "\n", s.step,
                 s.position, s.tokens, s.executed, s.skipped, s.weight_bytes,
                 s.weight_bytes / static_cast<uint64_t>(std::max<int64_t>(s.tokens, 1)));
    tokens += s.tokens;
    executed += s.executed;
    skipped += s.skipped;
    bytes += s.weight_bytes;
  }
  if (tokens > 0)
    std::fprintf(out, "steps %zu, tokens %" PRId64 ", regions %u: per token %.2f executed, %.2f skipped, %.0f bytes\n",
                 summary.steps.size(), tokens, summary.regions, static_cast<double>(executed) / tokens,
                 static_cast<double>(skipped) / tokens, static_cast<double>(bytes) / tokens);
  if (summary.expert_histogram.empty()) return;
  std::fprintf(out, "expert executions per layer (expert: count)\n");
  for (const auto& [layer, counts] : summary.expert_histogram) {
    std::fprintf(out, "layer %u:", layer);
    for (size_t e = 0; e < counts.size(); ++e) std::fprintf(out, " %zu:%" PRIu64, e, counts[e]);
    std::fprintf(out, "\n");
  }
}

}  // namespace synapse::exec

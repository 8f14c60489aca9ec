// synapse trace FILE [--heatmap OUT.svg]: what a `synapse run --trace-regions`
// trace says about a run: regions executed and skipped per step and token,
// weight bytes per token, the expert histogram per layer; for a pipelined
// run (FILE and the FILE.rank<r> its other ranks wrote), time per rank and
// frames, bytes and latency per hop.
// synapse trace FILE --cache-sim SIZE[,SIZE...] [--policy lru,lfu]: instead,
// replays the trace's expert routing against expert caches of those sizes
// and prints hits and misses per eviction policy and for the optimal one.
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>

#include "cli/command.h"
#include "exec/region_trace_summary.h"
#include "memory/eviction_policy.h"
#include "memory/expert_cache_sim.h"
#include "synapse/error.h"

namespace synapse::cli {
namespace {

struct TraceFlags {
  std::string file;
  std::string heatmap;
  std::vector<std::string> cache_sizes;
  std::vector<std::string> policies{"lru", "lfu"};
  std::string scope = "layer";
};

// "0.3" or "30%": a fraction of each layer's experts; "16": a count.
memory::CacheSize parse_cache_size(const std::string& text) {
  memory::CacheSize size;
  const bool percent = !text.empty() && text.back() == '%';
  const std::string number = percent ? text.substr(0, text.size() - 1) : text;
  size_t used = 0;
  double value = 0;
  try {
    value = std::stod(number, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used == 0 || used != number.size() || !(value > 0))
    throw Error(ErrorKind::Usage, "--cache-sim: '" + text + "' is neither a fraction (0.3, 30%) nor a count (16)");
  const bool fraction = percent || number.find_first_of(".eE") != std::string::npos;
  if (fraction) {
    size.fraction = percent ? value / 100 : value;
    if (size.fraction > 1) throw Error(ErrorKind::Usage, "--cache-sim: '" + text + "' is more than all experts");
  } else {
    size.count = static_cast<uint32_t>(std::min(value, 4e9));
  }
  return size;
}

void print_cache_sim(const exec::TraceSummary& summary, const TraceFlags& f) {
  const memory::RoutingTrace routing = exec::routing_trace(summary);
  const memory::CacheScope scope =
      f.scope == "global" ? memory::CacheScope::Global : memory::CacheScope::PerLayer;
  std::vector<memory::CacheSize> sizes;
  for (const std::string& text : f.cache_sizes) sizes.push_back(parse_cache_size(text));
  std::vector<std::string> policies = f.policies;
  for (const std::string& policy : policies) memory::make_eviction_policy(policy, 0);  // unknown: fail first
  policies.push_back("optimal");
  std::printf("expert cache (%s), %zu steps\n", scope == memory::CacheScope::Global ? "one for all layers"
                                                                                   : "one per layer",
              routing.steps.size());
  std::printf("| %-8s | %-8s | %13s | %10s | %10s | %8s |\n", "size", "policy", "capacity", "hits", "misses",
              "hit rate");
  std::printf("| %-8s | %-8s | %13s | %10s | %10s | %8s |\n", "--------", "--------", "------------:",
              "---------:", "---------:", "-------:");
  for (size_t i = 0; i < sizes.size(); ++i) {
    const std::string& text = f.cache_sizes[i];
    for (const std::string& policy : policies) {
      const memory::CacheSimResult r = memory::simulate_expert_cache(routing, sizes[i], scope, policy);
      const std::string capacity = std::to_string(r.capacity) + "/" + std::to_string(r.experts);
      std::printf("| %-8s | %-8s | %13s | %10llu | %10llu | %7.2f%% |\n", text.c_str(), policy.c_str(),
                  capacity.c_str(), static_cast<unsigned long long>(r.hits),
                  static_cast<unsigned long long>(r.misses), 100 * r.hit_rate());
    }
  }
}

// The trace, and those the other ranks of a pipelined run wrote beside it.
exec::TraceSummary read_traces(const std::string& path) {
  exec::TraceSummary summary;
  for (int rank = 0;; ++rank) {
    const std::string file = exec::rank_trace_path(path, rank);
    std::ifstream in(file);
    if (!in && rank > 0) return summary;
    if (!in) throw Error(ErrorKind::Io, std::string("cannot open trace: ") + std::strerror(errno), Error::kNoOffset, file);
    exec::add_trace(summary, in);
  }
}

int trace(const TraceFlags& f) {
  const exec::TraceSummary summary = read_traces(f.file);
  if (!f.cache_sizes.empty()) {
    print_cache_sim(summary, f);
  } else {
    exec::print_trace_summary(summary, stdout);
  }
  if (!f.heatmap.empty()) {
    std::ofstream svg(f.heatmap, std::ios::binary);
    svg << exec::trace_heatmap_svg(summary);
    svg.close();
    if (!svg) throw Error(ErrorKind::Io, "cannot write the heatmap", Error::kNoOffset, f.heatmap);
  }
  return kExitOk;
}

Register trace_reg{{"trace", "Summarize a region trace (synapse run --trace-regions)",
                    [](CLI::App& app) -> std::function<int()> {
                      auto f = std::make_shared<TraceFlags>();
                      app.add_option("file", f->file, "the JSONL trace")->required()->check(CLI::ExistingFile);
                      app.add_option("--heatmap", f->heatmap, "also draw token x region activity as SVG");
                      app.add_option("--cache-sim", f->cache_sizes,
                                     "instead of the summary, replay the expert routing against caches holding "
                                     "these fractions (0.3, 30%) or counts (16) of each layer's experts")
                          ->delimiter(',');
                      app.add_option("--policy", f->policies, "eviction policies to compare (optimal is added)")
                          ->delimiter(',')
                          ->capture_default_str();
                      app.add_option("--cache-scope", f->scope, "one cache per layer, or one global cache")
                          ->check(CLI::IsMember({"layer", "global"}))
                          ->capture_default_str();
                      app.footer(
                          "\nExamples:\n"
                          "  synapse run -m model.gguf -n 32 --trace-regions trace.jsonl && synapse trace trace.jsonl\n"
                          "  synapse trace trace.jsonl --heatmap regions.svg\n"
                          "  synapse trace trace.jsonl --cache-sim 10%,25% --policy lru,lfu\n");
                      return [f] { return trace(*f); };
                    }}};

}  // namespace
}  // namespace synapse::cli

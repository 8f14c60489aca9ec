#include "cli/memory_flags.h"

#include <cstdio>
#include <memory>

#include <CLI/CLI.hpp>

#include "exec/memory_admission.h"
#include "kernels/cpu/core_count.h"
#include "memory/eviction_policy.h"
#include "memory/memory_budget.h"
#include "progress/progress.h"
#include "synapse/error.h"

namespace synapse::cli {
namespace {

Encoding kv_encoding(const std::string& name) {
  const std::optional<Encoding> encoding = exec::kv_encoding_from_name(name);
  if (!encoding) throw Error(ErrorKind::Usage, "--cache-type-k/v: '" + name + "' is not f16, q8_0 or f32");
  return *encoding;
}

}  // namespace

void add_memory_flags(CLI::App& app, MemoryFlags& flags) {
  app.add_option("--mem-budget", flags.budget,
                 "memory the session may use: bytes (2G, 512M) or a share of the model's weights (40%); "
                 "weights that do not fit are paged from the file");
  app.add_option("--cache-policy", flags.policy, "eviction policy for paged experts: lfu (default: decayed frequency) or lru (dense weights, read every token in one order, go most recently read first)");
  app.add_option("--prefetch", flags.prefetch, "regions loaded ahead of the running one when paging")
      ->check(CLI::Range(0, 64));
  app.add_flag("--no-direct-io", flags.no_direct_io, "read paged weights through the page cache (no O_DIRECT)");
  const auto kv_type = CLI::IsMember({"f16", "q8_0", "f32"});
  app.add_option("--cache-type-k", flags.cache_type_k, "KV cache type for keys: f16, q8_0 or f32")
      ->check(kv_type)
      ->capture_default_str();
  app.add_option("--cache-type-v", flags.cache_type_v, "KV cache type for values: f16, q8_0 or f32")
      ->check(kv_type)
      ->capture_default_str();
}

void apply_memory_flags(const MemoryFlags& flags, const Model& model, exec::SessionOptions& options) {
  using memory::make_eviction_policy;
  if (!flags.budget.empty()) {
    options.memory.budget = memory::parse_budget(flags.budget);
  } else {
    const uint64_t weights = exec::model_weight_bytes(model), limit = cpu::process_memory_limit();
    if (const std::optional<uint64_t> budget = memory::default_budget(weights, limit)) {
      options.memory.budget.bytes = *budget;
      std::fprintf(stderr, "memory: the weights (%s) do not fit in the %s this process may use: paging them under a "
                           "budget of %s (--mem-budget sets another)\n",
                   memory::format_bytes(weights).c_str(), memory::format_bytes(limit).c_str(),
                   memory::format_bytes(*budget).c_str());
    }
  }
  make_eviction_policy(flags.policy, 1);  // an unknown name is a usage error now, not when paging starts
  options.memory.residency.policy = flags.policy;
  options.memory.residency.direct_io = !flags.no_direct_io;
  options.memory.prefetch_depth = flags.prefetch;
  options.kv.k = kv_encoding(flags.cache_type_k);
  options.kv.v = kv_encoding(flags.cache_type_v);
  options.memory.residency.on_pinned_load = [progress = std::shared_ptr<Progress>()](uint64_t done,
                                                                                     uint64_t total) mutable {
    if (!progress) progress = std::make_shared<Progress>("loading pinned weights", total);
    progress->update(done);
  };
}

void print_memory_stats(const exec::Session& session, int64_t tokens) {
  const memory::WeightResidency* residency = session.residency();
  if (!residency || tokens < 1) return;
  const memory::ResidencyCounters c = residency->counters();
  const uint64_t uses = c.hits + c.misses;
  std::fprintf(stderr,
               "paging: %s loaded (%s per token), chunk hit rate %.1f%% (%llu of %llu), prefetch used %llu of %llu, "
               "peak resident weights %s\n",
               memory::format_bytes(c.bytes_loaded).c_str(),
               memory::format_bytes(c.bytes_loaded / static_cast<uint64_t>(tokens)).c_str(),
               uses ? 100.0 * static_cast<double>(c.hits) / static_cast<double>(uses) : 0.0,
               static_cast<unsigned long long>(c.hits), static_cast<unsigned long long>(uses),
               static_cast<unsigned long long>(c.prefetch_used), static_cast<unsigned long long>(c.prefetched),
               memory::format_bytes(c.peak_resident_bytes).c_str());
}

}  // namespace synapse::cli

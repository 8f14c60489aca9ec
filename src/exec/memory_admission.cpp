#include "exec/memory_admission.h"

#include <algorithm>

namespace synapse::exec {

uint64_t model_weight_bytes(const Model& model) {
  uint64_t bytes = 0;
  for (const ir::WeightDescriptor& d : model.graph.weights) bytes += d.length;
  return bytes;
}

MemoryAdmission admit_memory(const Model& model, const RegionScheduler& scheduler, const KvState& kv,
                             const MemoryOptions& options) {
  using memory::MemoryCategory;
  const uint64_t budget =
      options.budget.set() ? options.budget.resolve(model_weight_bytes(model)) : memory::MemoryLedger::kUnlimited;
  MemoryAdmission admission{memory::MemoryLedger(budget), {}};
  memory::MemoryLedger& ledger = admission.ledger;
  // Room for the KV pages a run can reach, held while the rest is planned:
  // pinned weights must leave it. Pages are charged as they are allocated.
  admission.kv_reachable = kv.bytes_for(options.kv_positions > 0 ? options.kv_positions : kv.max_ctx());
  ledger.reserve(MemoryCategory::Kv, admission.kv_reachable);
  ledger.reserve(MemoryCategory::Scratch, scheduler.scratch_bytes());
  ledger.reserve(MemoryCategory::Weights, scheduler.decoded_weight_bytes());
  // A table row read from the file when its slice is not resident.
  ledger.reserve(MemoryCategory::Staging, memory::widest_matrix_row(model.graph));
  memory::PlanOptions plan_options;
  plan_options.weight_budget = ledger.available();
  plan_options.slice_bytes = options.slice_bytes;
  plan_options.prefetch_depth = options.prefetch_depth;
  plan_options.unused_weights = scheduler.layer_drop().weights;
  admission.plan = memory::plan_residency(model.graph, plan_options);
  memory::ResidencyPlan& plan = admission.plan;
  ledger.release(MemoryCategory::Kv, admission.kv_reachable);
  if (!plan.paging) {
    ledger.reserve(MemoryCategory::Weights, plan.weight_bytes);
    return admission;
  }
  ledger.reserve(MemoryCategory::Weights, plan.pinned_bytes);
  // The pool also caches chunks in the KV's room until pages take it.
  plan.pool_bytes = ledger.available();
  ledger.reserve(admission.pool_category(), plan.pool_bytes);
  return admission;
}

std::string describe(const Model& model, const MemoryAdmission& admission) {
  using memory::MemoryCategory;
  const memory::MemoryLedger& ledger = admission.ledger;
  std::string text = "memory budget: ";
  text += ledger.budget() == memory::MemoryLedger::kUnlimited ? std::string("none")
                                                              : memory::format_bytes(ledger.budget());
  text += " (model weights " + memory::format_bytes(model_weight_bytes(model)) + ")\n";
  text += "  kv: pages as written, room left for " + memory::format_bytes(admission.kv_reachable) +
          " (the positions a run can reach)\n";
  for (MemoryCategory category : {MemoryCategory::Weights, MemoryCategory::Scratch, MemoryCategory::ExpertCache,
                                  MemoryCategory::Staging})
    if (ledger.reserved(category) > 0)
      text += std::string("  ") + memory::to_string(category) + ": " + memory::format_bytes(ledger.reserved(category)) +
              "\n";
  return text + memory::describe(model.graph, admission.plan);
}

}  // namespace synapse::exec

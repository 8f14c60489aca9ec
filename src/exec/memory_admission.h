// Admission of a session under a memory budget (SPEC §8): the ledger
// reserves the step's scratch, the decoded vectors and a staging row; what
// is left, less room for the KV pages of the positions a run is expected to
// reach, holds matrix weights, resident or paged as the residency plan
// decides. Everything is checked before any compute; a budget that cannot
// hold a category fails with Error(InsufficientMemory) naming it. KV pages
// are charged to the ledger as they are allocated (KvState) and released
// when freed. When weights page, the pool takes all the rest and is the
// ledger's elastic category (the session makes it so): until KV uses its
// room the pool caches chunks there, and KV growth evicts them.
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "exec/scheduler.h"
#include "memory/memory_budget.h"
#include "memory/residency_plan.h"
#include "memory/weight_residency.h"
#include "model/model.h"

namespace synapse::exec {

struct MemoryOptions {
  memory::BudgetSpec budget;  // unset: no limit, every weight resident
  memory::ResidencyOptions residency;
  int prefetch_depth = 2;  // regions loaded ahead of the one running
  uint64_t slice_bytes = uint64_t{16} << 20;
  // Positions the session is expected to reach (a prompt and the tokens to
  // generate): pinned weights leave room for their KV pages. 0: the whole
  // context.
  int64_t kv_positions = 0;
};

struct MemoryAdmission {
  memory::MemoryLedger ledger;
  memory::ResidencyPlan plan;
  uint64_t kv_reachable = 0;  // the KV pages of options.kv_positions, in bytes
  // The category the weight pool is reserved in (when plan.paging).
  memory::MemoryCategory pool_category() const {
    return plan.has_experts ? memory::MemoryCategory::ExpertCache : memory::MemoryCategory::Weights;
  }
};

MemoryAdmission admit_memory(const Model& model, const RegionScheduler& scheduler, const KvState& kv,
                             const MemoryOptions& options);

// The ledger and the plan, for `synapse run --plan`.
std::string describe(const Model& model, const MemoryAdmission& admission);

// Every weight's bytes in the model's files.
uint64_t model_weight_bytes(const Model& model);

}  // namespace synapse::exec

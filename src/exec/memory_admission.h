// Admission of a session under a memory budget (SPEC §8): the ledger
// reserves the KV pages of the positions a run is expected to reach, the
// step's scratch, the decoded vectors and a staging row; what is left holds
// matrix weights, resident or paged as the residency plan decides. Everything
// is checked before any compute; a budget that cannot hold a category fails
// with Error(InsufficientMemory) naming it. KV pages past the expected
// positions are charged to the ledger as they are allocated (KvState).
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
  // generate): their KV pages are reserved up front. 0: the whole context.
  int64_t kv_positions = 0;
};

struct MemoryAdmission {
  memory::MemoryLedger ledger;
  memory::ResidencyPlan plan;
};

MemoryAdmission admit_memory(const Model& model, const RegionScheduler& scheduler, const KvState& kv,
                             const MemoryOptions& options);

// The ledger and the plan, for `synapse run --plan`.
std::string describe(const Model& model, const MemoryAdmission& admission);

// Every weight's bytes in the model's files.
uint64_t model_weight_bytes(const Model& model);

}  // namespace synapse::exec

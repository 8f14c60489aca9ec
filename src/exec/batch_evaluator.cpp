#include "exec/batch_evaluator.h"

namespace synapse::exec {

uint64_t SessionEvaluator::kv_bytes() const { return session_.memory().ledger.reserved(memory::MemoryCategory::Kv); }

}  // namespace synapse::exec

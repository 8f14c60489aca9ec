#include "exec/region_decision.h"

#include <algorithm>

#include "ir/overloaded.h"

namespace synapse::exec {

bool region_selected(const ir::RegionActivation& activation, std::span<const TensorRef> values) {
  return std::visit(ir::Overloaded{
                        [](const ir::AlwaysActive&) { return true; },
                        [&](const ir::RouteSlot& route) {
                          const TensorRef& gates = values[route.router.index];
                          if (!gates.present) return false;
                          for (int64_t t = 0; t < gates.rows; ++t)
                            if (gates.data[t * gates.cols + route.slot] != 0.0f) return true;
                          return false;
                        },
                        [&](const ir::PolicyDecision& policy) {
                          const TensorRef& gate = values[policy.value.index];
                          return gate.present && std::any_of(gate.data, gate.data + gate.elements(),
                                                             [](float x) { return x != 0.0f; });
                        },
                    },
                    activation.decision);
}

}  // namespace synapse::exec

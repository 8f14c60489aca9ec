// Internal to the verifier: its phases, in the order verify() runs them (each
// assumes the earlier ones passed), and the one way they report a failure.
#pragma once

#include <optional>
#include <string>

#include "ir/verify.h"

namespace synapse::ir {

void verify_references_and_order(const Graph& graph);
void verify_operations(const Graph& graph);
void verify_regions(const Graph& graph, const ConsumerIndex& consumers);
void verify_activations(const Graph& graph, const ConsumerIndex& consumers, const VerifyOptions& options);

[[noreturn]] void fail(VerifyError error, std::string message, std::optional<NodeId> node = {},
                       std::optional<RegionId> region = {});

}  // namespace synapse::ir

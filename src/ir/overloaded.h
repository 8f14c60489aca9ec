// The usual visitor helper for std::visit over the IR's variants.
#pragma once

namespace synapse::ir {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};

}  // namespace synapse::ir

// The usual visitor helper for std::visit over the IR's variants.
#pragma once

namespace synapse::ir {

template <class... F>
struct Overloaded : F... {
  using F::operator()...;
};
// Spelled out for compilers without C++20 aggregate deduction (clang 14).
template <class... F>
Overloaded(F...) -> Overloaded<F...>;

}  // namespace synapse::ir

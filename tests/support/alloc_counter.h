// Counts the heap allocations a test makes on its own thread inside a scope:
//
//   AllocationCounter counter;
//   code_under_test();
//   EXPECT_EQ(counter.count(), 0u);
//
// The counting replacement of the global operator new is in alloc_counter.cpp
// (one per test binary); outside a live AllocationCounter it only forwards to
// malloc, so other tests are unaffected.
#pragma once

#include <cstddef>

namespace synapse::test {

namespace alloc_counter_detail {
inline thread_local bool counting = false;
inline thread_local std::size_t allocations = 0;
}  // namespace alloc_counter_detail

class AllocationCounter {
 public:
  AllocationCounter() {
    alloc_counter_detail::allocations = 0;
    alloc_counter_detail::counting = true;
  }
  ~AllocationCounter() { alloc_counter_detail::counting = false; }
  AllocationCounter(const AllocationCounter&) = delete;
  AllocationCounter& operator=(const AllocationCounter&) = delete;

  // Allocations so far in this scope on this thread.
  std::size_t count() const { return alloc_counter_detail::allocations; }
};

}  // namespace synapse::test

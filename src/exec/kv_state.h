// KV state (SPEC §7): one store per state slot, in fixed-size pages of
// positions allocated when first written, so a long maximum context costs
// only the pointer table until it is used.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "ir/graph.h"
#include "kernels/ref/attention.h"

namespace synapse::exec {

class KvState {
 public:
  static constexpr int64_t kDefaultPageRows = 256;

  KvState(const ir::Graph& graph, int64_t max_ctx, int64_t page_rows = kDefaultPageRows);

  // Stores row (the slot's width) at position, rounded to the slot's dtype
  // (F16/BF16 values round-trip as llama.cpp's cache would store them).
  // Throws Error(InvalidValue) for a position outside [0, max_ctx).
  void write(ir::SlotId slot, int64_t position, const float* row);
  // The view [0, count) of a slot, for attention; unwritten rows are holes.
  ref::StateRows rows(ir::SlotId slot, int64_t count) const;
  // Forgets every position >= length (pages stay allocated for reuse).
  void truncate(int64_t length);

  // What the state takes once all max_ctx positions are written.
  static uint64_t bytes_at_capacity(const ir::Graph& graph, int64_t max_ctx, int64_t page_rows = kDefaultPageRows);

  int64_t max_ctx() const { return max_ctx_; }
  int64_t page_rows() const { return page_rows_; }
  int64_t pages_allocated() const;
  uint64_t bytes_allocated() const;

 private:
  struct Slot {
    int64_t width = 0;
    ir::DType dtype = ir::DType::F32;
    std::vector<std::unique_ptr<float[]>> pages;
    std::vector<std::unique_ptr<uint8_t[]>> written;
    // Raw pointers of the two above (null until allocated): the view's tables.
    std::vector<const float*> page_table;
    std::vector<const uint8_t*> written_table;
  };

  int64_t max_ctx_;
  int64_t page_rows_;
  std::vector<Slot> slots_;
};

}  // namespace synapse::exec

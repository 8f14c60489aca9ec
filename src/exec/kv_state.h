// KV state (SPEC §7): one store per state slot, in fixed-size pages of
// positions allocated when first written, so a long maximum context costs
// only the pointer table until it is used. A fork shares its parent's
// pages; a page is copied the first time either writes into it while
// shared (copy-on-write), so sequences with a common prefix hold it once.
// Rows are stored in the session's encoding (KvLayout: F16 by default, Q8_0
// or F32), which attention reads directly. The encoding is a property of the session, not of the graph:
// a slot's declared dtype stays the logical type of its view (and part of
// the model's fingerprint) whatever the session stores.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "encoding/encoding.h"
#include "exec/kv_page.h"
#include "ir/graph.h"
#include "kernels/ref/attention.h"
#include "memory/memory_budget.h"

namespace synapse::exec {

struct KvLayout {
  static constexpr int64_t kDefaultPageRows = 256;
  Encoding k = Encoding::F16;  // slots attention reads as keys
  Encoding v = Encoding::F16;  // slots attention reads as values (others are stored as keys)
  int64_t page_rows = kDefaultPageRows;
};

// "f16", "q8_0" or "f32" (llama.cpp's --cache-type-k/v names); nullopt otherwise.
std::optional<Encoding> kv_encoding_from_name(const std::string& name);

class KvState {
 public:
  static constexpr int64_t kDefaultPageRows = KvLayout::kDefaultPageRows;

  // Pages hold min(layout.page_rows, max_ctx) rows. Throws
  // Error(InvalidValue) for an encoding other than F32, F16 and Q8_0, or
  // Q8_0 for a slot whose attention heads are not whole 32-element blocks.
  // unused_slots (by SlotId; empty: none) are slots no region writes, a
  // dropped layer's: bytes_for leaves them out.
  KvState(const ir::Graph& graph, int64_t max_ctx, KvLayout layout = {}, std::vector<bool> unused_slots = {});
  KvState(KvState&&) = default;
  KvState& operator=(KvState&&) = default;

  // A state with this one's rows, sharing its pages until either writes
  // into one of them; pages are charged to the same ledger.
  KvState fork() const;

  // Stores row (the slot's width) at position in the slot's encoding,
  // allocating its page on the first row written there (or copying it when
  // another state shares it). Throws Error(InvalidValue) for a position
  // outside [0, max_ctx), and
  // Error(InsufficientMemory) naming kv when a new page does not fit the
  // ledger (see charge_pages_to); the state is unchanged then.
  void write(ir::SlotId slot, int64_t position, const float* row);
  // The view [0, count) of a slot, for attention; unwritten rows are holes.
  ref::StateRows rows(ir::SlotId slot, int64_t count) const;
  // Forgets every position >= length. Pages holding none below it are
  // freed, and released from the ledger.
  void truncate(int64_t length);

  // From now on each page allocated is reserved in `ledger` (category kv)
  // first, and released when freed. Null: pages are not accounted.
  void charge_pages_to(memory::MemoryLedger* ledger) { ledger_ = ledger; }

  // The pages that hold positions [0, positions) of every used slot, in bytes.
  uint64_t bytes_for(int64_t positions) const;

  int64_t max_ctx() const { return max_ctx_; }
  int64_t page_rows() const { return page_rows_; }
  const KvLayout& layout() const { return layout_; }
  // The pages this state holds (shared ones too), and their bytes.
  int64_t pages_allocated() const;
  uint64_t bytes_allocated() const { return bytes_allocated_; }

 private:
  struct Slot {
    int64_t width = 0;
    Encoding encoding = Encoding::F16;
    uint64_t row_bytes = 0;
    uint64_t page_bytes = 0;
    std::vector<KvPage> pages;
    std::vector<uint64_t> written;  // bit_words_ per page: the rows written
    // Into the pages above (null until allocated): the view's tables.
    std::vector<const uint8_t*> page_table;
    std::vector<const uint64_t*> written_table;
  };

  // Copies share pages but not the tables into them: fork() mends those.
  KvState(const KvState&) = default;

  // A new page for `page` of slot (a copy of `from`'s rows when given).
  uint8_t* allocate_page(Slot& slot, size_t page, const uint8_t* from = nullptr);
  void free_page(Slot& slot, size_t page);

  int64_t max_ctx_;
  int64_t page_rows_;
  size_t bit_words_;  // per page
  KvLayout layout_;
  std::vector<bool> unused_slots_;
  std::vector<Slot> slots_;
  uint64_t bytes_allocated_ = 0;
  memory::MemoryLedger* ledger_ = nullptr;
};

}  // namespace synapse::exec

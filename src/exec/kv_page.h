// A KV page shared by the sequences that hold it (forks share their
// prefix). The count of holders lives in a header at the start of the
// mapping itself, so taking, sharing and dropping a page allocate nothing
// on the heap (a decode step allocates nothing, page crossings included).
// The last holder unmaps it and releases its bytes from the ledger it was
// charged to. Holders are counted without atomics: a page's sequences
// belong to one session, which one thread drives at a time.
#pragma once

#include <cstdint>

#include "memory/memory_budget.h"

namespace synapse::exec {

class KvPage {
 public:
  KvPage() = default;
  // A new zero-filled page of `bytes` (charged to `ledger` when not null).
  // Throws Error(InsufficientMemory) naming kv when it cannot be mapped or
  // the ledger cannot hold it.
  static KvPage map(uint64_t bytes, memory::MemoryLedger* ledger);

  KvPage(const KvPage& other);
  KvPage(KvPage&& other) noexcept;
  KvPage& operator=(KvPage other) noexcept;
  ~KvPage();

  uint8_t* data() const;
  // How many KvPage objects hold this page.
  int64_t holders() const;
  explicit operator bool() const { return header_ != nullptr; }
  void reset();

 private:
  struct Header;
  explicit KvPage(Header* header) : header_(header) {}
  Header* header_ = nullptr;
};

}  // namespace synapse::exec

#include "exec/kv_page.h"

#include <sys/mman.h>

#include <new>
#include <string>
#include <utility>

#include "synapse/error.h"

namespace synapse::exec {

struct alignas(64) KvPage::Header {
  int64_t holders = 1;
  uint64_t mapped = 0;  // the header included
  uint64_t bytes = 0;   // charged to the ledger
  memory::MemoryLedger* ledger = nullptr;
};

KvPage KvPage::map(uint64_t bytes, memory::MemoryLedger* ledger) {
  const uint64_t mapped = sizeof(Header) + bytes;
  // Mapped, not taken from the heap: a freed page goes back to the system
  // (and, through the ledger, to the weight cache). Unwritten rows take no
  // memory.
  void* memory = ::mmap(nullptr, mapped, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED)
    throw Error(ErrorKind::InsufficientMemory, "cannot map a KV page of " + std::to_string(bytes) + " bytes",
                Error::kNoOffset, "kv");
  try {
    if (ledger) ledger->reserve(memory::MemoryCategory::Kv, bytes);
  } catch (...) {
    ::munmap(memory, mapped);
    throw;
  }
  return KvPage(new (memory) Header{1, mapped, bytes, ledger});
}

KvPage::KvPage(const KvPage& other) : header_(other.header_) {
  if (header_) ++header_->holders;
}

KvPage::KvPage(KvPage&& other) noexcept : header_(std::exchange(other.header_, nullptr)) {}

KvPage& KvPage::operator=(KvPage other) noexcept {
  std::swap(header_, other.header_);
  return *this;
}

KvPage::~KvPage() { reset(); }

void KvPage::reset() {
  Header* header = std::exchange(header_, nullptr);
  if (!header || --header->holders > 0) return;
  memory::MemoryLedger* ledger = header->ledger;
  const uint64_t bytes = header->bytes;
  ::munmap(header, header->mapped);
  if (ledger) ledger->release(memory::MemoryCategory::Kv, bytes);
}

uint8_t* KvPage::data() const { return header_ ? reinterpret_cast<uint8_t*>(header_ + 1) : nullptr; }

int64_t KvPage::holders() const { return header_ ? header_->holders : 0; }

}  // namespace synapse::exec

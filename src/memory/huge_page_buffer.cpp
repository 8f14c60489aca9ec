#include "memory/huge_page_buffer.h"

#include <sys/mman.h>

#include <fstream>
#include <string>
#include <utility>

#include "memory/huge_page_scan.h"
#include "synapse/error.h"

namespace synapse::memory {

namespace {
constexpr uint64_t kWindow = HugePageScan::kWindowBytes;
}  // namespace

std::string transparent_huge_page_mode() {
  std::ifstream in("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string line;
  if (!std::getline(in, line)) return "unknown";
  const size_t open = line.find('['), close = line.find(']');
  if (open == std::string::npos || close == std::string::npos || close < open) return "unknown";
  return line.substr(open + 1, close - open - 1);
}

HugePageBuffer::HugePageBuffer(uint64_t bytes) {
  if (bytes > UINT64_MAX - 2 * kWindow)
    throw Error(ErrorKind::InsufficientMemory, "cannot map " + std::to_string(bytes) + " bytes");
  size_ = (bytes + kWindow - 1) / kWindow * kWindow;
  // One window more than asked, so the buffer can start on a window.
  mapped_ = size_ + kWindow;
  void* memory = ::mmap(nullptr, mapped_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (memory == MAP_FAILED)
    throw Error(ErrorKind::InsufficientMemory, "cannot map " + std::to_string(bytes) + " bytes");
  mapping_ = memory;
  data_ = reinterpret_cast<uint8_t*>((reinterpret_cast<uintptr_t>(memory) + kWindow - 1) & ~(kWindow - 1));
  // Advice only: without transparent huge pages the buffer stays in small
  // pages, which huge_share() reports.
  ::madvise(data_, size_, MADV_HUGEPAGE);
}

HugePageBuffer::~HugePageBuffer() { release(); }

HugePageBuffer::HugePageBuffer(HugePageBuffer&& other) noexcept { *this = std::move(other); }

HugePageBuffer& HugePageBuffer::operator=(HugePageBuffer&& other) noexcept {
  if (this != &other) {
    release();
    mapping_ = std::exchange(other.mapping_, nullptr);
    mapped_ = std::exchange(other.mapped_, 0);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void HugePageBuffer::release() {
  if (mapping_) ::munmap(mapping_, mapped_);
  mapping_ = nullptr;
}

double HugePageBuffer::huge_share() const {
  const HugePageScan scan;
  if (!scan.available() || size_ == 0) return -1;
  uint64_t small = 0;
  for (const auto& window : scan.small_windows({data_, size_})) small += window.size();
  return 1.0 - static_cast<double>(small) / static_cast<double>(size_);
}

}  // namespace synapse::memory

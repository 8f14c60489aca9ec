#include "exec/kv_state.h"

#include <algorithm>
#include <string>

#include "kernels/encoding/fp16.h"
#include "synapse/error.h"

namespace synapse::exec {
namespace {

float round_to(ir::DType dtype, float x) {
  switch (dtype) {
    case ir::DType::F16: return fp16_to_fp32(fp32_to_fp16(x));
    case ir::DType::BF16: return bf16_to_fp32(fp32_to_bf16(x));
    default: return x;
  }
}

}  // namespace

KvState::KvState(const ir::Graph& graph, int64_t max_ctx, int64_t page_rows)
    : max_ctx_(max_ctx), page_rows_(page_rows) {
  if (max_ctx <= 0 || page_rows <= 0)
    throw Error(ErrorKind::InvalidValue, "KV state needs max_ctx > 0 and page_rows > 0");
  const auto page_count = static_cast<size_t>((max_ctx + page_rows - 1) / page_rows);
  for (const ir::StateSlot& declared : graph.slots) {
    Slot slot;
    slot.width = declared.type.shape.back().size;
    slot.dtype = declared.type.dtype;
    slot.pages.resize(page_count);
    slot.written.resize(page_count);
    slot.page_table.assign(page_count, nullptr);
    slot.written_table.assign(page_count, nullptr);
    slots_.push_back(std::move(slot));
  }
}

void KvState::write(ir::SlotId id, int64_t position, const float* row) {
  if (position < 0 || position >= max_ctx_)
    throw Error(ErrorKind::InvalidValue,
                "position " + std::to_string(position) + " outside the context of " + std::to_string(max_ctx_));
  Slot& slot = slots_.at(id.index);
  const auto page = static_cast<size_t>(position / page_rows_);
  if (!slot.pages[page]) {
    slot.pages[page] = std::make_unique<float[]>(static_cast<size_t>(page_rows_ * slot.width));
    slot.written[page] = std::make_unique<uint8_t[]>(static_cast<size_t>(page_rows_));  // zeroed
    slot.page_table[page] = slot.pages[page].get();
    slot.written_table[page] = slot.written[page].get();
  }
  const int64_t in_page = position % page_rows_;
  float* dst = slot.pages[page].get() + in_page * slot.width;
  for (int64_t i = 0; i < slot.width; ++i) dst[i] = round_to(slot.dtype, row[i]);
  slot.written[page][in_page] = 1;
}

ref::StateRows KvState::rows(ir::SlotId id, int64_t count) const {
  const Slot& slot = slots_.at(id.index);
  return ref::StateRows{slot.page_table.data(), slot.written_table.data(), page_rows_, slot.width,
                        std::min(count, max_ctx_)};
}

void KvState::truncate(int64_t length) {
  for (Slot& slot : slots_)
    for (size_t page = 0; page < slot.written.size(); ++page) {
      if (!slot.written[page]) continue;
      const int64_t first = static_cast<int64_t>(page) * page_rows_;
      for (int64_t r = std::max<int64_t>(0, length - first); r < page_rows_; ++r) slot.written[page][r] = 0;
    }
}

int64_t KvState::pages_allocated() const {
  int64_t n = 0;
  for (const Slot& slot : slots_)
    n += std::count_if(slot.page_table.begin(), slot.page_table.end(), [](const float* p) { return p != nullptr; });
  return n;
}

uint64_t KvState::bytes_allocated() const {
  uint64_t bytes = 0;
  for (const Slot& slot : slots_)
    for (const float* page : slot.page_table)
      if (page) bytes += static_cast<uint64_t>(page_rows_) * (slot.width * sizeof(float) + 1);
  return bytes;
}

uint64_t KvState::bytes_at_capacity(const ir::Graph& graph, int64_t max_ctx, int64_t page_rows) {
  const auto rows = static_cast<uint64_t>((max_ctx + page_rows - 1) / page_rows * page_rows);
  uint64_t bytes = 0;
  for (const ir::StateSlot& slot : graph.slots)
    bytes += rows * (static_cast<uint64_t>(slot.type.shape.back().size) * sizeof(float) + 1);
  return bytes;
}

}  // namespace synapse::exec

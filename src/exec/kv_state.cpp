#include "exec/kv_state.h"

#include <algorithm>
#include <cstring>
#include <variant>

#include "kernels/cpu/kquant_encode.h"
#include "synapse/error.h"

namespace synapse::exec {
namespace {

// The slot a state view operand of a node reads (its StateAppend's).
ir::SlotId slot_read(const ir::Graph& graph, ir::ValueId view) {
  const auto* append = std::get_if<ir::StateAppend>(&graph.node(graph.value(view).producer).op);
  if (!append) throw Error(ErrorKind::InvalidValue, "an attention reads state not appended by the graph");
  return append->slot;
}

}  // namespace

std::optional<Encoding> kv_encoding_from_name(const std::string& name) {
  if (name == "f16") return Encoding::F16;
  if (name == "q8_0") return Encoding::Q8_0;
  if (name == "f32") return Encoding::F32;
  return std::nullopt;
}

KvState::KvState(const ir::Graph& graph, int64_t max_ctx, KvLayout layout, std::vector<bool> unused_slots)
    : max_ctx_(max_ctx),
      page_rows_(std::min(layout.page_rows, max_ctx)),
      bit_words_(static_cast<size_t>(page_rows_ + 63) / 64),
      layout_(layout),
      unused_slots_(std::move(unused_slots)) {
  if (max_ctx <= 0 || layout.page_rows <= 0)
    throw Error(ErrorKind::InvalidValue, "KV state needs max_ctx > 0 and page_rows > 0");
  for (Encoding e : {layout.k, layout.v})
    if (e != Encoding::F32 && e != Encoding::F16 && e != Encoding::Q8_0)
      throw Error(ErrorKind::InvalidValue, "the KV cache stores f32, f16 or q8_0, not " +
                                               std::string(encoding_info(e).name));
  std::vector<Encoding> encodings(graph.slots.size(), layout.k);
  std::vector<int64_t> head_dims(graph.slots.size(), 0);
  for (const ir::Node& node : graph.nodes)
    if (const auto* attention = std::get_if<ir::CausalAttention>(&node.op)) {
      for (size_t operand : {size_t{1}, size_t{2}}) head_dims[slot_read(graph, node.operands[operand]).index] = attention->head_dim;
      encodings[slot_read(graph, node.operands[2]).index] = layout.v;
    }
  const auto page_count = static_cast<size_t>((max_ctx + page_rows_ - 1) / page_rows_);
  for (size_t s = 0; s < graph.slots.size(); ++s) {
    Slot slot;
    slot.width = graph.slots[s].type.shape.back().size;
    slot.encoding = encodings[s];
    const EncodingInfo info = encoding_info(slot.encoding);
    if (slot.width % info.block_elems != 0 || head_dims[s] % info.block_elems != 0)
      throw Error(ErrorKind::InvalidValue, "a " + std::string(info.name) + " KV cache needs rows and heads of whole " +
                                               std::to_string(info.block_elems) + "-element blocks; slot " +
                                               graph.slots[s].name + " has width " + std::to_string(slot.width) +
                                               " and heads of " + std::to_string(head_dims[s]));
    slot.row_bytes = row_bytes(slot.encoding, static_cast<uint64_t>(slot.width));
    slot.page_bytes = static_cast<uint64_t>(page_rows_) * slot.row_bytes;
    slot.written.assign(page_count * bit_words_, 0);
    slot.pages.resize(page_count);
    slot.page_table.assign(page_count, nullptr);
    slot.written_table.assign(page_count, nullptr);
    slots_.push_back(std::move(slot));
  }
}

uint8_t* KvState::allocate_page(Slot& slot, size_t page, const uint8_t* from) {
  // The written bits are kept apart from the rows (in `written`).
  KvPage fresh = KvPage::map(slot.page_bytes, ledger_);
  uint8_t* data = fresh.data();
  if (from) std::memcpy(data, from, slot.page_bytes);
  if (!slot.pages[page]) bytes_allocated_ += slot.page_bytes;
  slot.pages[page] = std::move(fresh);
  slot.page_table[page] = data;
  slot.written_table[page] = slot.written.data() + page * bit_words_;
  return data;
}

KvState KvState::fork() const {
  KvState copy(*this);
  for (Slot& slot : copy.slots_)
    for (size_t page = 0; page < slot.pages.size(); ++page)
      if (slot.pages[page]) slot.written_table[page] = slot.written.data() + page * bit_words_;
  return copy;
}

void KvState::write(ir::SlotId id, int64_t position, const float* row) {
  if (position < 0 || position >= max_ctx_)
    throw Error(ErrorKind::InvalidValue,
                "position " + std::to_string(position) + " outside the context of " + std::to_string(max_ctx_));
  Slot& slot = slots_.at(id.index);
  const auto page = static_cast<size_t>(position / page_rows_);
  const KvPage& held = slot.pages[page];
  uint8_t* data = !held                  ? allocate_page(slot, page)
                  : held.holders() > 1 ? allocate_page(slot, page, held.data())
                                         : held.data();
  const auto in_page = static_cast<uint64_t>(position % page_rows_);
  cpu::encode_row(slot.encoding, row, data + in_page * slot.row_bytes, slot.width);
  slot.written[page * bit_words_ + in_page / 64] |= uint64_t{1} << (in_page % 64);
}

ref::StateRows KvState::rows(ir::SlotId id, int64_t count) const {
  const Slot& slot = slots_.at(id.index);
  return ref::StateRows{slot.page_table.data(), slot.written_table.data(), page_rows_, slot.width,
                        std::min(count, max_ctx_), slot.encoding, slot.row_bytes};
}

void KvState::truncate(int64_t length) {
  for (Slot& slot : slots_)
    for (size_t page = 0; page < slot.pages.size(); ++page) {
      if (!slot.pages[page]) continue;
      const int64_t first = static_cast<int64_t>(page) * page_rows_;
      uint64_t* bits = slot.written.data() + page * bit_words_;
      for (int64_t r = std::max<int64_t>(0, length - first); r < page_rows_; ++r)
        bits[r / 64] &= ~(uint64_t{1} << (r % 64));
      if (first >= length) free_page(slot, page);
    }
}

void KvState::free_page(Slot& slot, size_t page) {
  const uint64_t bytes = slot.page_bytes;
  slot.pages[page].reset();
  slot.page_table[page] = nullptr;
  slot.written_table[page] = nullptr;
  bytes_allocated_ -= bytes;
}

int64_t KvState::pages_allocated() const {
  int64_t n = 0;
  for (const Slot& slot : slots_)
    n += std::count_if(slot.page_table.begin(), slot.page_table.end(), [](const uint8_t* p) { return p != nullptr; });
  return n;
}

uint64_t KvState::bytes_for(int64_t positions) const {
  const int64_t pages = (std::clamp<int64_t>(positions, 0, max_ctx_) + page_rows_ - 1) / page_rows_;
  uint64_t bytes = 0;
  for (size_t s = 0; s < slots_.size(); ++s)
    if (unused_slots_.empty() || !unused_slots_[s])
      bytes += static_cast<uint64_t>(pages) * slots_[s].page_bytes;
  return bytes;
}

}  // namespace synapse::exec

#include "tokenizer/symbol_merger.h"

#include <algorithm>

#include "tokenizer/unicode_bytes.h"

namespace synapse {

std::vector<MergeSymbol> character_symbols(std::string_view text) {
  std::vector<MergeSymbol> symbols;
  for (size_t pos = 0; pos < text.size();) {
    const size_t len = std::max<size_t>(valid_utf8_sequence_at(text, pos), 1);
    const int index = static_cast<int>(symbols.size());
    symbols.push_back({pos, len, index - 1, -1});
    if (index > 0) symbols[static_cast<size_t>(index - 1)].next = index;
    pos += len;
  }
  return symbols;
}

}  // namespace synapse

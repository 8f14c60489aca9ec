#include "tokenizer/bpe_tokenizer.h"

#include "tokenizer/symbol_merger.h"
#include "tokenizer/unicode_bytes.h"

namespace synapse {

BpeTokenizer::BpeTokenizer(Vocabulary vocabulary)
    : Tokenizer(std::move(vocabulary)), pretokenizer_(vocab_.pretokenizer_patterns) {}

void BpeTokenizer::encode_text(std::string_view text, bool, std::vector<int32_t>& out) const {
  for (std::string_view word : pretokenizer_.split(text)) encode_word(word, out);
}

void BpeTokenizer::encode_word(std::string_view word, std::vector<int32_t>& out) const {
  const std::string mapped = bytes_to_unicode(word);
  if (vocab_.ignore_merges) {
    if (const auto id = vocab_.find(mapped)) {
      out.push_back(*id);
      return;
    }
  }
  const std::vector<MergeSymbol> symbols = merge_symbols(
      mapped, character_symbols(mapped), [&](std::string_view left, std::string_view right) {
        const std::optional<int32_t> rank = vocab_.merge_rank(left, right);
        return rank ? std::optional<double>(*rank) : std::nullopt;
      });
  for (int i = 0; i >= 0; i = symbols[static_cast<size_t>(i)].next) {
    const MergeSymbol& s = symbols[static_cast<size_t>(i)];
    const std::string_view piece = std::string_view(mapped).substr(s.offset, s.length);
    if (const auto id = vocab_.find(piece)) {
      out.push_back(*id);
      continue;
    }
    // Only a single mapped byte can be left unmerged; a vocabulary without
    // it (not a complete byte-level one) gives UNK, or nothing.
    if (vocab_.unk_id) out.push_back(*vocab_.unk_id);
  }
}

std::string BpeTokenizer::piece_bytes(int32_t id) const {
  const std::string& piece = vocab_.tokens[static_cast<size_t>(id)];
  // Added tokens hold their text as is, not byte-mapped.
  if (vocab_.type(id) == TokenType::UserDefined) return piece;
  return unicode_to_bytes(piece);
}

}  // namespace synapse

// SentencePiece BPE (Llama 2, stories260K): the text's spaces become "▁"
// (with a "▁" dummy prefix), characters merge pairwise by the score of the
// piece they make, and what is not in the vocabulary falls back to <0xNN>
// byte tokens (or UNK).
#pragma once

#include "tokenizer/tokenizer.h"

namespace synapse {

class SpmTokenizer final : public Tokenizer {
 public:
  explicit SpmTokenizer(Vocabulary vocabulary);

 protected:
  void encode_text(std::string_view text, bool after_special, std::vector<int32_t>& out) const override;
  std::string piece_bytes(int32_t id) const override;

 private:
  // Text after SentencePiece's whitespace rules: trimmed and collapsed when the
  // model says so, dummy prefix, spaces as "▁".
  std::string normalize(std::string_view text, bool after_special) const;
  // Pieces a merge may produce: SentencePiece never merges into control,
  // unknown, byte or unused pieces.
  std::optional<int32_t> mergeable_id(std::string_view piece) const;
  // A character missing from the vocabulary: its <0xNN> byte tokens, or UNK.
  void emit_bytes(std::string_view piece, std::vector<int32_t>& out) const;
};

}  // namespace synapse

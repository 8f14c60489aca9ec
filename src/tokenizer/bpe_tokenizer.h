// Byte-level BPE (GPT-2, Llama 3, Qwen 2/3): a regex splits the text into
// words, each word's bytes map to printable code points, and adjacent pieces
// merge in the order of the vocabulary's merge list.
#pragma once

#include "tokenizer/pretokenizer.h"
#include "tokenizer/tokenizer.h"

namespace synapse {

class BpeTokenizer final : public Tokenizer {
 public:
  explicit BpeTokenizer(Vocabulary vocabulary);

 protected:
  void encode_text(std::string_view text, bool after_special, std::vector<int32_t>& out) const override;
  std::string piece_bytes(int32_t id) const override;

 private:
  void encode_word(std::string_view word, std::vector<int32_t>& out) const;

  Pretokenizer pretokenizer_;
};

}  // namespace synapse

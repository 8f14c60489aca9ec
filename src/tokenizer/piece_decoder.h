// Token ids to text, from a GGUF vocabulary (tokenizer.ggml.tokens): the
// bytes of each piece, and a stream that never emits a partial UTF-8 code
// point. Handles SentencePiece pieces ("▁" for space, <0xNN> byte tokens) and
// GPT-2 byte-level BPE pieces (bytes mapped to printable code points).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "format/gguf.h"

namespace synapse {

class PieceDecoder {
 public:
  // Nullopt when the metadata has no vocabulary or one of an unknown model.
  static std::optional<PieceDecoder> from_metadata(const GgufMetadata& metadata);

  // The bytes of a token's piece; control tokens (BOS, EOS, ...) give "".
  // An id outside the vocabulary gives "".
  std::string piece(int32_t id) const;

 private:
  enum class Style { SentencePiece, ByteLevel };
  Style style_ = Style::SentencePiece;
  std::vector<std::string> bytes_;  // per token: its decoded bytes
};

// Holds back the bytes of an unfinished UTF-8 sequence until it completes.
class Utf8Stream {
 public:
  // Appends bytes; returns the text that is complete so far.
  std::string push(const std::string& bytes);
  // Whatever is left (an invalid tail is emitted as is).
  std::string flush();

 private:
  std::string pending_;
};

}  // namespace synapse

// A tokenizer vocabulary independent of the file it came from (GGUF
// tokenizer.ggml.* metadata, Hugging Face tokenizer.json, SentencePiece
// .model): token texts, scores and types, BPE merges, special ids and the
// rules of the model (dummy prefix, BOS, pre-tokenizer pattern).
#pragma once

#include <bitset>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace synapse {

// Same numbering as SentencePiece's piece type and GGUF tokenizer.ggml.token_type.
enum class TokenType : uint8_t {
  Normal = 1,
  Unknown = 2,
  Control = 3,      // BOS, EOS, <|im_start|>...: matched in text only when asked
  UserDefined = 4,  // added tokens: always matched in text as a whole
  Unused = 5,
  Byte = 6,  // <0xNN> byte-fallback token
};

enum class VocabularyKind {
  SentencePiece,  // SentencePiece BPE: merges by piece score, "▁" for space
  ByteLevelBpe,   // GPT-2 style: bytes mapped to code points, merges by rank
};

struct Vocabulary {
  VocabularyKind kind = VocabularyKind::SentencePiece;
  std::vector<std::string> tokens;  // the piece text, as stored in the vocabulary
  std::vector<float> scores;        // empty or one per token
  std::vector<TokenType> types;     // one per token
  // Byte-level BPE merges, in rank order: (left piece, right piece).
  std::vector<std::pair<std::string, std::string>> merges;

  std::optional<int32_t> bos_id, eos_id, unk_id;
  std::optional<int32_t> eot_id;  // end of turn, where the file names one (GGUF)
  bool add_bos = false;               // encode(add_special) prepends BOS
  bool add_dummy_prefix = false;      // SentencePiece: a space before the text
  bool remove_extra_whitespaces = false;  // SentencePiece: trim and collapse spaces
  bool ignore_merges = false;         // BPE: a word already in the vocabulary is one token
  bool normalize_nfc = false;         // NFC before the model (tokenizer.json's "NFC" normalizer)
  // BPE: PCRE2 patterns splitting the text into words; each in turn splits
  // the words the one before made.
  std::vector<std::string> pretokenizer_patterns;

  // Checks the arrays agree (lengths, known merge pieces, special ids in range)
  // and builds the lookup tables. Throws Error(InvalidValue) naming the problem.
  void finalize();

  int32_t size() const { return static_cast<int32_t>(tokens.size()); }
  bool contains(int32_t id) const { return id >= 0 && id < size(); }
  // The id of a piece, if the vocabulary has it.
  std::optional<int32_t> find(std::string_view piece) const;
  float score(int32_t id) const { return scores.empty() ? 0.0f : scores[static_cast<size_t>(id)]; }
  TokenType type(int32_t id) const { return types[static_cast<size_t>(id)]; }
  // Rank of the merge (left, right), if there is one; lower merges first.
  std::optional<int32_t> merge_rank(std::string_view left, std::string_view right) const;
  // Ids of the tokens matched as a whole in the text (Control and UserDefined).
  const std::vector<int32_t>& special_ids() const { return special_ids_; }
  // Whether some special token's text starts with `byte` (a quick filter).
  bool may_start_special(char byte) const { return special_first_bytes_[static_cast<uint8_t>(byte)]; }

 private:
  struct StringHash {
    using is_transparent = void;
    size_t operator()(std::string_view s) const { return std::hash<std::string_view>{}(s); }
  };
  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> id_of_;
  // Key: left + ' ' + right (pieces never contain a plain space in either
  // SentencePiece or byte-level vocabularies, so the key is unambiguous).
  std::unordered_map<std::string, int32_t, StringHash, std::equal_to<>> merge_rank_;
  std::vector<int32_t> special_ids_;  // longest text first
  std::bitset<256> special_first_bytes_;
};

}  // namespace synapse

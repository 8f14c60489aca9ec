// Text to token ids and back. A Tokenizer owns a Vocabulary and applies its
// model: SentencePiece BPE (Llama 2, stories260K) or byte-level BPE (GPT-2,
// Llama 3, Qwen 2/3).
//
// encode(): special tokens (Control, UserDefined) are cut out of the text
// first: UserDefined always, Control only with parse_special. The rest goes
// through the model. Input that is not valid UTF-8 never fails: SentencePiece
// sends each invalid byte through byte fallback (<0xNN>, or UNK without it),
// byte-level BPE makes each invalid byte a word of its own and maps it like any
// byte; either way decode() gives the bytes back. Where the vocabulary asks
// for NFC (Qwen's tokenizer.json), the text between special tokens is
// normalized first (invalid bytes pass through), so decode(encode(x)) is the
// NFC form of x. SentencePiece writes spaces as U+2581 "▁", so that character
// in the input decodes as a space.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/vocabulary.h"

namespace synapse {

class Tokenizer {
 public:
  explicit Tokenizer(Vocabulary vocabulary) : vocab_(std::move(vocabulary)) {}
  virtual ~Tokenizer() = default;

  // add_special: prepend BOS when the vocabulary asks for it.
  // parse_special: match Control tokens' text (e.g. "<|im_start|>") in `text`.
  std::vector<int32_t> encode(std::string_view text, bool add_special, bool parse_special) const;

  // The bytes of the tokens, joined. Control tokens give their text only with
  // render_special. SentencePiece drops the dummy-prefix space of the first
  // piece, so decode(encode(x)) == x up to the model's normalization.
  std::string decode(std::span<const int32_t> ids, bool render_special = false) const;

  // The bytes of one token (no dummy-prefix removal); "" for an unknown id.
  std::string token_to_piece(int32_t id, bool render_special = false) const;

  const Vocabulary& vocabulary() const { return vocab_; }

 protected:
  // Encodes text that holds no special token. `after_special` is true for the
  // first fragment and for one that follows a special token.
  virtual void encode_text(std::string_view text, bool after_special,
                           std::vector<int32_t>& out) const = 0;
  // The bytes of a Normal, Byte or UserDefined token.
  virtual std::string piece_bytes(int32_t id) const = 0;

  Vocabulary vocab_;
};

// Builds the tokenizer a vocabulary describes.
std::unique_ptr<Tokenizer> make_tokenizer(Vocabulary vocabulary);

// Loads a GGUF file (tokenizer.ggml.* metadata), a Hugging Face tokenizer.json
// or a SentencePiece .model, told apart by their content, or the tokenizer
// of a Hugging Face model folder (given as the folder or one of its
// .safetensors files: hf_tokenizer_file).
// Throws synapse::Error (Io, InvalidValue, MissingKey, Unsupported, ...).
std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path);

// The tokenizer file of a Hugging Face model folder (or of the folder of a
// .safetensors file): tokenizer.model (SentencePiece) when there is one, as
// llama.cpp's converter prefers it, else tokenizer.json. Throws
// Error(MissingKey) naming the folder when it has neither.
std::string hf_tokenizer_file(const std::string& model_path);

}  // namespace synapse

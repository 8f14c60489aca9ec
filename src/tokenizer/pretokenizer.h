// Splits text into words with PCRE2 patterns (UTF, Unicode properties, JIT),
// as Hugging Face's Split pre-tokenizer with "Isolated" behaviour: every match
// is a word, and so is any text between matches. With several patterns, each
// splits the words of the one before (llama.cpp's regex lists).
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace synapse {

class Pretokenizer {
 public:
  // Throws Error(InvalidValue) when a pattern does not compile or there is none.
  explicit Pretokenizer(const std::vector<std::string>& patterns);

  // Bytes that are not valid UTF-8 each become a word of their own; the
  // patterns run over the valid stretches between them.
  std::vector<std::string_view> split(std::string_view text) const;

 private:
  // Appends the words the `compiled` pattern splits valid UTF-8 `text` into.
  static void split_valid(const void* compiled, std::string_view text, std::vector<std::string_view>& words);

  std::vector<std::shared_ptr<void>> codes_;  // pcre2_code_8, freed with pcre2_code_free_8
};

}  // namespace synapse

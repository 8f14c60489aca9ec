#define PCRE2_CODE_UNIT_WIDTH 8
#include "tokenizer/pretokenizer.h"

#include <pcre2.h>

#include "synapse/error.h"
#include "tokenizer/unicode_bytes.h"

namespace synapse {

namespace {

std::shared_ptr<void> compile(const std::string& pattern) {
  int error = 0;
  PCRE2_SIZE error_offset = 0;
  pcre2_code* code = pcre2_compile(reinterpret_cast<PCRE2_SPTR>(pattern.data()), pattern.size(),
                                   PCRE2_UTF | PCRE2_UCP, &error, &error_offset, nullptr);
  if (code == nullptr) {
    PCRE2_UCHAR message[256];
    pcre2_get_error_message(error, message, sizeof message);
    throw Error(ErrorKind::InvalidValue,
                "pre-tokenizer pattern does not compile at " + std::to_string(error_offset) + ": " +
                    reinterpret_cast<const char*>(message));
  }
  // Without JIT (unsupported platform) pcre2_match interprets the pattern.
  pcre2_jit_compile(code, PCRE2_JIT_COMPLETE);
  return std::shared_ptr<void>(code, [](void* c) { pcre2_code_free(static_cast<pcre2_code*>(c)); });
}

}  // namespace

Pretokenizer::Pretokenizer(const std::vector<std::string>& patterns) {
  if (patterns.empty()) throw Error(ErrorKind::InvalidValue, "no pre-tokenizer pattern");
  for (const std::string& pattern : patterns) codes_.push_back(compile(pattern));
}

std::vector<std::string_view> Pretokenizer::split(std::string_view text) const {
  std::vector<std::string_view> words;
  size_t run_start = 0;
  for (size_t pos = 0; pos < text.size();) {
    const size_t len = valid_utf8_sequence_at(text, pos);
    if (len > 0) {
      pos += len;
      continue;
    }
    split_valid(codes_[0].get(), text.substr(run_start, pos - run_start), words);
    words.push_back(text.substr(pos, 1));
    run_start = ++pos;
  }
  split_valid(codes_[0].get(), text.substr(run_start), words);
  for (size_t i = 1; i < codes_.size(); ++i) {
    std::vector<std::string_view> finer;
    for (std::string_view word : words) {
      // An invalid byte stays a word of its own.
      if (word.size() == 1 && valid_utf8_sequence_at(word, 0) == 0) {
        finer.push_back(word);
      } else {
        split_valid(codes_[i].get(), word, finer);
      }
    }
    words = std::move(finer);
  }
  return words;
}

void Pretokenizer::split_valid(const void* compiled, std::string_view text, std::vector<std::string_view>& words) {
  if (text.empty()) return;
  const auto* code = static_cast<const pcre2_code*>(compiled);
  std::unique_ptr<pcre2_match_data, decltype(&pcre2_match_data_free)> match(
      pcre2_match_data_create_from_pattern(code, nullptr), &pcre2_match_data_free);
  const auto* subject = reinterpret_cast<PCRE2_SPTR>(text.data());
  size_t gap_start = 0;  // start of text not yet covered by a word
  size_t pos = 0;
  while (pos < text.size()) {
    // The caller checked the UTF-8 already.
    const int rc = pcre2_match(code, subject, text.size(), pos, PCRE2_NO_UTF_CHECK, match.get(), nullptr);
    if (rc < 0) break;  // no further match (or a matching limit): the rest is one word
    const PCRE2_SIZE* ovector = pcre2_get_ovector_pointer(match.get());
    const size_t begin = ovector[0], end = ovector[1];
    if (end == begin) {  // an empty match: step over one character
      if (begin >= text.size()) break;
      pos = begin + utf8_sequence_length(static_cast<unsigned char>(text[begin]));
      continue;
    }
    if (begin > gap_start) words.push_back(text.substr(gap_start, begin - gap_start));
    words.push_back(text.substr(begin, end - begin));
    gap_start = pos = end;
  }
  if (gap_start < text.size()) words.push_back(text.substr(gap_start));
}

}  // namespace synapse

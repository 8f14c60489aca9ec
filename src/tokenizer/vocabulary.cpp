#include "tokenizer/vocabulary.h"

#include <algorithm>

#include "synapse/error.h"

namespace synapse {

namespace {

[[noreturn]] void invalid(const std::string& message) {
  throw Error(ErrorKind::InvalidValue, "tokenizer vocabulary: " + message);
}

std::string merge_key(std::string_view left, std::string_view right) {
  std::string key;
  key.reserve(left.size() + right.size() + 1);
  key.append(left).append(1, ' ').append(right);
  return key;
}

}  // namespace

void Vocabulary::finalize() {
  if (tokens.empty()) invalid("no tokens");
  if (tokens.size() > static_cast<size_t>(INT32_MAX)) invalid("too many tokens");
  if (!scores.empty() && scores.size() != tokens.size()) {
    invalid(std::to_string(tokens.size()) + " tokens but " + std::to_string(scores.size()) +
            " scores");
  }
  if (types.empty()) types.assign(tokens.size(), TokenType::Normal);
  if (types.size() != tokens.size()) {
    invalid(std::to_string(tokens.size()) + " tokens but " + std::to_string(types.size()) +
            " token types");
  }
  for (const auto* special : {&bos_id, &eos_id, &unk_id, &eot_id}) {
    if (special->has_value() && !contains(**special)) {
      invalid("special token id " + std::to_string(**special) + " outside the vocabulary");
    }
  }

  id_of_.clear();
  id_of_.reserve(tokens.size());
  special_ids_.clear();
  special_first_bytes_.reset();
  for (int32_t id = 0; id < size(); ++id) {
    const std::string& text = tokens[static_cast<size_t>(id)];
    if (text.empty()) continue;  // a gap in the id space (HF added tokens)
    // Duplicates happen in real vocabularies; the first id wins, as in llama.cpp.
    id_of_.emplace(text, id);
    const TokenType t = type(id);
    if (t == TokenType::Control || t == TokenType::UserDefined) {
      special_ids_.push_back(id);
      special_first_bytes_.set(static_cast<uint8_t>(text[0]));
    }
  }
  std::stable_sort(special_ids_.begin(), special_ids_.end(), [&](int32_t a, int32_t b) {
    return tokens[static_cast<size_t>(a)].size() > tokens[static_cast<size_t>(b)].size();
  });

  merge_rank_.clear();
  merge_rank_.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [left, right] = merges[rank];
    for (const std::string* piece : {&left, &right}) {
      if (!find(*piece)) invalid("merge " + std::to_string(rank) + " names unknown token '" + *piece + "'");
    }
    if (!find(left + right)) {
      invalid("merge " + std::to_string(rank) + " makes unknown token '" + left + right + "'");
    }
    merge_rank_.emplace(merge_key(left, right), static_cast<int32_t>(rank));
  }
}

std::optional<int32_t> Vocabulary::find(std::string_view piece) const {
  const auto it = id_of_.find(piece);
  if (it == id_of_.end()) return std::nullopt;
  return it->second;
}

std::optional<int32_t> Vocabulary::merge_rank(std::string_view left, std::string_view right) const {
  const auto it = merge_rank_.find(merge_key(left, right));
  if (it == merge_rank_.end()) return std::nullopt;
  return it->second;
}

}  // namespace synapse

// String operations with Python's semantics on UTF-8 text: lengths, indexes
// and slices count code points; strip() knows Unicode whitespace. Case
// mapping covers ASCII letters only (chat templates apply it to role names).
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace synapse::chat::jinja {

// The text split into code points, each kept as its UTF-8 bytes (invalid
// bytes stand alone, so nothing is lost).
std::vector<std::string_view> code_points(std::string_view text);

// Python str.strip/lstrip/rstrip; `chars` replaces whitespace as the set.
std::string strip(std::string_view text, bool left, bool right, const std::optional<std::string>& chars = {});

std::string to_upper(std::string_view text);
std::string to_lower(std::string_view text);
std::string capitalize(std::string_view text);
// Python str.title(): a letter after a non-letter is upper-cased, others lower.
std::string title_case(std::string_view text);

// Python str.split: on runs of whitespace when sep is absent; at most
// max_split splits when max_split >= 0. Throws on an empty sep.
std::vector<std::string> split(std::string_view text, const std::optional<std::string>& sep, int64_t max_split);
// Python str.replace; count < 0 replaces all. Throws std::length_error
// rather than build a result longer than max_bytes.
std::string replace(std::string_view text, std::string_view from, std::string_view to, int64_t count,
                    size_t max_bytes);

}  // namespace synapse::chat::jinja

#include "chat/jinja_text.h"

#include <algorithm>
#include <cstdint>
#include <stdexcept>

namespace synapse::chat::jinja {
namespace {

size_t utf8_length(unsigned char lead) {
  if (lead < 0x80) return 1;
  if ((lead & 0xE0) == 0xC0) return 2;
  if ((lead & 0xF0) == 0xE0) return 3;
  if ((lead & 0xF8) == 0xF0) return 4;
  return 1;
}

// Python's str.isspace() set.
bool is_unicode_space(std::string_view cp) {
  static constexpr std::string_view kSpaces[] = {
      " ",  "\t", "\n", "\v", "\f", "\r", "\x1c", "\x1d", "\x1e", "\x1f", "\xc2\x85", "\xc2\xa0",
      "\xe1\x9a\x80", "\xe2\x80\x80", "\xe2\x80\x81", "\xe2\x80\x82", "\xe2\x80\x83", "\xe2\x80\x84",
      "\xe2\x80\x85", "\xe2\x80\x86", "\xe2\x80\x87", "\xe2\x80\x88", "\xe2\x80\x89", "\xe2\x80\x8a",
      "\xe2\x80\xa8", "\xe2\x80\xa9", "\xe2\x80\xaf", "\xe2\x81\x9f", "\xe3\x80\x80"};
  return std::find(std::begin(kSpaces), std::end(kSpaces), cp) != std::end(kSpaces);
}

bool is_ascii_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
char upper(char c) { return (c >= 'a' && c <= 'z') ? static_cast<char>(c - 32) : c; }
char lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c + 32) : c; }

}  // namespace

std::vector<std::string_view> code_points(std::string_view text) {
  std::vector<std::string_view> out;
  for (size_t i = 0; i < text.size();) {
    size_t n = utf8_length(static_cast<unsigned char>(text[i]));
    bool valid = i + n <= text.size();
    for (size_t k = 1; valid && k < n; ++k) valid = (static_cast<unsigned char>(text[i + k]) & 0xC0) == 0x80;
    if (!valid) n = 1;
    out.push_back(text.substr(i, n));
    i += n;
  }
  return out;
}

std::string strip(std::string_view text, bool left, bool right, const std::optional<std::string>& chars) {
  const std::vector<std::string_view> cps = code_points(text);
  std::vector<std::string_view> set;
  if (chars) set = code_points(*chars);
  auto strippable = [&](std::string_view cp) {
    return chars ? std::find(set.begin(), set.end(), cp) != set.end() : is_unicode_space(cp);
  };
  size_t begin = 0;
  size_t end = cps.size();
  if (left) {
    while (begin < end && strippable(cps[begin])) ++begin;
  }
  if (right) {
    while (end > begin && strippable(cps[end - 1])) --end;
  }
  if (begin == end) return "";
  const char* first = cps[begin].data();
  const char* last = cps[end - 1].data() + cps[end - 1].size();
  return std::string(first, last);
}

std::string to_upper(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), upper);
  return out;
}

std::string to_lower(std::string_view text) {
  std::string out(text);
  std::transform(out.begin(), out.end(), out.begin(), lower);
  return out;
}

std::string capitalize(std::string_view text) {
  std::string out = to_lower(text);
  if (!out.empty()) out[0] = upper(out[0]);
  return out;
}

std::string title_case(std::string_view text) {
  std::string out(text);
  bool previous_is_letter = false;
  for (char& c : out) {
    const bool letter = is_ascii_letter(c);
    if (letter) c = previous_is_letter ? lower(c) : upper(c);
    // Non-ASCII bytes count as letters so "éa" does not capitalize the "a".
    previous_is_letter = letter || (static_cast<unsigned char>(c) >= 0x80);
  }
  return out;
}

std::vector<std::string> split(std::string_view text, const std::optional<std::string>& sep, int64_t max_split) {
  std::vector<std::string> out;
  if (sep) {
    if (sep->empty()) throw std::invalid_argument("empty separator");
    size_t start = 0;
    while (max_split < 0 || static_cast<int64_t>(out.size()) < max_split) {
      const size_t at = text.find(*sep, start);
      if (at == std::string_view::npos) break;
      out.emplace_back(text.substr(start, at - start));
      start = at + sep->size();
    }
    out.emplace_back(text.substr(start));
    return out;
  }
  const std::vector<std::string_view> cps = code_points(text);
  size_t i = 0;
  while (true) {
    while (i < cps.size() && is_unicode_space(cps[i])) ++i;
    if (i == cps.size()) break;
    if (max_split >= 0 && static_cast<int64_t>(out.size()) == max_split) {
      // The rest, minus trailing whitespace, is the last piece.
      out.push_back(strip(std::string_view(cps[i].data(), text.data() + text.size() - cps[i].data()), false, true));
      break;
    }
    std::string word;
    while (i < cps.size() && !is_unicode_space(cps[i])) word += cps[i++];
    out.push_back(std::move(word));
  }
  return out;
}

std::string replace(std::string_view text, std::string_view from, std::string_view to, int64_t count,
                    size_t max_bytes) {
  // Count the replacements first so a blow-up is refused before it is built.
  uint64_t occurrences = from.empty() ? code_points(text).size() + 1 : 0;
  for (size_t at = from.empty() ? std::string_view::npos : text.find(from); at != std::string_view::npos;
       at = text.find(from, at + from.size())) {
    ++occurrences;
  }
  if (count >= 0) occurrences = std::min<uint64_t>(occurrences, static_cast<uint64_t>(count));
  if (text.size() + occurrences * to.size() > max_bytes + occurrences * from.size()) {
    throw std::length_error("replace result too large");
  }
  std::string out;
  if (from.empty()) {
    // Python inserts `to` between code points (and at both ends).
    const std::vector<std::string_view> cps = code_points(text);
    int64_t done = 0;
    for (size_t i = 0; i <= cps.size(); ++i) {
      if (count < 0 || done < count) {
        out += to;
        ++done;
      }
      if (i < cps.size()) out += cps[i];
    }
    return out;
  }
  size_t start = 0;
  int64_t done = 0;
  while (count < 0 || done < count) {
    const size_t at = text.find(from, start);
    if (at == std::string_view::npos) break;
    out.append(text.substr(start, at - start));
    out.append(to);
    start = at + from.size();
    ++done;
  }
  out.append(text.substr(start));
  return out;
}

}  // namespace synapse::chat::jinja

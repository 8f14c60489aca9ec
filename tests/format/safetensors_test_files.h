// Building safetensors bytes for the reader's tests: a length field, a
// JSON header of tensor entries, data; and the checks of a refusal.
#pragma once

#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "format/safetensors.h"
#include "synapse/error.h"

namespace synapse::test {

inline std::vector<uint8_t> le64(uint64_t v) {
  std::vector<uint8_t> b(8);
  for (int i = 0; i < 8; ++i) b[static_cast<size_t>(i)] = static_cast<uint8_t>(v >> (8 * i));
  return b;
}

// A file whose length field says `length`, then `header`, then `data_bytes`
// bytes of data.
inline std::vector<uint8_t> file_with(uint64_t length, std::string_view header, size_t data_bytes = 0) {
  // Sized first, then filled: GCC 12 misreads an insert after le64's 8 bytes (-Warray-bounds).
  std::vector<uint8_t> b(8 + header.size() + data_bytes);
  for (int i = 0; i < 8; ++i) b[static_cast<size_t>(i)] = static_cast<uint8_t>(length >> (8 * i));
  if (!header.empty()) std::memcpy(b.data() + 8, header.data(), header.size());
  for (size_t i = 0; i < data_bytes; ++i) b[8 + header.size() + i] = static_cast<uint8_t>(i);
  return b;
}
inline std::vector<uint8_t> file_of(std::string_view header, size_t data_bytes = 0) {
  return file_with(header.size(), header, data_bytes);
}

// One tensor's JSON entry.
inline std::string tensor(const std::string& name, const std::string& dtype, const std::string& shape,
                   const std::string& offsets) {
  std::string s = "\"";
  s.append(name).append("\":{\"dtype\":\"").append(dtype).append("\",\"shape\":").append(shape);
  return s.append(",\"data_offsets\":").append(offsets).append("}");
}

// A JSON object of entries (built with append: GCC 12 misreads
// `"{" + std::string` as an overlapping copy, -Wrestrict).
inline std::string object(const std::vector<std::string>& entries) {
  std::string s = "{";
  for (size_t i = 0; i < entries.size(); ++i) s.append(i ? "," : "").append(entries[i]);
  return s.append("}");
}

inline ::testing::AssertionResult refused_as(std::span<const uint8_t> bytes, ErrorKind kind,
                                      const std::string& subject = {}) {
  try {
    parse_safetensors(bytes);
  } catch (const Error& e) {
    if (e.kind() != kind) return ::testing::AssertionFailure() << "expected " << to_string(kind) << ", got " << e.what();
    if (!subject.empty() && e.subject() != subject)
      return ::testing::AssertionFailure() << "expected subject " << subject << ", got " << e.what();
    return ::testing::AssertionSuccess() << e.what();
  } catch (const std::exception& e) {
    return ::testing::AssertionFailure() << "untyped exception: " << e.what();
  }
  return ::testing::AssertionFailure() << "parsed without error";
}

inline std::vector<uint8_t> read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), {}};
}

inline std::span<const uint8_t> as_bytes(const std::vector<float>& v) {
  return {reinterpret_cast<const uint8_t*>(v.data()), v.size() * sizeof(float)};
}

}  // namespace synapse::test

// The GGUF data model shared by the reader and the writer: typed metadata
// values (arrays may nest) and tensor infos.
#pragma once

#include <cstdint>
#include <cstring>
#include <memory>
#include <type_traits>
#include <map>
#include <string>
#include <variant>
#include <vector>

#include "encoding/encoding.h"

namespace synapse {

// Value type ids as stored in the file.
enum class GgufType : uint32_t {
  Uint8 = 0,
  Int8 = 1,
  Uint16 = 2,
  Int16 = 3,
  Uint32 = 4,
  Int32 = 5,
  Float32 = 6,
  Bool = 7,
  String = 8,
  Array = 9,
  Uint64 = 10,
  Int64 = 11,
  Float64 = 12,
};

const char* to_string(GgufType t);

struct GgufArray;

// Byte size of a fixed-size scalar type (0 for String and Array).
size_t gguf_scalar_size(GgufType t);

// One metadata value. The variant's index equals the GGUF type id, so a value
// keeps its exact stored type and round-trips byte for byte.
struct GgufValue {
  using Storage = std::variant<uint8_t, int8_t, uint16_t, int16_t, uint32_t, int32_t, float, bool,
                               std::string, std::shared_ptr<GgufArray>, uint64_t, int64_t, double>;
  Storage v;

  GgufValue() = default;
  template <typename T>
    requires(!std::is_same_v<std::decay_t<T>, const char*> && !std::is_same_v<std::decay_t<T>, GgufArray>)
  GgufValue(T x) : v(std::move(x)) {}
  GgufValue(const char* s) : v(std::string(s)) {}
  GgufValue(GgufArray a);

  GgufType type() const { return static_cast<GgufType>(v.index()); }
  bool is_integer() const;
  bool is_float() const;
  // Integer value of any integer type (bool excluded); throws InvalidType otherwise.
  int64_t as_int() const;
  // Numeric value of any integer or float type; throws InvalidType otherwise.
  double as_double() const;
  const std::string& as_string() const;  // throws InvalidType unless String
  const GgufArray& as_array() const;     // throws InvalidType unless Array
  bool as_bool() const;                  // throws InvalidType unless Bool
};

// A typed array. Fixed-size scalars are kept packed as stored (little-endian)
// so a huge array costs its file size in memory, not a variant per element.
struct GgufArray {
  GgufType elem = GgufType::Uint8;
  std::vector<uint8_t> raw;           // elem is a fixed-size scalar
  std::vector<std::string> strings;   // elem == String
  std::vector<GgufArray> arrays;      // elem == Array (nested)

  size_t size() const;
  // Element i as a number (integer, bool or float elements); throws InvalidType.
  int64_t int_at(size_t i) const;
  double double_at(size_t i) const;
  const std::string& string_at(size_t i) const;  // throws InvalidType unless String

  static GgufArray of_strings(std::vector<std::string> items);
  template <typename T>
  static GgufArray of(const std::vector<T>& items);  // T: a fixed-size scalar type
};

template <typename T>
GgufArray GgufArray::of(const std::vector<T>& items) {
  GgufArray a;
  a.elem = GgufValue(T{}).type();
  a.raw.resize(items.size() * sizeof(T));
  if (!items.empty()) std::memcpy(a.raw.data(), items.data(), a.raw.size());
  return a;
}

inline constexpr uint32_t kGgufMagic = 0x46554747;  // "GGUF" little-endian
inline constexpr uint32_t kGgufDefaultAlignment = 32;
inline constexpr int kGgufMaxDims = 4;

struct GgufTensorInfo {
  std::string name;
  std::vector<uint64_t> dims;  // ne[0] first: the contiguous (row) dimension
  Encoding encoding = Encoding::F32;  // a known ggml type (the reader rejects others)
  uint64_t offset = 0;         // relative to the start of the data section
  uint64_t n_bytes = 0;        // derived from dims and encoding
  uint64_t n_elements() const;
};

// Ordered metadata: order is preserved for byte-exact round trips.
class GgufMetadata {
 public:
  // Adds or replaces a key (replacing keeps its position).
  void set(const std::string& key, GgufValue value);
  const GgufValue* find(const std::string& key) const;
  bool contains(const std::string& key) const { return find(key) != nullptr; }
  bool erase(const std::string& key);
  size_t size() const { return entries_.size(); }
  const std::vector<std::pair<std::string, GgufValue>>& entries() const { return entries_; }

  // Typed getters: throw MissingKey when absent, InvalidType on a wrong type.
  int64_t get_int(const std::string& key) const;
  double get_double(const std::string& key) const;
  const std::string& get_string(const std::string& key) const;
  const GgufArray& get_array(const std::string& key) const;
  bool get_bool(const std::string& key) const;

 private:
  std::vector<std::pair<std::string, GgufValue>> entries_;
  std::map<std::string, size_t> index_;
};

}  // namespace synapse

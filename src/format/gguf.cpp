#include "format/gguf.h"

#include "synapse/error.h"

namespace synapse {

const char* to_string(GgufType t) {
  switch (t) {
    case GgufType::Uint8: return "uint8";
    case GgufType::Int8: return "int8";
    case GgufType::Uint16: return "uint16";
    case GgufType::Int16: return "int16";
    case GgufType::Uint32: return "uint32";
    case GgufType::Int32: return "int32";
    case GgufType::Float32: return "float32";
    case GgufType::Bool: return "bool";
    case GgufType::String: return "string";
    case GgufType::Array: return "array";
    case GgufType::Uint64: return "uint64";
    case GgufType::Int64: return "int64";
    case GgufType::Float64: return "float64";
  }
  return "unknown";
}

size_t gguf_scalar_size(GgufType t) {
  switch (t) {
    case GgufType::Uint8: case GgufType::Int8: case GgufType::Bool: return 1;
    case GgufType::Uint16: case GgufType::Int16: return 2;
    case GgufType::Uint32: case GgufType::Int32: case GgufType::Float32: return 4;
    case GgufType::Uint64: case GgufType::Int64: case GgufType::Float64: return 8;
    case GgufType::String: case GgufType::Array: return 0;
  }
  return 0;
}

GgufValue::GgufValue(GgufArray a) : v(std::make_shared<GgufArray>(std::move(a))) {}

static Error wrong_type(GgufType have, const char* want) {
  return Error(ErrorKind::InvalidType,
               std::string("metadata value is ") + to_string(have) + ", expected " + want);
}

bool GgufValue::is_integer() const {
  switch (type()) {
    case GgufType::Uint8: case GgufType::Int8: case GgufType::Uint16: case GgufType::Int16:
    case GgufType::Uint32: case GgufType::Int32: case GgufType::Uint64: case GgufType::Int64:
      return true;
    default: return false;
  }
}

bool GgufValue::is_float() const {
  return type() == GgufType::Float32 || type() == GgufType::Float64;
}

int64_t GgufValue::as_int() const {
  if (!is_integer()) throw wrong_type(type(), "an integer");
  return std::visit(
      [](const auto& x) -> int64_t {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_integral_v<T>) {
          if constexpr (std::is_same_v<T, uint64_t>) {
            if (x > static_cast<uint64_t>(INT64_MAX))
              throw Error(ErrorKind::Overflow, "uint64 metadata value does not fit in int64");
          }
          return static_cast<int64_t>(x);
        } else {
          return 0;
        }
      },
      v);
}

double GgufValue::as_double() const {
  if (type() == GgufType::Float32) return std::get<float>(v);
  if (type() == GgufType::Float64) return std::get<double>(v);
  if (is_integer()) return static_cast<double>(as_int());
  throw wrong_type(type(), "a number");
}

const std::string& GgufValue::as_string() const {
  if (type() != GgufType::String) throw wrong_type(type(), "a string");
  return std::get<std::string>(v);
}

const GgufArray& GgufValue::as_array() const {
  if (type() != GgufType::Array) throw wrong_type(type(), "an array");
  return *std::get<std::shared_ptr<GgufArray>>(v);
}

bool GgufValue::as_bool() const {
  if (type() != GgufType::Bool) throw wrong_type(type(), "a bool");
  return std::get<bool>(v);
}

size_t GgufArray::size() const {
  if (elem == GgufType::String) return strings.size();
  if (elem == GgufType::Array) return arrays.size();
  size_t w = gguf_scalar_size(elem);
  return w ? raw.size() / w : 0;
}

template <typename T>
static T load(const uint8_t* p) {
  T x;
  std::memcpy(&x, p, sizeof x);
  return x;
}

double GgufArray::double_at(size_t i) const {
  if (i >= size()) throw Error(ErrorKind::OutOfBounds, "array index out of range");
  const uint8_t* p = raw.data() + i * gguf_scalar_size(elem);
  switch (elem) {
    case GgufType::Float32: return load<float>(p);
    case GgufType::Float64: return load<double>(p);
    default: return static_cast<double>(int_at(i));
  }
}

int64_t GgufArray::int_at(size_t i) const {
  if (i >= size()) throw Error(ErrorKind::OutOfBounds, "array index out of range");
  const uint8_t* p = raw.data() + i * gguf_scalar_size(elem);
  switch (elem) {
    case GgufType::Uint8: return load<uint8_t>(p);
    case GgufType::Int8: return load<int8_t>(p);
    case GgufType::Bool: return load<uint8_t>(p) != 0;
    case GgufType::Uint16: return load<uint16_t>(p);
    case GgufType::Int16: return load<int16_t>(p);
    case GgufType::Uint32: return load<uint32_t>(p);
    case GgufType::Int32: return load<int32_t>(p);
    case GgufType::Int64: return load<int64_t>(p);
    case GgufType::Uint64: {
      uint64_t x = load<uint64_t>(p);
      if (x > static_cast<uint64_t>(INT64_MAX))
        throw Error(ErrorKind::Overflow, "uint64 array element does not fit in int64");
      return static_cast<int64_t>(x);
    }
    case GgufType::Float32: return static_cast<int64_t>(load<float>(p));
    case GgufType::Float64: return static_cast<int64_t>(load<double>(p));
    default: throw wrong_type(elem, "a numeric array element");
  }
}

const std::string& GgufArray::string_at(size_t i) const {
  if (elem != GgufType::String) throw wrong_type(elem, "a string array element");
  if (i >= strings.size()) throw Error(ErrorKind::OutOfBounds, "array index out of range");
  return strings[i];
}

GgufArray GgufArray::of_strings(std::vector<std::string> items) {
  GgufArray a;
  a.elem = GgufType::String;
  a.strings = std::move(items);
  return a;
}

uint64_t GgufTensorInfo::n_elements() const {
  uint64_t n = 1;
  for (uint64_t d : dims) n *= d;  // dims were overflow-checked when read or declared
  return n;
}

void GgufMetadata::set(const std::string& key, GgufValue value) {
  auto it = index_.find(key);
  if (it != index_.end()) {
    entries_[it->second].second = std::move(value);
    return;
  }
  index_[key] = entries_.size();
  entries_.emplace_back(key, std::move(value));
}

const GgufValue* GgufMetadata::find(const std::string& key) const {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &entries_[it->second].second;
}

bool GgufMetadata::erase(const std::string& key) {
  auto it = index_.find(key);
  if (it == index_.end()) return false;
  entries_.erase(entries_.begin() + static_cast<std::ptrdiff_t>(it->second));
  index_.clear();
  for (size_t i = 0; i < entries_.size(); ++i) index_[entries_[i].first] = i;
  return true;
}

static const GgufValue& require(const GgufMetadata& m, const std::string& key) {
  const GgufValue* v = m.find(key);
  if (!v) throw Error(ErrorKind::MissingKey, "required metadata key is missing", Error::kNoOffset, key);
  return *v;
}

// Typed getters name the key when the type is wrong.
template <typename F>
static decltype(auto) with_key(const std::string& key, F&& f) {
  try {
    return f();
  } catch (const Error& e) {
    if (!e.subject().empty()) throw;
    throw Error(e.kind(), e.message(), e.offset(), key);
  }
}

int64_t GgufMetadata::get_int(const std::string& key) const {
  return with_key(key, [&] { return require(*this, key).as_int(); });
}
double GgufMetadata::get_double(const std::string& key) const {
  return with_key(key, [&] { return require(*this, key).as_double(); });
}
const std::string& GgufMetadata::get_string(const std::string& key) const {
  return with_key(key, [&]() -> const std::string& { return require(*this, key).as_string(); });
}
const GgufArray& GgufMetadata::get_array(const std::string& key) const {
  return with_key(key, [&]() -> const GgufArray& { return require(*this, key).as_array(); });
}
bool GgufMetadata::get_bool(const std::string& key) const {
  return with_key(key, [&] { return require(*this, key).as_bool(); });
}

}  // namespace synapse

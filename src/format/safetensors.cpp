// The safetensors header reader, checked as huggingface/safetensors checks
// it (SafeTensors::read_metadata, Metadata::validate). The JSON is read with
// nlohmann's SAX parser, never into a DOM: events arrive in order, so a
// duplicate name, a nesting depth or a wrong type is refused where it
// appears, and a hostile header costs no more memory than its tensor list.
#include "format/safetensors.h"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <array>
#include <cstring>
#include <set>

#include "format/safetensors_dtype.h"
#include "synapse/error.h"

namespace synapse {

namespace {

using json = nlohmann::json;

// The reference's JSON parser (serde_json) refuses the 128th nested level.
constexpr size_t kMaxDepth = 127;
constexpr uint64_t kLengthBytes = 8;

struct Entry {
  SafetensorsTensor t;
  uint32_t bits = 0;  // per element
  uint64_t begin = 0, end = 0;
  bool has_dtype = false, has_shape = false, has_offsets = false;
  size_t n_offsets = 0;
};

// Builds the tensor list from the parser's events. Every refusal throws
// synapse::Error at the event that shows it.
class HeaderSax final : public nlohmann::json_sax<json> {
 public:
  std::vector<Entry> entries;
  std::map<std::string, std::string> metadata;

  bool null() override { return scalar(Value::Null); }
  bool boolean(bool) override { return scalar(Value::Other); }
  bool number_integer(number_integer_t v) override {
    return v >= 0 ? scalar(Value::Index, static_cast<uint64_t>(v)) : scalar(Value::Other);
  }
  bool number_unsigned(number_unsigned_t v) override { return scalar(Value::Index, v); }
  bool number_float(number_float_t, const string_t&) override { return scalar(Value::Other); }
  bool string(string_t& s) override { return scalar(Value::String, 0, &s); }
  bool binary(binary_t&) override { return scalar(Value::Other); }
  bool start_object(std::size_t) override { return open(true); }
  bool start_array(std::size_t) override { return open(false); }

  bool key(string_t& k) override {
    switch (frames_.back()) {
      case Frame::Top:
        if (k == "__metadata__") {
          if (seen_metadata_) throw invalid(ErrorKind::DuplicateKey, "__metadata__ appears twice", k);
          seen_metadata_ = true;
        } else {
          if (!names_.insert(k).second) throw invalid(ErrorKind::DuplicateTensor, "tensor appears twice", k);
          if (k.find('\0') != std::string::npos) throw invalid("tensor name holds a NUL byte", k);
        }
        break;
      case Frame::Metadata:
        if (metadata.count(k)) throw invalid(ErrorKind::DuplicateKey, "__metadata__ key appears twice", k);
        if (k.find('\0') != std::string::npos) throw invalid("__metadata__ key holds a NUL byte", k);
        break;
      case Frame::Tensor: {
        Entry& e = entries.back();
        bool* seen = k == "dtype" ? &e.has_dtype : k == "shape" ? &e.has_shape
                     : k == "data_offsets" ? &e.has_offsets : nullptr;
        if (seen && *seen) throw invalid(ErrorKind::DuplicateKey, "field '" + k + "' appears twice", e.t.name);
        if (seen) *seen = true;
        break;
      }
      default:
        break;
    }
    key_ = k;
    return true;
  }

  bool end_object() override {
    if (frames_.back() == Frame::Tensor) {
      const Entry& e = entries.back();
      const char* missing = !e.has_dtype ? "dtype" : !e.has_shape ? "shape" : !e.has_offsets ? "data_offsets" : nullptr;
      if (missing) throw invalid(std::string("tensor has no '") + missing + "'", e.t.name);
    }
    frames_.pop_back();
    return true;
  }

  bool end_array() override {
    if (frames_.back() == Frame::Offsets && entries.back().n_offsets != 2)
      throw invalid("data_offsets must be [begin, end]", entries.back().t.name);
    frames_.pop_back();
    return true;
  }

  bool parse_error(std::size_t position, const std::string&, const nlohmann::detail::exception& ex) override {
    // position counts the bytes read, the offending one included.
    throw Error(ErrorKind::InvalidValue, std::string("header is not valid JSON: ") + ex.what(),
                kLengthBytes + (position > 0 ? position - 1 : 0));
  }

 private:
  enum class Frame { Top, Metadata, Tensor, Shape, Offsets, Skip };
  enum class Value { Null, Index, String, Other, Object, Array };

  static Error invalid(ErrorKind kind, const std::string& why, const std::string& subject) {
    return Error(kind, why, Error::kNoOffset, subject);
  }
  static Error invalid(const std::string& why, const std::string& subject) {
    return invalid(ErrorKind::InvalidValue, why, subject);
  }

  bool open(bool object) {
    if (frames_.size() >= kMaxDepth)
      throw Error(ErrorKind::InvalidValue, "header JSON nests deeper than " + std::to_string(kMaxDepth) + " levels");
    if (frames_.empty()) {
      if (!object) throw Error(ErrorKind::InvalidValue, "header is not a JSON object");
      frames_.push_back(Frame::Top);
      return true;
    }
    if (frames_.back() == Frame::Top && object && key_ != "__metadata__") {
      entries.emplace_back().t.name = key_;
    }
    frames_.push_back(frame_for(object ? Value::Object : Value::Array));
    return true;
  }

  // The frame a container opens where the parser is; throws if none may.
  Frame frame_for(Value v) {
    switch (frames_.back()) {
      case Frame::Top:
        if (key_ == "__metadata__") {
          if (v == Value::Object) return Frame::Metadata;
          throw invalid("__metadata__ must be an object of strings", key_);
        }
        if (v == Value::Object) return Frame::Tensor;
        throw invalid("tensor entry is not a JSON object", key_);
      case Frame::Metadata:
        throw invalid("__metadata__ value is not a string", key_);
      case Frame::Tensor:
        if (key_ == "shape" && v == Value::Array) return Frame::Shape;
        if (key_ == "data_offsets" && v == Value::Array) return Frame::Offsets;
        if (key_ == "dtype" || key_ == "shape" || key_ == "data_offsets") wrong_field();
        return Frame::Skip;  // a field the format does not define: ignored, as the reference does
      case Frame::Shape:
      case Frame::Offsets:
        wrong_field();
      case Frame::Skip:
        return Frame::Skip;
    }
    return Frame::Skip;
  }

  [[noreturn]] void wrong_field() const {
    const Frame f = frames_.back();
    const std::string field = f == Frame::Shape ? "shape" : f == Frame::Offsets ? "data_offsets" : key_;
    throw invalid(field == "dtype" ? "dtype must be a string" : field + " must be an array of non-negative integers",
                  entries.back().t.name);
  }

  bool scalar(Value v, uint64_t index = 0, std::string* s = nullptr) {
    if (frames_.empty()) throw Error(ErrorKind::InvalidValue, "header is not a JSON object");
    switch (frames_.back()) {
      case Frame::Top:
        if (key_ == "__metadata__" && v == Value::Null) return true;  // serde reads null as an absent Option
        frame_for(v);  // throws
        break;
      case Frame::Metadata:
        if (v != Value::String) frame_for(v);  // throws
        if (s->find('\0') != std::string::npos) throw invalid("__metadata__ value holds a NUL byte", key_);
        metadata.emplace(key_, std::move(*s));
        break;
      case Frame::Tensor:
        if (key_ == "dtype") {
          Entry& e = entries.back();
          if (v != Value::String) wrong_field();
          const SafetensorsDtype* d = find_safetensors_dtype(*s);
          if (!d) throw invalid(ErrorKind::UnknownEncoding, "unknown dtype '" + *s + "'", e.t.name);
          e.t.dtype = std::string(d->name);
          e.t.encoding = d->encoding;
          e.bits = d->bits;
        } else if (key_ == "shape" || key_ == "data_offsets") {
          wrong_field();
        }
        break;
      case Frame::Shape:
        if (v != Value::Index) wrong_field();
        entries.back().t.shape.push_back(index);
        break;
      case Frame::Offsets: {
        Entry& e = entries.back();
        if (v != Value::Index || e.n_offsets == 2) wrong_field();
        (e.n_offsets++ == 0 ? e.begin : e.end) = index;
        break;
      }
      case Frame::Skip:
        break;
    }
    return true;
  }

  std::vector<Frame> frames_;
  std::string key_;
  std::set<std::string> names_;
  bool seen_metadata_ = false;
};

// "[2, 3]": a shape or a pair of offsets, for messages.
std::string shape_string(const std::vector<uint64_t>& shape) {
  std::string s = "[";
  for (size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

// Checks that the tensors, sorted by offset, tile the data buffer exactly.
void check_layout(std::vector<Entry>& entries, uint64_t data_start, uint64_t buffer) {
  std::stable_sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.end < b.end;
  });
  const auto at = [&](uint64_t x) { return x <= buffer ? data_start + x : Error::kNoOffset; };
  uint64_t expected = 0;
  for (const Entry& e : entries) {
    const std::string& name = e.t.name;
    const std::string range = shape_string({e.begin, e.end});
    if (e.begin > e.end)
      throw Error(ErrorKind::InvalidValue, "data_offsets " + range + " end before they begin", at(e.begin), name);
    if (e.begin != expected)
      throw Error(ErrorKind::InvalidValue,
                  "data_offsets " + range + (e.begin > expected ? " leave a gap: " : " overlap: ") +
                      "the previous tensor ends at " + std::to_string(expected),
                  at(e.begin), name);
    if (e.end > buffer)
      throw Error(ErrorKind::OutOfBounds,
                  "data_offsets " + range + " end past the " + std::to_string(buffer) + "-byte data buffer",
                  at(e.begin), name);
    uint64_t elements = 1;
    for (uint64_t d : e.t.shape) {
      if (d != 0 && elements > UINT64_MAX / d)
        throw Error(ErrorKind::Overflow, "shape " + shape_string(e.t.shape) + " overflows", at(e.begin), name);
      elements *= d;
    }
    if (elements > UINT64_MAX / e.bits)
      throw Error(ErrorKind::Overflow, "shape " + shape_string(e.t.shape) + " of " + e.t.dtype + " overflows",
                  at(e.begin), name);
    const uint64_t bits = elements * e.bits;
    if (bits % 8 != 0)
      throw Error(ErrorKind::InvalidValue,
                  "shape " + shape_string(e.t.shape) + " of " + e.t.dtype + " is not a whole number of bytes",
                  at(e.begin), name);
    if (bits / 8 != e.end - e.begin)
      throw Error(ErrorKind::InvalidValue,
                  "shape " + shape_string(e.t.shape) + " of " + e.t.dtype + " needs " + std::to_string(bits / 8) +
                      " bytes, data_offsets " + range + " hold " + std::to_string(e.end - e.begin),
                  at(e.begin), name);
    expected = e.end;
  }
  if (expected != buffer)
    throw Error(ErrorKind::InvalidValue,
                "the tensors cover " + std::to_string(expected) + " bytes of the " + std::to_string(buffer) +
                    "-byte data buffer",
                data_start + expected, entries.empty() ? std::string() : entries.back().t.name);
}

}  // namespace

const SafetensorsDtype* find_safetensors_dtype(std::string_view name) {
  static constexpr std::array<SafetensorsDtype, 22> kDtypes{{
      {"BOOL", 8, {}},        {"F4", 4, {}},           {"F6_E2M3", 6, {}},
      {"F6_E3M2", 6, {}},     {"U8", 8, {}},           {"I8", 8, Encoding::I8},
      {"F8_E5M2", 8, {}},     {"F8_E4M3", 8, {}},      {"F8_E8M0", 8, {}},
      {"F8_E4M3FNUZ", 8, {}}, {"F8_E5M2FNUZ", 8, {}},  {"I16", 16, Encoding::I16},
      {"U16", 16, {}},        {"F16", 16, Encoding::F16}, {"BF16", 16, Encoding::BF16},
      {"I32", 32, Encoding::I32}, {"U32", 32, {}},     {"F32", 32, Encoding::F32},
      {"C64", 64, {}},        {"F64", 64, Encoding::F64}, {"I64", 64, Encoding::I64},
      {"U64", 64, {}},
  }};
  for (const SafetensorsDtype& d : kDtypes)
    if (d.name == name) return &d;
  return nullptr;
}

SafetensorsHeader parse_safetensors(std::span<const uint8_t> file_bytes) {
  if (file_bytes.size() < kLengthBytes)
    throw Error(ErrorKind::Truncated, "file is shorter than the 8-byte header length", 0);
  uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | file_bytes[static_cast<size_t>(i)];
  if (n > kSafetensorsMaxHeaderBytes)
    throw Error(ErrorKind::Overflow,
                "header length " + std::to_string(n) + " is over the " +
                    std::to_string(kSafetensorsMaxHeaderBytes) + "-byte limit",
                0);
  if (n > file_bytes.size() - kLengthBytes)
    throw Error(ErrorKind::Truncated,
                "header of " + std::to_string(n) + " bytes runs past the end of the " +
                    std::to_string(file_bytes.size()) + "-byte file",
                kLengthBytes);
  const auto header = file_bytes.subspan(kLengthBytes, n);
  // nlohmann skips a byte order mark; the reference (serde_json) refuses it.
  if (n >= 3 && header[0] == 0xEF && header[1] == 0xBB && header[2] == 0xBF)
    throw Error(ErrorKind::InvalidValue, "header begins with a byte order mark", kLengthBytes);

  // Nor can a NUL byte be JSON text, but nlohmann's lexer takes one for the
  // end of input, which would let anything follow it.
  if (const void* nul = std::memchr(header.data(), 0, header.size()))
    throw Error(ErrorKind::InvalidValue, "header holds a NUL byte",
                kLengthBytes + static_cast<uint64_t>(static_cast<const uint8_t*>(nul) - header.data()));

  HeaderSax sax;
  try {
    const char* text = reinterpret_cast<const char*>(header.data());
    if (!json::sax_parse(text, text + header.size(), &sax))
      throw Error(ErrorKind::InvalidValue, "header is not valid JSON", kLengthBytes);
  } catch (const json::exception& e) {
    throw Error(ErrorKind::InvalidValue, std::string("header is not valid JSON: ") + e.what(), kLengthBytes);
  }

  SafetensorsHeader out;
  out.data_start = kLengthBytes + n;
  check_layout(sax.entries, out.data_start, file_bytes.size() - out.data_start);
  out.tensors.reserve(sax.entries.size());
  for (Entry& e : sax.entries) {
    e.t.offset = out.data_start + e.begin;
    e.t.n_bytes = e.end - e.begin;
    out.tensors.push_back(std::move(e.t));
  }
  out.metadata = std::move(sax.metadata);
  return out;
}

SafetensorsFile SafetensorsFile::open(const std::string& path) {
  SafetensorsFile f;
  f.file_ = std::make_shared<MappedFile>(path);
  try {
    f.header_ = parse_safetensors(f.file_->bytes());
  } catch (const Error& e) {
    if (e.subject().empty()) throw Error(e.kind(), e.message(), e.offset(), path);
    throw Error(e.kind(), e.message() + " in " + path, e.offset(), e.subject());
  }
  return f;
}

}  // namespace synapse

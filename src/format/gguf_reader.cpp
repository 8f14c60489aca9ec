#include "format/gguf_reader.h"

#include <algorithm>
#include <cstring>
#include <set>

#include "encoding/encoding.h"
#include "synapse/error.h"

namespace synapse {

namespace {

// Smallest encoded size of one value of each kind; used to bound counts by
// the bytes that remain before anything is allocated.
constexpr uint64_t kMinStringBytes = 8;         // length prefix
constexpr uint64_t kMinArrayBytes = 4 + 8;      // element type + count
constexpr uint64_t kMinKvBytes = 8 + 4 + 1;     // key length + type + 1-byte value
constexpr uint64_t kMinTensorInfoBytes = 8 + 4 + 8 + 4 + 8;  // name, n_dims, 1 dim, type, offset
constexpr int kMaxArrayDepth = 4;

}  // namespace

class GgufParser {
 public:
  explicit GgufParser(GgufFile& f) : f_(f), b_(f.bytes_) {}

  void run() {
    header();
    for (uint64_t i = 0; i < n_kv_; ++i) key_value();
    alignment();
    for (uint64_t i = 0; i < n_tensors_; ++i) tensor_info();
    data_section();
  }

 private:
  GgufFile& f_;
  std::span<const uint8_t> b_;
  uint64_t pos_ = 0;
  uint64_t n_kv_ = 0;
  uint64_t n_tensors_ = 0;

  uint64_t remaining() const { return b_.size() - pos_; }

  void need(uint64_t n, const char* what) const {
    if (n > remaining())
      throw Error(ErrorKind::Truncated, std::string("file ends inside ") + what, pos_);
  }

  template <typename T>
  T read(const char* what) {
    need(sizeof(T), what);
    T x;
    std::memcpy(&x, b_.data() + pos_, sizeof x);
    pos_ += sizeof x;
    return x;
  }

  std::string read_string(const char* what) {
    uint64_t at = pos_;
    uint64_t len = read<uint64_t>(what);
    if (len > remaining())
      throw Error(ErrorKind::InvalidString,
                  std::string(what) + " length " + std::to_string(len) + " exceeds the file", at);
    std::string s(reinterpret_cast<const char*>(b_.data() + pos_), len);
    pos_ += len;
    return s;
  }

  // Rejects a count that cannot fit in the remaining bytes, before allocating.
  void check_count(uint64_t count, uint64_t min_bytes_each, const char* what, uint64_t at) const {
    if (count > remaining() / min_bytes_each)
      throw Error(ErrorKind::Overflow,
                  std::string(what) + " count " + std::to_string(count) +
                      " is more than the rest of the file can hold",
                  at);
  }

  void header() {
    uint32_t magic = read<uint32_t>("header");
    if (magic != kGgufMagic) throw Error(ErrorKind::BadMagic, "not a GGUF file (bad magic)", 0);
    uint32_t version = read<uint32_t>("header");
    if (version != 2 && version != 3) {
      std::string why = "GGUF version " + std::to_string(version) + " is not supported (2 and 3 are)";
      if ((version & 0xffff) == 0) why += "; the file may be big-endian";
      throw Error(ErrorKind::UnsupportedVersion, why, 4);
    }
    f_.version_ = version;
    uint64_t at = pos_;
    n_tensors_ = read<uint64_t>("header");
    n_kv_ = read<uint64_t>("header");
    check_count(n_kv_, kMinKvBytes, "metadata key", at + 8);
    check_count(n_tensors_, kMinTensorInfoBytes, "tensor", at);
  }

  GgufType read_type(const char* what) {
    uint64_t at = pos_;
    uint32_t t = read<uint32_t>(what);
    if (t > static_cast<uint32_t>(GgufType::Float64))
      throw Error(ErrorKind::InvalidType, std::string("unknown ") + what + " " + std::to_string(t), at);
    return static_cast<GgufType>(t);
  }

  template <typename T>
  GgufValue scalar() {
    return GgufValue(read<T>("metadata value"));
  }

  GgufValue value(GgufType t, int depth) {
    switch (t) {
      case GgufType::Uint8: return scalar<uint8_t>();
      case GgufType::Int8: return scalar<int8_t>();
      case GgufType::Uint16: return scalar<uint16_t>();
      case GgufType::Int16: return scalar<int16_t>();
      case GgufType::Uint32: return scalar<uint32_t>();
      case GgufType::Int32: return scalar<int32_t>();
      case GgufType::Float32: return scalar<float>();
      case GgufType::Uint64: return scalar<uint64_t>();
      case GgufType::Int64: return scalar<int64_t>();
      case GgufType::Float64: return scalar<double>();
      case GgufType::Bool: {
        uint64_t at = pos_;
        uint8_t x = read<uint8_t>("metadata value");
        if (x > 1) throw Error(ErrorKind::InvalidValue, "bool value is neither 0 nor 1", at);
        return GgufValue(x != 0);
      }
      case GgufType::String: return GgufValue(read_string("string value"));
      case GgufType::Array: return GgufValue(array(depth));
    }
    throw Error(ErrorKind::InvalidType, "unknown value type", pos_);
  }

  GgufArray array(int depth) {
    uint64_t at = pos_;
    if (depth >= kMaxArrayDepth)
      throw Error(ErrorKind::InvalidValue, "arrays nested too deeply", at);
    GgufArray a;
    a.elem = read_type("array element type");
    uint64_t count_at = pos_;
    uint64_t count = read<uint64_t>("array length");
    if (size_t w = gguf_scalar_size(a.elem)) {
      check_count(count, w, "array element", count_at);
      a.raw.assign(b_.data() + pos_, b_.data() + pos_ + count * w);
      pos_ += count * w;
      if (a.elem == GgufType::Bool) {
        for (uint8_t x : a.raw)
          if (x > 1) throw Error(ErrorKind::InvalidValue, "bool array element is neither 0 nor 1", count_at);
      }
    } else if (a.elem == GgufType::String) {
      check_count(count, kMinStringBytes, "array element", count_at);
      a.strings.reserve(count);
      for (uint64_t i = 0; i < count; ++i) a.strings.push_back(read_string("array string"));
    } else {
      check_count(count, kMinArrayBytes, "array element", count_at);
      a.arrays.reserve(count);
      for (uint64_t i = 0; i < count; ++i) a.arrays.push_back(array(depth + 1));
    }
    return a;
  }

  void key_value() {
    uint64_t at = pos_;
    std::string key = read_string("metadata key");
    if (key.empty()) throw Error(ErrorKind::InvalidString, "empty metadata key", at);
    if (f_.metadata_.contains(key))
      throw Error(ErrorKind::DuplicateKey, "metadata key appears twice", at, key);
    GgufType t = read_type("metadata value type");
    try {
      f_.metadata_.set(key, value(t, 0));
    } catch (const Error& e) {
      if (!e.subject().empty()) throw;
      throw Error(e.kind(), e.message(), e.offset(), key);
    }
  }

  void alignment() {
    const GgufValue* v = f_.metadata_.find("general.alignment");
    if (!v) return;
    if (v->type() != GgufType::Uint32)
      throw Error(ErrorKind::InvalidType, "general.alignment must be uint32", Error::kNoOffset,
                  "general.alignment");
    uint32_t a = std::get<uint32_t>(v->v);
    if (a == 0 || (a & (a - 1)) != 0)
      throw Error(ErrorKind::InvalidValue, "alignment " + std::to_string(a) + " is not a power of two",
                  Error::kNoOffset, "general.alignment");
    f_.alignment_ = a;
  }

  void tensor_info() {
    uint64_t at = pos_;
    GgufTensorInfo t;
    t.name = read_string("tensor name");
    if (t.name.empty()) throw Error(ErrorKind::InvalidString, "empty tensor name", at);
    auto fail = [&](ErrorKind k, const std::string& why) { return Error(k, why, at, t.name); };
    uint32_t n_dims = read<uint32_t>("tensor dimension count");
    if (n_dims == 0 || n_dims > kGgufMaxDims)
      throw fail(ErrorKind::InvalidValue, "tensor has " + std::to_string(n_dims) + " dimensions (1 to 4 allowed)");
    uint64_t n = 1;
    for (uint32_t d = 0; d < n_dims; ++d) {
      uint64_t ne = read<uint64_t>("tensor dimensions");
      if (ne == 0) throw fail(ErrorKind::InvalidValue, "tensor dimension is zero");
      if (ne > static_cast<uint64_t>(INT64_MAX) / n)
        throw fail(ErrorKind::Overflow, "tensor element count overflows");
      n *= ne;
      t.dims.push_back(ne);
    }
    const uint32_t encoding_id = read<uint32_t>("tensor type");
    auto info = find_encoding(encoding_id);
    if (!info) throw fail(ErrorKind::UnknownEncoding, "unknown tensor encoding id " + std::to_string(encoding_id));
    t.encoding = info->id;
    if (t.dims[0] % info->block_elems != 0)
      throw fail(ErrorKind::InvalidValue, "row length " + std::to_string(t.dims[0]) +
                                              " is not a multiple of the " + info->name +
                                              " block size " + std::to_string(info->block_elems));
    uint64_t blocks = n / info->block_elems;
    if (blocks > UINT64_MAX / info->block_bytes)
      throw fail(ErrorKind::Overflow, "tensor byte size overflows");
    t.n_bytes = blocks * info->block_bytes;
    t.offset = read<uint64_t>("tensor offset");
    if (t.offset % f_.alignment_ != 0)
      throw fail(ErrorKind::Misaligned, "tensor data offset " + std::to_string(t.offset) +
                                            " is not a multiple of the alignment " +
                                            std::to_string(f_.alignment_));
    if (!f_.tensor_index_.emplace(t.name, f_.tensors_.size()).second)
      throw fail(ErrorKind::DuplicateTensor, "tensor name appears twice");
    f_.tensors_.push_back(std::move(t));
  }

  void data_section() {
    uint64_t a = f_.alignment_;
    uint64_t start = pos_ + (a - pos_ % a) % a;
    f_.data_offset_ = start;
    if (f_.tensors_.empty()) return;
    if (start > b_.size())
      throw Error(ErrorKind::Truncated, "file ends before the tensor data section", b_.size());
    uint64_t data_size = b_.size() - start;
    std::vector<const GgufTensorInfo*> by_offset;
    for (const auto& t : f_.tensors_) {
      if (t.offset > data_size || t.n_bytes > data_size - t.offset)
        throw Error(ErrorKind::OutOfBounds,
                    "tensor data (" + std::to_string(t.n_bytes) + " bytes at data offset " +
                        std::to_string(t.offset) + ") extends past the end of the file",
                    start + std::min(t.offset, data_size), t.name);
      by_offset.push_back(&t);
    }
    std::sort(by_offset.begin(), by_offset.end(),
              [](auto* x, auto* y) { return x->offset < y->offset; });
    for (size_t i = 1; i < by_offset.size(); ++i) {
      const auto* prev = by_offset[i - 1];
      if (prev->offset + prev->n_bytes > by_offset[i]->offset)
        throw Error(ErrorKind::InvalidValue, "tensor data overlaps tensor " + prev->name,
                    start + by_offset[i]->offset, by_offset[i]->name);
    }
  }
};

GgufFile GgufFile::open(const std::string& path) {
  auto mapping = std::make_shared<MappedFile>(path);
  GgufFile f;
  f.mapping_ = mapping;
  f.bytes_ = mapping->bytes();
  f.path_ = path;
  try {
    GgufParser(f).run();
  } catch (const Error& e) {
    // Name the file so a CLI error line says which input is bad.
    throw Error(e.kind(), e.message() + " in " + path, e.offset(), e.subject());
  }
  return f;
}

GgufFile GgufFile::parse(std::span<const uint8_t> bytes) {
  GgufFile f;
  f.bytes_ = bytes;
  GgufParser(f).run();
  return f;
}

const GgufTensorInfo* GgufFile::find_tensor(const std::string& name) const {
  auto it = tensor_index_.find(name);
  return it == tensor_index_.end() ? nullptr : &tensors_[it->second];
}

std::span<const uint8_t> GgufFile::tensor_data(const GgufTensorInfo& t) const {
  return bytes_.subspan(data_offset_ + t.offset, t.n_bytes);
}

}  // namespace synapse

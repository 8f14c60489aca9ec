// The imatrix layouts of llama.cpp's tools/imatrix (save_imatrix and its
// legacy writer) and common/imatrix-loader.cpp, and the normalisation of
// tools/quantize's load_imatrix.
#include "quantize/imatrix_file.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "format/gguf_reader.h"
#include "format/gguf_writer.h"
#include "format/mapped_file.h"
#include "synapse/error.h"

namespace synapse::quant {

namespace {

constexpr const char* kDatasetsKey = "imatrix.datasets";
constexpr const char* kChunkCountKey = "imatrix.chunk_count";
constexpr const char* kChunkSizeKey = "imatrix.chunk_size";
const std::string kSumsSuffix = ".in_sum2";
const std::string kCountsSuffix = ".counts";
const std::string kPlainSumsSuffix = ".in_sum";  // newer files' sums of activations: not used to quantize
// llama-quantize copies strings into char[128] fields with strncpy.
constexpr size_t kOverrideStringMax = 127;

// Rows per count: the sums must split into one row per matrix.
uint64_t row_elems(const std::string& name, const ImatrixEntry& e) {
  if (e.counts.empty() || e.in_sum2.empty() || e.in_sum2.size() % e.counts.size() != 0)
    throw Error(ErrorKind::InvalidValue,
                std::to_string(e.in_sum2.size()) + " sums do not split into one row per count (" +
                    std::to_string(e.counts.size()) + " counts)",
                Error::kNoOffset, name);
  return e.in_sum2.size() / e.counts.size();
}

// offset_of(in_sums, i): where value i of the sums (else of the counts) is in
// the input, for the error.
template <typename OffsetOf>
void check_values(const std::string& name, const ImatrixEntry& e, OffsetOf offset_of) {
  row_elems(name, e);
  for (size_t i = 0; i < e.in_sum2.size(); ++i) {
    if (!std::isfinite(e.in_sum2[i]) || e.in_sum2[i] < 0)
      throw Error(ErrorKind::InvalidValue,
                  "sum of squares " + std::to_string(e.in_sum2[i]) + " at column " + std::to_string(i) +
                      " is not a finite value >= 0",
                  offset_of(true, i), name);
  }
  for (size_t i = 0; i < e.counts.size(); ++i) {
    if (!std::isfinite(e.counts[i]))
      throw Error(ErrorKind::InvalidValue, "count " + std::to_string(i) + " is not finite", offset_of(false, i), name);
  }
}

// ---------------------------------------------------------------- GGUF

bool remove_suffix(std::string& name, const std::string& suffix) {
  if (name.size() < suffix.size() || name.compare(name.size() - suffix.size(), suffix.size(), suffix) != 0)
    return false;
  name.resize(name.size() - suffix.size());
  return true;
}

void require_f32(const GgufTensorInfo& t) {
  if (t.encoding != Encoding::F32)
    throw Error(ErrorKind::InvalidType,
                std::string("imatrix tensor is ") + encoding_info(t.encoding).name + ", not f32", Error::kNoOffset,
                t.name);
}

std::vector<float> floats_of(const GgufFile& f, const GgufTensorInfo& t) {
  require_f32(t);
  const std::span<const uint8_t> bytes = f.tensor_data(t);
  std::vector<float> values(bytes.size() / sizeof(float));
  if (!values.empty()) std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  return values;
}

const GgufValue& required_key(const GgufMetadata& md, const char* key, GgufType type) {
  const GgufValue* v = md.find(key);
  if (v == nullptr) throw Error(ErrorKind::MissingKey, "imatrix metadata key is missing", Error::kNoOffset, key);
  if (v->type() != type)
    throw Error(ErrorKind::InvalidType,
                std::string("imatrix metadata key is ") + to_string(v->type()) + ", not " + to_string(type),
                Error::kNoOffset, key);
  return *v;
}

Imatrix from_gguf(const GgufFile& f) {
  if (f.tensors().empty()) throw Error(ErrorKind::InvalidValue, "imatrix holds no tensors");
  Imatrix m;
  const GgufArray& datasets = required_key(f.metadata(), kDatasetsKey, GgufType::Array).as_array();
  if (datasets.elem != GgufType::String)
    throw Error(ErrorKind::InvalidType, "imatrix datasets are not strings", Error::kNoOffset, kDatasetsKey);
  m.datasets = datasets.strings;
  m.chunk_count = std::get<uint32_t>(required_key(f.metadata(), kChunkCountKey, GgufType::Uint32).v);
  m.chunk_size = std::get<uint32_t>(required_key(f.metadata(), kChunkSizeKey, GgufType::Uint32).v);

  struct Parts {
    const GgufTensorInfo* sums = nullptr;
    const GgufTensorInfo* counts = nullptr;
    const GgufTensorInfo* plain_sums = nullptr;
  };
  std::map<std::string, Parts> parts;
  for (const GgufTensorInfo& t : f.tensors()) {
    std::string name = t.name;
    if (remove_suffix(name, kPlainSumsSuffix)) {
      parts[name].plain_sums = &t;
    } else if (remove_suffix(name, kSumsSuffix)) {
      parts[name].sums = &t;
    } else if (remove_suffix(name, kCountsSuffix)) {
      parts[name].counts = &t;
    }  // llama.cpp ignores other tensors
  }
  for (const auto& item : parts) {  // no structured binding: the lambda below captures them
    const std::string& name = item.first;
    const Parts& p = item.second;
    if (p.sums == nullptr || p.counts == nullptr)
      throw Error(ErrorKind::InvalidValue,
                  "imatrix entry has no " + (p.sums != nullptr ? kCountsSuffix : kSumsSuffix) + " tensor",
                  Error::kNoOffset, name);
    if (p.plain_sums != nullptr) {  // checked as llama.cpp's loader checks it
      require_f32(*p.plain_sums);
      if (p.plain_sums->n_elements() != p.sums->n_elements())
        throw Error(ErrorKind::InvalidValue,
                    "imatrix entry's " + kPlainSumsSuffix + " and " + kSumsSuffix + " tensors differ in size",
                    Error::kNoOffset, name);
    }
    ImatrixEntry e{floats_of(f, *p.sums), floats_of(f, *p.counts)};
    check_values(name, e, [&](bool sums, size_t i) {
      return f.data_offset() + (sums ? p.sums : p.counts)->offset + i * sizeof(float);
    });
    m.entries.emplace(name, std::move(e));
  }
  return m;
}

// ---------------------------------------------------------------- legacy

// Little-endian fields of a legacy file, each checked against its end.
class LegacyReader {
 public:
  explicit LegacyReader(std::span<const uint8_t> bytes) : bytes_(bytes) {}
  uint64_t offset() const { return at_; }
  uint64_t left() const { return bytes_.size() - at_; }

  int32_t i32(const char* what) {
    int32_t v;
    std::memcpy(&v, take(sizeof v, what), sizeof v);
    return v;
  }
  // A C string in a field of n bytes: llama.cpp keeps what precedes a NUL.
  std::string text(uint64_t n, const char* what) {
    const char* p = reinterpret_cast<const char*>(take(n, what));
    return std::string(p, strnlen(p, n));
  }
  std::vector<float> floats(uint64_t n, const char* what) {
    const uint8_t* p = take(n * sizeof(float), what);  // checked before allocating
    std::vector<float> v(n);
    std::memcpy(v.data(), p, n * sizeof(float));
    return v;
  }

 private:
  const uint8_t* take(uint64_t n, const char* what) {
    if (n > left()) throw Error(ErrorKind::Truncated, std::string("legacy imatrix ends inside ") + what, at_);
    const uint8_t* p = bytes_.data() + at_;
    at_ += n;
    return p;
  }

  std::span<const uint8_t> bytes_;
  uint64_t at_ = 0;
};

// int32 n_entries; per entry int32 name length, name, int32 call count,
// int32 n_values, float values; then optionally int32 chunk count and
// int32 length + dataset name.
Imatrix from_legacy(std::span<const uint8_t> bytes) {
  LegacyReader in(bytes);
  const int32_t n_entries = in.i32("the entry count");
  if (n_entries < 1) throw Error(ErrorKind::InvalidValue, "legacy imatrix holds no entries", 0);
  Imatrix m;
  for (int32_t i = 0; i < n_entries; ++i) {
    const uint64_t at = in.offset();
    const int32_t len = in.i32("an entry's name length");
    if (len < 0) throw Error(ErrorKind::InvalidValue, "negative name length in legacy imatrix", at);
    const std::string name = in.text(static_cast<uint64_t>(len), "an entry's name");
    const int32_t calls = in.i32("an entry's call count");
    const uint64_t values_at = in.offset();
    const int32_t n_values = in.i32("an entry's value count");
    if (n_values < 1) throw Error(ErrorKind::InvalidValue, "legacy imatrix entry without values", values_at, name);
    ImatrixEntry e{in.floats(static_cast<uint64_t>(n_values), "an entry's values"),
                   {calls > 0 ? static_cast<float>(calls) : 1.0f}};
    check_values(name, e, [&](bool sums, size_t k) { return sums ? values_at + 4 + 4 * k : values_at - 4; });
    m.entries[name] = std::move(e);  // llama.cpp keeps the last of entries with one name
  }
  if (in.left() > 0) {
    m.chunk_count = static_cast<uint32_t>(in.i32("the chunk count"));
    if (in.left() > 0) {
      const int32_t len = in.i32("the dataset name length");
      if (len > 0) m.datasets.push_back(in.text(static_cast<uint64_t>(len), "the dataset name"));
    }
  }
  return m;
}

std::string cut_like_strncpy(const std::string& s) {
  return s.substr(0, std::min({s.find('\0'), s.size(), kOverrideStringMax}));
}

}  // namespace

Imatrix parse_imatrix(std::span<const uint8_t> bytes) {
  uint32_t magic = 0;
  if (bytes.size() >= sizeof magic) std::memcpy(&magic, bytes.data(), sizeof magic);
  return magic == kGgufMagic ? from_gguf(GgufFile::parse(bytes)) : from_legacy(bytes);
}

Imatrix read_imatrix(const std::string& path) {
  try {
    const MappedFile file(path);
    return parse_imatrix(file.bytes());
  } catch (const Error& e) {
    throw Error(e.kind(), "imatrix " + path + ": " + e.message(), e.offset(), e.subject());
  }
}

void write_imatrix(const Imatrix& m, const std::string& path) {
  GgufWriter w;
  GgufMetadata& md = w.metadata();
  md.set("general.type", "imatrix");
  md.set(kDatasetsKey, GgufArray::of_strings(m.datasets));
  md.set(kChunkCountKey, GgufValue(m.chunk_count));
  md.set(kChunkSizeKey, GgufValue(m.chunk_size));
  auto bytes_of = [](const std::vector<float>& v) {
    std::vector<uint8_t> b(v.size() * sizeof(float));
    std::memcpy(b.data(), v.data(), b.size());
    return b;
  };
  for (const auto& [name, e] : m.entries) {
    const uint64_t n_mat = e.counts.size();
    const uint64_t row = row_elems(name, e);
    std::vector<uint64_t> sums_dims = {row}, counts_dims = {1};
    if (n_mat > 1) {
      sums_dims.push_back(n_mat);
      counts_dims.push_back(n_mat);
    }
    w.add_tensor_bytes(name + kSumsSuffix, sums_dims, Encoding::F32, bytes_of(e.in_sum2));
    w.add_tensor_bytes(name + kCountsSuffix, counts_dims, Encoding::F32, bytes_of(e.counts));
  }
  w.write(path);
}

std::vector<float> importance(const ImatrixEntry& e) {
  const uint64_t row = row_elems("imatrix entry", e);
  std::vector<float> out(e.in_sum2.size());
  for (size_t j = 0; j < e.counts.size(); ++j) {
    const float count = static_cast<float>(std::lround(e.counts[j]));
    for (uint64_t i = j * row; i < (j + 1) * row; ++i) out[i] = count > 0 ? e.in_sum2[i] / count : 1.0f;
  }
  return out;
}

std::vector<std::pair<std::string, GgufValue>> imatrix_metadata(const Imatrix& m, const std::string& file) {
  std::vector<std::pair<std::string, GgufValue>> keys;
  keys.emplace_back("quantize.imatrix.file", GgufValue(cut_like_strncpy(file)));
  if (!m.datasets.empty()) keys.emplace_back("quantize.imatrix.dataset", GgufValue(cut_like_strncpy(m.datasets[0])));
  keys.emplace_back("quantize.imatrix.entries_count", GgufValue(static_cast<uint32_t>(m.entries.size())));
  // llama-quantize holds the chunk count in an int.
  if (static_cast<int32_t>(m.chunk_count) > 0)
    keys.emplace_back("quantize.imatrix.chunks_count", GgufValue(m.chunk_count));
  return keys;
}

}  // namespace synapse::quant

#include "format/gguf_writer.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "encoding/encoding.h"
#include "format/part_file.h"
#include "synapse/error.h"

namespace synapse {

namespace {

// Serializes the header, metadata and tensor infos into a byte vector.
class HeaderBytes {
 public:
  std::vector<uint8_t> out;

  // Grow, then copy: GCC 12 misreads insert() from a pointer range over a
  // local scalar as an overflow (-Wstringop-overflow).
  template <typename T>
  void put(T x) {
    const size_t at = out.size();
    out.resize(at + sizeof x);
    std::memcpy(out.data() + at, &x, sizeof x);
  }
  void put_string(const std::string& s) {
    put<uint64_t>(s.size());
    out.insert(out.end(), s.begin(), s.end());
  }
  void put_array(const GgufArray& a) {
    put<uint32_t>(static_cast<uint32_t>(a.elem));
    put<uint64_t>(a.size());
    if (a.elem == GgufType::String) {
      for (const auto& s : a.strings) put_string(s);
    } else if (a.elem == GgufType::Array) {
      for (const auto& sub : a.arrays) put_array(sub);
    } else {
      out.insert(out.end(), a.raw.begin(), a.raw.end());
    }
  }
  void put_value(const GgufValue& v) {
    std::visit(
        [this](const auto& x) {
          using T = std::decay_t<decltype(x)>;
          if constexpr (std::is_same_v<T, std::string>) {
            put_string(x);
          } else if constexpr (std::is_same_v<T, std::shared_ptr<GgufArray>>) {
            put_array(*x);
          } else if constexpr (std::is_same_v<T, bool>) {
            put<uint8_t>(x ? 1 : 0);
          } else {
            put(x);
          }
        },
        v.v);
  }
};

uint64_t align_up(uint64_t x, uint64_t a) { return x + (a - x % a) % a; }

Error io_error(const std::string& what, const std::string& path) {
  return Error(ErrorKind::Io, what + ": " + std::strerror(errno), Error::kNoOffset, path);
}

}  // namespace

void GgufWriter::add_tensor(const std::string& name, std::vector<uint64_t> dims, Encoding encoding,
                            Producer produce) {
  for (const auto& p : tensors_)
    if (p.info.name == name)
      throw Error(ErrorKind::DuplicateTensor, "tensor declared twice", Error::kNoOffset, name);
  if (dims.empty() || dims.size() > kGgufMaxDims)
    throw Error(ErrorKind::InvalidValue, "a tensor needs 1 to 4 dimensions", Error::kNoOffset, name);
  encoding_info(encoding);  // throws UnknownEncoding for an id we cannot lay out
  uint64_t rows = 1;
  for (size_t i = 1; i < dims.size(); ++i) {
    if (dims[i] == 0 || rows > UINT64_MAX / dims[i])
      throw Error(ErrorKind::InvalidValue, "bad tensor dimension", Error::kNoOffset, name);
    rows *= dims[i];
  }
  if (dims[0] == 0) throw Error(ErrorKind::InvalidValue, "bad tensor dimension", Error::kNoOffset, name);
  uint64_t row = row_bytes(encoding, dims[0]);
  if (rows > UINT64_MAX / row)
    throw Error(ErrorKind::Overflow, "tensor byte size overflows", Error::kNoOffset, name);
  Pending p;
  p.info.name = name;
  p.info.dims = std::move(dims);
  p.info.encoding = encoding;
  p.info.n_bytes = rows * row;
  p.produce = std::move(produce);
  tensors_.push_back(std::move(p));
}

void GgufWriter::add_tensor_bytes(const std::string& name, std::vector<uint64_t> dims,
                                  Encoding encoding, std::vector<uint8_t> bytes) {
  auto shared = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
  add_tensor(name, std::move(dims), encoding, [shared, name](uint8_t* dst, uint64_t n) {
    if (n != shared->size())
      throw Error(ErrorKind::InvalidValue,
                  "tensor has " + std::to_string(shared->size()) + " bytes, its shape needs " +
                      std::to_string(n),
                  Error::kNoOffset, name);
    std::memcpy(dst, shared->data(), n);
  });
}

GgufWriter::Layout GgufWriter::layout() const {
  uint64_t alignment = kGgufDefaultAlignment;
  if (const GgufValue* a = metadata_.find("general.alignment")) {
    if (a->type() != GgufType::Uint32 || std::get<uint32_t>(a->v) == 0 ||
        (std::get<uint32_t>(a->v) & (std::get<uint32_t>(a->v) - 1)) != 0)
      throw Error(ErrorKind::InvalidValue, "general.alignment must be a uint32 power of two");
    alignment = std::get<uint32_t>(a->v);
  }

  HeaderBytes h;
  h.put<uint32_t>(kGgufMagic);
  h.put<uint32_t>(3);
  h.put<uint64_t>(tensors_.size());
  h.put<uint64_t>(metadata_.size());
  for (const auto& [key, value] : metadata_.entries()) {
    h.put_string(key);
    h.put<uint32_t>(static_cast<uint32_t>(value.type()));
    h.put_value(value);
  }
  Layout l;
  uint64_t data_size = 0;
  for (const auto& p : tensors_) {
    l.offsets.push_back(data_size);
    h.put_string(p.info.name);
    h.put<uint32_t>(static_cast<uint32_t>(p.info.dims.size()));
    for (uint64_t d : p.info.dims) h.put<uint64_t>(d);
    h.put<uint32_t>(static_cast<uint32_t>(p.info.encoding));
    h.put<uint64_t>(data_size);
    data_size = align_up(data_size + p.info.n_bytes, alignment);
  }
  l.header = std::move(h.out);
  l.data_start = align_up(l.header.size(), alignment);
  l.total = l.data_start + data_size;
  return l;
}

uint64_t GgufWriter::file_bytes() const { return layout().total; }

void GgufWriter::write(const std::string& path,
                       const std::function<void(uint64_t, uint64_t)>& progress) const {
  const Layout l = layout();
  const uint64_t data_start = l.data_start, total = l.total;
  const std::vector<uint64_t>& offsets = l.offsets;

  // Write through a shared mapping of a temporary file, then rename: tensor
  // producers fill the file in place and a failure leaves nothing behind.
  PartFile file(path);
  const std::string& part = file.part_path();
  if (::ftruncate(file.fd(), static_cast<off_t>(total)) != 0) throw io_error("cannot size file", part);
  void* m = ::mmap(nullptr, total, PROT_READ | PROT_WRITE, MAP_SHARED, file.fd(), 0);
  if (m == MAP_FAILED) throw io_error("cannot map file for writing", part);
  uint8_t* map = static_cast<uint8_t*>(m);
  try {
    std::memcpy(map, l.header.data(), l.header.size());  // padding stays zero from ftruncate
    for (size_t i = 0; i < tensors_.size(); ++i) {
      tensors_[i].produce(map + data_start + offsets[i], tensors_[i].info.n_bytes);
      if (progress) progress(data_start + offsets[i] + tensors_[i].info.n_bytes, total);
    }
  } catch (...) {
    ::munmap(map, total);
    throw;
  }
  if (::munmap(map, total) != 0) throw io_error("cannot unmap file", part);
  file.commit();
}

}  // namespace synapse

#include "eval/kl_base_file.h"

#include <cstring>
#include <filesystem>

#include "encoding/fp16.h"
#include "synapse/error.h"

namespace synapse::eval {
namespace {

constexpr char kMagic[8] = {'S', 'Y', 'N', 'K', 'L', 'D', '0', '1'};
constexpr uint32_t kMaxCtx = 1u << 22;
constexpr uint32_t kMaxVocab = 1u << 22;

uint64_t scored_rows(const KlBaseHeader& h) {
  return static_cast<uint64_t>(h.n_chunks) * static_cast<uint64_t>(h.n_ctx - 1 - h.n_ctx / 2);
}

}  // namespace

KlBaseWriter::KlBaseWriter(std::string path, const KlBaseHeader& header, std::span<const int32_t> tokens)
    : path_(std::move(path)), part_(path_ + ".part"), header_(header), row_(header.n_vocab) {
  file_ = std::fopen(part_.c_str(), "wb");
  if (!file_) throw Error(ErrorKind::Io, "cannot create " + part_ + ": " + std::strerror(errno));
  const uint32_t sizes[3] = {header.n_ctx, header.n_vocab, header.n_chunks};
  write(kMagic, sizeof(kMagic));
  write(sizes, sizeof(sizes));
  write(tokens.data(), static_cast<size_t>(header.n_chunks) * header.n_ctx * sizeof(int32_t));
}

KlBaseWriter::~KlBaseWriter() {
  if (!file_) return;
  std::fclose(file_);
  std::remove(part_.c_str());
}

void KlBaseWriter::write(const void* data, size_t bytes) {
  if (std::fwrite(data, 1, bytes, file_) != bytes)
    throw Error(ErrorKind::Io, "cannot write " + part_ + ": " + std::strerror(errno));
}

void KlBaseWriter::write_row(std::span<const float> log_probs) {
  for (size_t i = 0; i < row_.size(); ++i) row_[i] = fp32_to_fp16(log_probs[i]);
  write(row_.data(), row_.size() * sizeof(uint16_t));
  ++rows_;
}

void KlBaseWriter::commit() {
  if (rows_ != scored_rows(header_))
    throw Error(ErrorKind::InvalidValue, part_ + ": " + std::to_string(rows_) + " rows written, " +
                                             std::to_string(scored_rows(header_)) + " expected");
  const bool closed = std::fclose(file_) == 0;
  file_ = nullptr;
  std::error_code error;
  if (closed) std::filesystem::rename(part_, path_, error);
  if (!closed || error) {
    std::remove(part_.c_str());
    throw Error(ErrorKind::Io, "cannot write " + path_ + (error ? ": " + error.message() : ""));
  }
}

KlBaseReader::KlBaseReader(const std::string& path) : file_(path) {
  const std::span<const uint8_t> bytes = file_.bytes();
  constexpr size_t kHeaderBytes = sizeof(kMagic) + 3 * sizeof(uint32_t);
  if (bytes.size() < sizeof(kMagic) || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    throw Error(ErrorKind::BadMagic, path + " is not a --kl-divergence-base file (no SYNKLD01 magic)", 0);
  if (bytes.size() < kHeaderBytes) throw Error(ErrorKind::Truncated, path + " ends inside its header", bytes.size());
  uint32_t sizes[3];
  std::memcpy(sizes, bytes.data() + sizeof(kMagic), sizeof(sizes));
  header_ = {sizes[0], sizes[1], sizes[2]};
  if (header_.n_ctx < 4 || header_.n_ctx > kMaxCtx || header_.n_vocab == 0 || header_.n_vocab > kMaxVocab ||
      header_.n_chunks == 0 || header_.n_chunks > kMaxCtx)
    throw Error(ErrorKind::InvalidValue, path + ": implausible sizes (n_ctx " + std::to_string(header_.n_ctx) +
                                             ", n_vocab " + std::to_string(header_.n_vocab) + ", chunks " +
                                             std::to_string(header_.n_chunks) + ")",
                sizeof(kMagic));
  const uint64_t n_tokens = static_cast<uint64_t>(header_.n_chunks) * header_.n_ctx;
  const uint64_t n_values = scored_rows(header_) * header_.n_vocab;
  const uint64_t expected = kHeaderBytes + n_tokens * sizeof(int32_t) + n_values * sizeof(uint16_t);
  if (bytes.size() != expected)
    throw Error(bytes.size() < expected ? ErrorKind::Truncated : ErrorKind::InvalidValue,
                path + " is " + std::to_string(bytes.size()) + " bytes; its header says " + std::to_string(expected),
                bytes.size());
  tokens_.resize(n_tokens);
  std::memcpy(tokens_.data(), bytes.data() + kHeaderBytes, n_tokens * sizeof(int32_t));
  for (int32_t t : tokens_)
    if (t < 0 || static_cast<uint32_t>(t) >= header_.n_vocab)
      throw Error(ErrorKind::InvalidValue, path + ": token " + std::to_string(t) + " is outside its vocabulary of " +
                                               std::to_string(header_.n_vocab));
  rows_ = bytes.data() + kHeaderBytes + n_tokens * sizeof(int32_t);
}

ChunkLayout KlBaseReader::layout() const {
  return {header_.n_ctx, header_.n_chunks, header_.n_ctx / 2};
}

std::span<const uint16_t> KlBaseReader::row(int64_t chunk, int64_t row) const {
  const uint64_t index = static_cast<uint64_t>(chunk) * static_cast<uint64_t>(layout().scored()) +
                         static_cast<uint64_t>(row);
  // fp16 rows start at an even offset (the header and tokens are whole
  // 4-byte words), so the mapping may be read as uint16_t.
  return {reinterpret_cast<const uint16_t*>(rows_) + index * header_.n_vocab, header_.n_vocab};
}

}  // namespace synapse::eval

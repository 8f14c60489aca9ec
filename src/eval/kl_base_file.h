// The reference log-probabilities a --kl-divergence run compares with:
// written by a --kl-divergence-base run, full rows in fp16.
//
// Layout (little-endian): the magic "SYNKLD01"; uint32 n_ctx, n_vocab,
// n_chunks; int32 tokens[n_chunks * n_ctx] (the text's tokens, as
// tokenized, before any BOS replacement); then for every chunk its scored
// rows (ChunkLayout::scored()), each n_vocab fp16 log-probabilities. fp16
// keeps a log-probability near 0 (a likely token) to about 5e-4 and one
// near -16 to 1e-2, which moves a KL divergence by far less than the
// differences it is used to measure.
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

#include "eval/perplexity.h"
#include "format/mapped_file.h"

namespace synapse::eval {

struct KlBaseHeader {
  uint32_t n_ctx = 0;
  uint32_t n_vocab = 0;
  uint32_t n_chunks = 0;
};

// Writes to PATH.part and renames it to PATH on commit(), so a failed or
// interrupted run never leaves a partial file under the name asked for.
class KlBaseWriter {
 public:
  // Throws Error(Io) when the file cannot be created.
  KlBaseWriter(std::string path, const KlBaseHeader& header, std::span<const int32_t> tokens);
  ~KlBaseWriter();  // removes PATH.part unless committed
  KlBaseWriter(const KlBaseWriter&) = delete;
  KlBaseWriter& operator=(const KlBaseWriter&) = delete;

  void write_row(std::span<const float> log_probs);
  // Checks every row was written, flushes and renames. Throws Error(Io).
  void commit();

 private:
  void write(const void* data, size_t bytes);

  std::string path_, part_;
  KlBaseHeader header_;
  FILE* file_ = nullptr;
  uint64_t rows_ = 0;
  std::vector<uint16_t> row_;
};

// Maps a file and checks it up front: the magic, sane sizes, the exact
// file length, tokens inside the vocabulary. Throws Error(Io, BadMagic,
// Truncated, InvalidValue) naming the file.
class KlBaseReader {
 public:
  explicit KlBaseReader(const std::string& path);

  const KlBaseHeader& header() const { return header_; }
  const std::vector<int32_t>& tokens() const { return tokens_; }
  ChunkLayout layout() const;
  // Row `row` of chunk `chunk`, as fp16 log-probabilities.
  std::span<const uint16_t> row(int64_t chunk, int64_t row) const;

 private:
  MappedFile file_;
  KlBaseHeader header_;
  std::vector<int32_t> tokens_;
  const uint8_t* rows_ = nullptr;  // in file_
};

}  // namespace synapse::eval

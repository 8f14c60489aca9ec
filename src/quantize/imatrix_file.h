// llama.cpp's importance matrix ("imatrix") files: per weight matrix, the
// sums of the squared activations each of its columns met while llama.cpp's
// imatrix tool ran the model on calibration text, and how many token rows
// that was. llama-quantize divides one by the other and hands the result to
// ggml's quantizers, which then fit each block's scales with those weights
// (quantize_row_weighted, encoding.h).
//
// Two layouts: GGUF (what llama.cpp's imatrix tool writes today) and its
// legacy ".dat" one, which read_imatrix tells apart by the GGUF magic.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "format/gguf.h"

namespace synapse::quant {

struct ImatrixEntry {
  // One row of row_elems sums per matrix (expert of a 3-D tensor), the
  // matrices one after the other: in_sum2.size() = row_elems * counts.size().
  std::vector<float> in_sum2;
  std::vector<float> counts;  // token rows seen, per matrix
};

struct Imatrix {
  std::vector<std::string> datasets;  // the calibration texts
  uint32_t chunk_count = 0;           // chunks of calibration text processed
  uint32_t chunk_size = 0;            // tokens per chunk (0 in legacy files)
  std::map<std::string, ImatrixEntry> entries;  // by weight name, e.g. "blk.0.attn_q.weight"
};

// Reads a GGUF imatrix (keys general.type, imatrix.datasets,
// imatrix.chunk_count, imatrix.chunk_size; tensors NAME.in_sum2 and
// NAME.counts, F32; NAME.in_sum is accepted and ignored) or a legacy one
// (counts: the entry's one call count; a count <= 0, whose sums llama.cpp
// uses as they are, is read as 1, which gives the same importance). Throws
// synapse::Error naming the path: the GGUF reader's errors, MissingKey for
// metadata llama-quantize requires, InvalidType for a key or tensor of the
// wrong type, InvalidValue for an entry without one of its two tensors,
// sums that do not split into one row per count, non-finite values or
// negative sums (of squares), Truncated for a short legacy file.
Imatrix read_imatrix(const std::string& path);
// The same from bytes in memory (tests and the fuzzer).
Imatrix parse_imatrix(std::span<const uint8_t> bytes);

// Writes `m` as llama.cpp's imatrix tool does (save_imatrix): the four keys,
// then per entry in name order NAME.in_sum2 [row_elems, n_matrices] and
// NAME.counts [1, n_matrices] (ggml drops trailing dimensions of 1), through
// PATH.part renamed into place. Throws InvalidValue for an entry without
// counts or whose sums do not split into one row per count.
void write_imatrix(const Imatrix& m, const std::string& path);

// The per-column importance llama-quantize hands to the quantizer: each
// matrix's sums divided by its count rounded to an integer (llama.cpp's
// loader keeps counts as integers), 1 for every column of a matrix whose
// count rounds to 0 or less (it saw no tokens). in_sum2.size() values.
std::vector<float> importance(const ImatrixEntry& e);

// The metadata llama-quantize records about the imatrix it used (its
// kv_overrides, applied after general.file_type in this order):
// quantize.imatrix.file (`file` as given) and quantize.imatrix.dataset (the
// first dataset, if any), both cut as its 128-byte buffers cut them, then
// quantize.imatrix.entries_count and, when the chunk count is positive as a
// signed 32-bit int, quantize.imatrix.chunks_count (both uint32).
std::vector<std::pair<std::string, GgufValue>> imatrix_metadata(const Imatrix& m, const std::string& file);

}  // namespace synapse::quant

// Small helpers the subcommands share: reading logits rows and writing
// results (JSON numbers, raw float32 files).
#pragma once

#include <cstdint>
#include <cstdio>
#include <span>
#include <string>
#include <vector>

namespace synapse::peer {

// Index of the largest value; the lowest index wins a tie, as llama.cpp's
// greedy sampler does.
int32_t argmax(std::span<const float> values);
// Indices of the k largest values, largest first (ties: lower index first).
std::vector<int32_t> top_k(std::span<const float> values, size_t k);

// A float as a JSON number that reads back to the same float; null when not finite.
std::string json_float(float value);

// A binary output file, or stdout when the path is "-". Throws PeerError on
// open and write failures; close() reports a failed flush.
class OutputFile {
 public:
  explicit OutputFile(const std::string& path);
  ~OutputFile();
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  void write(std::span<const float> values);
  void write_text(const std::string& text);
  void close();

 private:
  std::string path_;
  std::FILE* file_ = nullptr;
};

}  // namespace synapse::peer

// Reading the shared tokenizer test vectors: tokenizer-vectors/*.jsonl
// ({text, ids, ...} per line) and llama.cpp's .inp/.out pairs.
#pragma once

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "support/command_runner.h"

namespace synapse::test {

struct TokenizerVector {
  std::string text;
  std::vector<int32_t> ids;
};

inline std::string read_text_file(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

inline std::vector<TokenizerVector> read_jsonl_vectors(const std::filesystem::path& path) {
  std::vector<TokenizerVector> vectors;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    if (line.empty()) continue;
    const auto j = nlohmann::json::parse(line);
    vectors.push_back({j.at("text").get<std::string>(), j.at("ids").get<std::vector<int32_t>>()});
  }
  return vectors;
}

// Inputs are separated by "\n__ggml_vocab_test__\n"; line i of .out holds the ids of input i.
inline std::vector<TokenizerVector> read_llamacpp_vectors(const std::filesystem::path& inp) {
  const std::string text = read_text_file(inp);
  const std::string separator = "\n__ggml_vocab_test__\n";
  std::vector<TokenizerVector> vectors;
  for (size_t start = 0;;) {
    const size_t end = text.find(separator, start);
    vectors.push_back({text.substr(start, end == std::string::npos ? std::string::npos : end - start), {}});
    if (end == std::string::npos) break;
    start = end + separator.size();
  }
  std::ifstream out(inp.string().substr(0, inp.string().size() - 4) + ".out");
  size_t i = 0;
  for (std::string line; std::getline(out, line) && i < vectors.size(); ++i) {
    std::istringstream ids(line);
    for (int32_t id; ids >> id;) vectors[i].ids.push_back(id);
  }
  // The file ends with a separator-free last input, possibly followed by a newline.
  vectors.resize(i);
  return vectors;
}

}  // namespace synapse::test

// Skips the current test when a shared data file is absent.
#define SYNAPSE_SKIP_UNLESS_SHARED(path)                                              \
  do {                                                                                \
    if (!std::filesystem::exists(path)) GTEST_SKIP() << "shared test data absent: " << (path); \
  } while (0)

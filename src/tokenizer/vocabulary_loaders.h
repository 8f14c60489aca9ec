// Reading a Vocabulary from each supported file kind. Each loader fills the
// vocabulary and calls finalize(), so what it returns is consistent.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "format/gguf.h"
#include "tokenizer/vocabulary.h"

namespace synapse {

// tokenizer.ggml.* keys of a GGUF file's metadata.
Vocabulary vocabulary_from_gguf(const GgufMetadata& metadata);

// A Hugging Face tokenizer.json (byte-level BPE). `config_json` is the
// sibling tokenizer_config.json, or "" when there is none; it tells whether BOS
// is added when the post-processor does not.
Vocabulary vocabulary_from_hf_json(std::string_view tokenizer_json, std::string_view config_json);

// A SentencePiece ModelProto (.model), BPE model type.
Vocabulary vocabulary_from_sentencepiece(std::string_view model_bytes);

// The PCRE2 patterns llama.cpp uses for a tokenizer.ggml.pre value.
// Throws Error(Unsupported) for one we do not know.
std::vector<std::string> pretokenizer_patterns_for(const std::string& pre);

}  // namespace synapse

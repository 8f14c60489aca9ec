// The tokenizer written into a synthetic model: a made-up byte-level BPE
// vocabulary (llama.cpp's "gpt2" vocab type: the 256 GPT-2 byte tokens,
// merges that each make one new token, and the family's special tokens at the
// end), or a real vocabulary read from a tokenizer file.
#pragma once

#include <cstdint>
#include <string>

#include "format/gguf.h"
#include "tokenizer/vocabulary.h"

namespace synapse::synth {

// Writes tokenizer.ggml.* for a vocabulary of exactly n_vocab tokens in the
// style of `family` (llama3, smollm, qwen2, olmo): its pre-tokenizer name,
// special tokens, BOS/EOS and add_bos_token. Throws Usage when n_vocab cannot
// hold the byte tokens and the special tokens.
void write_vocab(GgufMetadata& md, const std::string& family, uint32_t n_vocab);

// Writes tokenizer.ggml.* for a real vocabulary as llama.cpp's converter
// does: model "llama" (SentencePiece: scores, add_space_prefix) or "gpt2"
// (byte-level BPE: merges, and the pre-tokenizer name whose patterns the
// vocabulary uses). Throws Unsupported for patterns llama.cpp has no name for.
// (A tokenizer.json's NFC normalizer has no GGUF key; llama.cpp applies none.)
void write_real_vocab(GgufMetadata& md, const Vocabulary& vocab);

}  // namespace synapse::synth

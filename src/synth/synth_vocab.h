// The tokenizer written into a synthetic model: a made-up byte-level BPE
// vocabulary (llama.cpp's "gpt2" vocab type: the 256 GPT-2 byte tokens,
// merges that each make one new token, and the family's special tokens at the
// end). A real vocabulary is written by tokenizer/vocabulary_writer.h.
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

}  // namespace synapse::synth

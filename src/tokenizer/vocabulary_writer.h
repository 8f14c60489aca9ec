// A vocabulary written as tokenizer.ggml.* metadata, keyed as llama.cpp's
// convert_hf_to_gguf.py writes it, so llama.cpp's own tokenizer reads it.
#pragma once

#include <cstdint>

#include "format/gguf.h"
#include "tokenizer/vocabulary.h"

namespace synapse {

// Model "llama" (SentencePiece: scores, add_space_prefix) or "gpt2"
// (byte-level BPE: merges, and the pre-tokenizer name whose patterns the
// vocabulary uses). Ids past the vocabulary's last token up to n_vocab (the
// model's embedding rows, when larger) are written as unused "[PADn]"
// tokens, as the converter pads them. Throws Unsupported for patterns
// llama.cpp has no name for, InvalidValue when the vocabulary has more than
// n_vocab tokens (0: no padding, no check). (A tokenizer.json's NFC
// normalizer has no GGUF key; llama.cpp applies none.)
void write_vocabulary(GgufMetadata& md, const Vocabulary& vocab, uint32_t n_vocab = 0);

}  // namespace synapse

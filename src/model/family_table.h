// The dense decoder families we build, as data: what differs between them is
// a handful of features of the attention block, not the forward pass.
#pragma once

#include <string>

#include "ir/attributes.h"

namespace synapse {

struct DenseFamily {
  const char* arch;             // general.architecture
  ir::RopeLayout rope_layout;   // llama.cpp's LLAMA_ROPE_TYPE_NORM or _NEOX
  bool qkv_bias;                // attn_{q,k,v}.bias
  bool qk_norm;                 // attn_{q,k}_norm.weight: RmsNorm per head over head_dim, before RoPE
  bool rope_freqs;              // reads rope_freqs.weight (Llama 3 rope scaling) when present
};

// The family of a general.architecture value. Throws Error(Unsupported)
// naming it and listing the supported ones.
const DenseFamily& find_family(const std::string& arch);

// The family llama2.c checkpoints belong to.
const DenseFamily& llama_family();

}  // namespace synapse

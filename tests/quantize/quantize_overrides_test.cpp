// quantize_model with per-tensor type overrides on synth models: the
// overridden weights are written in the asked type (or llama.cpp's row
// fallback), the callback says which pattern chose each; plan_quantize lays
// out exactly the file quantize_model writes, without encoding.
#include <gtest/gtest.h>

#include <filesystem>
#include <map>

#include "format/gguf_reader.h"
#include "quantize/quantize_model.h"
#include "support/temp_dir.h"
#include "support/tensor_encodings.h"
#include "synth/synth.h"

namespace synapse::quant {
namespace {

// A 2-layer llama of `n_embd` (rows of the attention and FFN inputs) and
// `n_ff` (the rows of ffn_down).
std::string synth_llama(const test::TempDir& dir, uint32_t n_embd, uint32_t n_ff) {
  SynthOptions o;
  o.arch = "llama";
  o.seed = 3;
  o.n_layer = 2;
  o.n_embd = n_embd;
  o.n_head = n_embd / 32;
  o.n_head_kv = 1;
  o.n_ff = n_ff;
  const std::string path = dir.file("llama-" + std::to_string(n_embd) + ".gguf");
  synth_model(o, path);
  return path;
}

QuantizeOptions options(const std::string& in, const std::string& out, const std::string& type,
                        const std::vector<std::string>& items) {
  QuantizeOptions o;
  o.input = in;
  o.output = out;
  o.type = find_quant_type(type);
  o.threads = 2;
  for (const std::string& item : items) o.overrides.push_back(parse_tensor_type(item));
  return o;
}

TEST(QuantizeOverrides, OverriddenWeightsAreWrittenInTheirTypeAndSaidSo) {
  test::TempDir dir;
  const std::string in = synth_llama(dir, 256, 512), out = dir.file("out.gguf");
  const QuantizeOptions o = options(in, out, "q4_k_m", {"attn_v=q8_0", "blk\\.1\\.ffn=q4_0", "attn_k=f16"});
  std::map<std::string, std::string> chosen_by;
  quantize_model(o, [&](const TensorDone& t) {
    if (t.override) chosen_by[t.name] = t.override->pattern;
  });
  const auto e = test::tensor_encodings(out);
  for (const char* name : {"blk.0.attn_v.weight", "blk.1.attn_v.weight"}) EXPECT_EQ(e.at(name), Encoding::Q8_0);
  for (const char* name : {"blk.1.ffn_up.weight", "blk.1.ffn_gate.weight", "blk.1.ffn_down.weight"})
    EXPECT_EQ(e.at(name), Encoding::Q4_0) << name;
  EXPECT_EQ(e.at("blk.0.attn_k.weight"), Encoding::F16);
  EXPECT_EQ(e.at("blk.0.ffn_down.weight"), Encoding::Q4_K);  // the mix's: extra bits in layer 1 of 2 only
  EXPECT_EQ(e.at("blk.0.attn_q.weight"), Encoding::Q4_K);
  EXPECT_EQ(chosen_by.size(), 7u);
  EXPECT_EQ(chosen_by.at("blk.1.ffn_down.weight"), "blk\\.1\\.ffn");
  EXPECT_EQ(chosen_by.count("blk.0.attn_q.weight"), 0u);
}

// Rows of 96 take no 256-element block, ffn_down's rows of 100 no
// 32-element one: llama.cpp falls back to q5_0 / q8_0, then f16.
TEST(QuantizeOverrides, RowsThatDoNotFitFallBackAsLlamaCpps) {
  test::TempDir dir;
  const std::string in = synth_llama(dir, 96, 100), out = dir.file("out.gguf");
  quantize_model(options(in, out, "q8_0", {"attn_q=q4_k", "attn_output=q6_k", "ffn_down=q4_0", "ffn_up=q5_1"}));
  const auto e = test::tensor_encodings(out);
  EXPECT_EQ(e.at("blk.0.attn_q.weight"), Encoding::Q5_0);
  EXPECT_EQ(e.at("blk.0.attn_output.weight"), Encoding::Q8_0);
  EXPECT_EQ(e.at("blk.0.ffn_down.weight"), Encoding::F16);
  EXPECT_EQ(e.at("blk.0.ffn_up.weight"), Encoding::Q5_1);
}

TEST(QuantizePlan, LaysOutExactlyTheFileQuantizeWrites) {
  test::TempDir dir;
  const std::string in = synth_llama(dir, 96, 100), out = dir.file("out.gguf");
  for (const char* type : {"q4_k_m", "q4_0", "f16"}) {
    const QuantizeOptions o = options(in, out, type, {"attn_v=q8_0", "ffn_down=q6_k"});
    const QuantizePlan plan = plan_quantize(o);
    EXPECT_FALSE(std::filesystem::exists(out)) << "planning writes nothing";
    quantize_model(o);
    EXPECT_EQ(plan.file_bytes, std::filesystem::file_size(out)) << type;
    const GgufFile written = GgufFile::open(out);
    ASSERT_EQ(plan.tensors.size(), written.tensors().size());
    EXPECT_EQ(plan.alignment, written.alignment());
    for (size_t i = 0; i < plan.tensors.size(); ++i) {
      const GgufTensorInfo& t = written.tensors()[i];
      EXPECT_EQ(plan.tensors[i].name, t.name);
      EXPECT_EQ(plan.tensors[i].encoding, t.encoding) << t.name;
      EXPECT_EQ(plan.tensors[i].bytes, t.n_bytes) << t.name;
      EXPECT_EQ(plan.tensors[i].dims, t.dims) << t.name;
    }
    std::filesystem::remove(out);
  }
}

}  // namespace
}  // namespace synapse::quant

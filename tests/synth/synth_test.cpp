// synapse synth end to end: the files it writes, read back with our reader.
// Expectations are written out here from llama.cpp's loader, independently
// of the tables in src/synth.
#include "synth/synth.h"

#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <map>
#include <set>
#include <tuple>

#include "encoding/encoding.h"
#include "format/gguf_reader.h"
#include "support/byte_hash.h"
#include "support/temp_dir.h"
#include "support/test_files.h"
#include "synapse/error.h"

namespace synapse {
namespace {

SynthOptions options(const std::string& arch, const std::string& type) {
  SynthOptions o;
  o.arch = arch;
  o.preset = "tiny";
  o.type = type;
  return o;
}

GgufFile synth_file(const test::TempDir& dir, const SynthOptions& o,
                    const std::string& name = "m.gguf") {
  synth_model(o, dir.file(name));
  return GgufFile::open(dir.file(name));
}

Encoding encoding_of(const GgufFile& f, const std::string& tensor) {
  const GgufTensorInfo* t = f.find_tensor(tensor);
  if (!t) ADD_FAILURE() << "missing tensor " << tensor;
  return t ? t->encoding : Encoding::F32;
}

std::vector<uint64_t> dims_of(const GgufFile& f, const std::string& tensor) {
  const GgufTensorInfo* t = f.find_tensor(tensor);
  return t ? t->dims : std::vector<uint64_t>{};
}

// What llama.cpp's loader expects per block, by architecture.
struct ArchCase {
  const char* arch;
  const char* gguf_arch;
  bool tied;  // tiny is tied wherever the loader allows it
  bool moe;
  std::vector<const char*> block_tensors;
};

const std::vector<ArchCase>& arch_cases() {
  static const std::vector<const char*> attn = {"attn_norm.weight",   "attn_q.weight",
                                                "attn_k.weight",      "attn_v.weight",
                                                "attn_output.weight", "ffn_norm.weight"};
  auto with = [](std::vector<const char*> a, std::vector<const char*> b) {
    a.insert(a.end(), b.begin(), b.end());
    return a;
  };
  const std::vector<const char*> dense = {"ffn_gate.weight", "ffn_up.weight", "ffn_down.weight"};
  const std::vector<const char*> experts = {"ffn_gate_inp.weight", "ffn_gate_exps.weight",
                                            "ffn_up_exps.weight", "ffn_down_exps.weight"};
  const std::vector<const char*> qk_norm = {"attn_q_norm.weight", "attn_k_norm.weight"};
  const std::vector<const char*> qkv_bias = {"attn_q.bias", "attn_k.bias", "attn_v.bias"};
  const std::vector<const char*> shexp = {"ffn_gate_inp_shexp.weight", "ffn_gate_shexp.weight",
                                          "ffn_up_shexp.weight", "ffn_down_shexp.weight"};
  static const std::vector<ArchCase> cases = {
      {"llama", "llama", true, false, with(attn, dense)},
      {"qwen2", "qwen2", true, false, with(with(attn, qkv_bias), dense)},
      {"qwen3", "qwen3", true, false, with(with(attn, qk_norm), dense)},
      {"olmoe", "olmoe", false, true, with(with(attn, qk_norm), experts)},
      {"qwen2moe", "qwen2moe", false, true, with(with(with(attn, qkv_bias), experts), shexp)},
      {"qwen3moe", "qwen3moe", true, true, with(with(attn, qk_norm), experts)},
      {"mixtral", "llama", true, true, with(attn, experts)},
  };
  return cases;
}

// llama_ftype per --type, and the encodings its 2-D weights may take.
struct TypeCase {
  const char* type;
  uint32_t file_type;
  Encoding output;  // output.weight, or token_embd.weight when tied
  std::set<Encoding> weights;
};

const std::vector<TypeCase>& type_cases() {
  using E = Encoding;
  static const std::vector<TypeCase> cases = {
      {"f32", 0, E::F32, {E::F32}},
      {"f16", 1, E::F16, {E::F16}},
      {"bf16", 32, E::BF16, {E::BF16}},
      {"q8_0", 7, E::Q8_0, {E::Q8_0}},
      {"q4_0", 2, E::Q6_K, {E::Q4_0}},
      {"q4_1", 3, E::Q6_K, {E::Q4_1}},
      {"q5_0", 8, E::Q6_K, {E::Q5_0}},
      {"q5_1", 9, E::Q6_K, {E::Q5_1}},
      {"q4_k", 14, E::Q6_K, {E::Q4_K, E::Q5_K}},
      {"q5_k", 16, E::Q6_K, {E::Q5_K}},
      {"q6_k", 18, E::Q6_K, {E::Q6_K}},
      {"q4_k_m", 15, E::Q6_K, {E::Q4_K, E::Q6_K}},
  };
  return cases;
}

void expect_finite(const GgufFile& f, const GgufTensorInfo& t) {
  const auto e = t.encoding;
  const uint64_t row = t.dims[0];
  const uint64_t row_size = row_bytes(e, row);
  const std::span<const uint8_t> data = f.tensor_data(t);
  std::vector<float> out(row);
  for (uint64_t r = 0; r < t.n_elements() / row; ++r) {
    dequantize_row(e, data.data() + r * row_size, out.data(), static_cast<int64_t>(row));
    for (float v : out)
      if (!std::isfinite(v)) {
        ADD_FAILURE() << t.name << " row " << r << " holds " << v;
        return;
      }
  }
}

void expect_vocab(const GgufFile& f, uint64_t n_vocab) {
  const GgufMetadata& md = f.metadata();
  EXPECT_EQ(md.get_string("tokenizer.ggml.model"), "gpt2");
  const GgufArray& tokens = md.get_array("tokenizer.ggml.tokens");
  const GgufArray& types = md.get_array("tokenizer.ggml.token_type");
  const GgufArray& merges = md.get_array("tokenizer.ggml.merges");
  ASSERT_EQ(tokens.size(), n_vocab);
  ASSERT_EQ(types.size(), n_vocab);
  EXPECT_EQ(types.elem, GgufType::Int32);
  std::set<std::string> known;
  for (size_t i = 0; i < tokens.size(); ++i) known.insert(tokens.string_at(i));
  EXPECT_EQ(known.size(), n_vocab) << "tokens are not unique";
  for (size_t i = 0; i < merges.size(); ++i) {
    const std::string& m = merges.string_at(i);
    const size_t space = m.find(' ');
    ASSERT_NE(space, std::string::npos) << m;
    const std::string a = m.substr(0, space), b = m.substr(space + 1);
    EXPECT_TRUE(known.count(a) && known.count(b) && known.count(a + b)) << "merge " << m;
  }
  for (const char* key : {"tokenizer.ggml.bos_token_id", "tokenizer.ggml.eos_token_id"}) {
    const int64_t id = md.get_int(key);
    ASSERT_LT(id, static_cast<int64_t>(n_vocab));
    EXPECT_EQ(types.int_at(static_cast<size_t>(id)), 3) << key << " is not a control token";
  }
}

class SynthArchType : public ::testing::TestWithParam<std::tuple<ArchCase, TypeCase>> {};

TEST_P(SynthArchType, WritesWhatLlamaCppLoads) {
  const auto& [ac, tc] = GetParam();
  test::TempDir dir;
  const GgufFile f = synth_file(dir, options(ac.arch, tc.type));
  const GgufMetadata& md = f.metadata();
  const std::string a = ac.gguf_arch;

  EXPECT_EQ(md.get_string("general.architecture"), a);
  EXPECT_EQ(md.get_int("general.file_type"), tc.file_type);
  EXPECT_NE(md.get_string("general.description").find("random weights"), std::string::npos);
  for (const char* key :
       {"context_length", "embedding_length", "block_count", "feed_forward_length",
        "attention.head_count", "attention.head_count_kv", "rope.freq_base",
        "attention.layer_norm_rms_epsilon", "rope.dimension_count", "vocab_size"})
    EXPECT_TRUE(md.contains(a + "." + key)) << key;
  EXPECT_EQ(md.get_int(a + ".block_count"), 2);
  EXPECT_EQ(md.get_int(a + ".embedding_length"), 256);
  EXPECT_EQ(md.get_int(a + ".rope.dimension_count"), 64);
  if (ac.moe) {
    EXPECT_EQ(md.get_int(a + ".expert_count"), 4);
    EXPECT_EQ(md.get_int(a + ".expert_used_count"), 2);
  } else {
    EXPECT_FALSE(md.contains(a + ".expert_count"));
  }

  std::set<std::string> expected = {"token_embd.weight", "output_norm.weight"};
  if (!ac.tied) expected.insert("output.weight");
  for (int i = 0; i < 2; ++i)
    for (const char* t : ac.block_tensors) expected.insert("blk." + std::to_string(i) + "." + t);
  std::set<std::string> actual;
  for (const GgufTensorInfo& t : f.tensors()) actual.insert(t.name);
  EXPECT_EQ(actual, expected);
  EXPECT_EQ(f.tensors().size(), expected.size());

  EXPECT_EQ(dims_of(f, "token_embd.weight"), (std::vector<uint64_t>{256, 512}));
  EXPECT_EQ(dims_of(f, "blk.0.attn_q.weight"), (std::vector<uint64_t>{256, 256}));
  EXPECT_EQ(dims_of(f, "blk.1.attn_output.weight"), (std::vector<uint64_t>{256, 256}));
  // olmoe's k is as wide as q; elsewhere 2 kv heads of 64.
  const uint64_t kv = std::string(ac.arch) == "olmoe" ? 256 : 128;
  EXPECT_EQ(dims_of(f, "blk.0.attn_v.weight"), (std::vector<uint64_t>{256, kv}));
  if (ac.moe) {
    EXPECT_EQ(dims_of(f, "blk.0.ffn_gate_inp.weight"), (std::vector<uint64_t>{256, 4}));
    EXPECT_EQ(dims_of(f, "blk.0.ffn_up_exps.weight"), (std::vector<uint64_t>{256, 256, 4}));
    EXPECT_EQ(dims_of(f, "blk.1.ffn_down_exps.weight"), (std::vector<uint64_t>{256, 256, 4}));
  } else {
    EXPECT_EQ(dims_of(f, "blk.1.ffn_down.weight"), (std::vector<uint64_t>{512, 256}));
  }

  const std::string output = ac.tied ? "token_embd.weight" : "output.weight";
  EXPECT_EQ(encoding_of(f, output), tc.output);
  for (const GgufTensorInfo& t : f.tensors()) {
    const auto e = t.encoding;
    if (t.dims.size() == 1 || t.name.find("ffn_gate_inp.weight") != std::string::npos) {
      EXPECT_EQ(e, Encoding::F32) << t.name;
    } else if (t.name != output) {
      EXPECT_TRUE(tc.weights.count(e)) << t.name << " is " << static_cast<int>(e);
    }
    expect_finite(f, t);
  }
  expect_vocab(f, 512);
}

INSTANTIATE_TEST_SUITE_P(Synth, SynthArchType,
                         ::testing::Combine(::testing::ValuesIn(arch_cases()),
                                            ::testing::ValuesIn(type_cases())),
                         [](const auto& info) {
                           return std::string(std::get<0>(info.param).arch) + "_" +
                                  std::get<1>(info.param).type;
                         });

TEST(SynthDeterminism, SameSeedSameBytesDifferentSeedDifferentBytes) {
  test::TempDir dir;
  SynthOptions o = options("qwen2moe", "q4_k_m");
  o.seed = 7;
  o.threads = 1;
  synth_model(o, dir.file("a.gguf"));
  o.threads = 3;  // rows are seeded on their own: the thread count changes nothing
  synth_model(o, dir.file("b.gguf"));
  o.seed = 8;
  synth_model(o, dir.file("c.gguf"));
  const std::vector<uint8_t> a = test::read_bytes(dir.file("a.gguf"));
  EXPECT_EQ(a, test::read_bytes(dir.file("b.gguf")));
  const std::vector<uint8_t> c = test::read_bytes(dir.file("c.gguf"));
  ASSERT_EQ(a.size(), c.size());
  EXPECT_NE(a, c);
}

// FNV-1a of files the serial writer with the plain Q8_0 loop wrote (commit
// 8ffa9ea): making synth faster must not change a seed's bytes. A deliberate
// change of the metadata or the weights' distribution updates these.
TEST(SynthDeterminism, TinyFilesKeepTheBytesOfTheFirstWriter) {
  const struct {
    const char* arch;
    const char* type;
    uint64_t hash;
  } kGolden[] = {
      {"qwen3moe", "q8_0", 0x6ca4a929051071fdull},
      {"llama", "q4_k_m", 0x59c6f1f3c8e02d42ull},
      {"qwen2", "f16", 0x1ef62b0cbf3f1eacull},
  };
  test::TempDir dir;
  for (const auto& g : kGolden) {
    SynthOptions o = options(g.arch, g.type);
    o.seed = 5;
    synth_model(o, dir.file("g.gguf"));
    EXPECT_EQ(test::fnv1a(test::read_bytes(dir.file("g.gguf"))), g.hash) << g.arch << " " << g.type;
  }
}

TEST(SynthWeights, ProjectionsHaveUnitFanInScaleAndNormsSitNearOne) {
  test::TempDir dir;
  const GgufFile f = synth_file(dir, options("llama", "f32"));
  auto values = [&](const std::string& name) {
    const GgufTensorInfo* t = f.find_tensor(name);
    const std::span<const uint8_t> d = f.tensor_data(*t);
    std::vector<float> v(t->n_elements());
    std::memcpy(v.data(), d.data(), v.size() * sizeof(float));
    return v;
  };
  const std::vector<float> q = values("blk.0.attn_q.weight");
  double sum2 = 0;
  for (float x : q) sum2 += double(x) * x;
  EXPECT_NEAR(std::sqrt(sum2 / q.size()), 1 / std::sqrt(256.0), 0.002);
  for (float x : values("blk.1.ffn_norm.weight")) EXPECT_NEAR(x, 1.0f, 0.1f);
}

TEST(SynthOverrides, ReplaceThePresetShape) {
  test::TempDir dir;
  SynthOptions o = options("qwen3moe", "f16");
  o.n_layer = 3;
  o.n_embd = 128;
  o.n_head = 4;
  o.n_head_kv = 1;
  o.n_ff = 64;
  o.n_vocab = 1000;
  o.n_expert = 6;
  o.n_expert_used = 3;
  const GgufFile f = synth_file(dir, o);
  const GgufMetadata& md = f.metadata();
  EXPECT_EQ(md.get_int("qwen3moe.block_count"), 3);
  EXPECT_EQ(md.get_int("qwen3moe.expert_count"), 6);
  EXPECT_EQ(md.get_int("qwen3moe.expert_used_count"), 3);
  EXPECT_EQ(md.get_int("qwen3moe.expert_feed_forward_length"), 64);
  EXPECT_EQ(md.get_int("qwen3moe.attention.key_length"), 32);
  EXPECT_EQ(dims_of(f, "blk.2.attn_k.weight"), (std::vector<uint64_t>{128, 32}));
  EXPECT_EQ(dims_of(f, "blk.2.attn_k_norm.weight"), (std::vector<uint64_t>{32}));
  EXPECT_EQ(dims_of(f, "blk.2.ffn_gate_exps.weight"), (std::vector<uint64_t>{128, 64, 6}));
  EXPECT_EQ(dims_of(f, "token_embd.weight"), (std::vector<uint64_t>{128, 1000}));
  expect_vocab(f, 1000);
}

TEST(SynthTypes, Q4KMGivesMoreBitsToTheLayersLlamaCppDoes) {
  test::TempDir dir;
  SynthOptions o = options("llama", "q4_k_m");
  o.n_layer = 8;  // use_more_bits: layers 0, 3, 6 and 7
  const GgufFile f = synth_file(dir, o);
  for (int i = 0; i < 8; ++i) {
    const Encoding more = (i == 0 || i == 3 || i == 6 || i == 7) ? Encoding::Q6_K : Encoding::Q4_K;
    const std::string blk = "blk." + std::to_string(i) + ".";
    EXPECT_EQ(encoding_of(f, blk + "attn_v.weight"), more) << i;
    EXPECT_EQ(encoding_of(f, blk + "ffn_down.weight"), more) << i;
    EXPECT_EQ(encoding_of(f, blk + "attn_q.weight"), Encoding::Q4_K) << i;
    EXPECT_EQ(encoding_of(f, blk + "ffn_up.weight"), Encoding::Q4_K) << i;
  }
  EXPECT_EQ(encoding_of(f, "token_embd.weight"), Encoding::Q6_K);

  o.pure = true;
  const GgufFile p = synth_file(dir, o, "pure.gguf");
  EXPECT_EQ(encoding_of(p, "blk.0.attn_v.weight"), Encoding::Q4_K);
  EXPECT_EQ(encoding_of(p, "token_embd.weight"), Encoding::Q4_K);
}

TEST(SynthTypes, RowsThatDoNotFillABlockFallBackAsLlamaCppDoes) {
  test::TempDir dir;
  SynthOptions o = options("llama", "q4_k");
  o.n_embd = 96;  // a multiple of 32, not of 256
  o.n_head = 2;
  o.n_head_kv = 1;
  const GgufFile f = synth_file(dir, o);
  EXPECT_EQ(encoding_of(f, "blk.0.attn_q.weight"), Encoding::Q5_0);
  EXPECT_EQ(encoding_of(f, "blk.1.ffn_down.weight"), Encoding::Q4_K);  // rows of n_ff = 512
  EXPECT_EQ(encoding_of(f, "token_embd.weight"), Encoding::Q8_0);  // tied output: llama.cpp's rule

  o.type = "q6_k";
  EXPECT_EQ(encoding_of(synth_file(dir, o, "q6.gguf"), "blk.0.attn_q.weight"), Encoding::Q8_0);
  o.type = "q5_k";
  EXPECT_EQ(encoding_of(synth_file(dir, o, "q5.gguf"), "blk.0.attn_q.weight"), Encoding::Q5_1);
  o.type = "q4_k";
  o.n_embd = 80;  // not even a multiple of 32
  const GgufFile g = synth_file(dir, o, "f16.gguf");
  EXPECT_EQ(encoding_of(g, "blk.0.attn_q.weight"), Encoding::F16);
  for (const GgufTensorInfo& t : g.tensors()) expect_finite(g, t);
}

TEST(SynthUsage, BadNamesAndShapesAreUsageErrors) {
  test::TempDir dir;
  auto expect_usage = [&](SynthOptions o, const std::string& what) {
    try {
      synth_model(o, dir.file("bad.gguf"));
      ADD_FAILURE() << "no error for " << what;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage) << what << ": " << e.what();
    }
  };
  expect_usage(options("gpt5", "f32"), "unknown arch");
  expect_usage(options("llama", "q3_k"), "unknown type");
  SynthOptions o = options("llama", "f32");
  o.preset = "llama-70b";
  expect_usage(o, "unknown preset");
  o = options("llama", "f32");
  o.n_head = 3;  // 256 is not a multiple of 3
  expect_usage(o, "n_embd % n_head");
  o = options("llama", "f32");
  o.n_head_kv = 3;
  expect_usage(o, "n_head % n_head_kv");
  o = options("llama", "f32");
  o.n_vocab = 258;
  expect_usage(o, "vocab too small for bytes + specials");
  o = options("llama", "f32");
  o.n_expert = 4;
  expect_usage(o, "experts on a dense arch");
  o = options("olmoe", "f32");
  o.n_head_kv = 2;
  expect_usage(o, "olmoe with fewer kv heads");
  o = options("mixtral", "f32");
  o.n_expert_used = 5;
  expect_usage(o, "more experts used than exist");
  o = options("llama", "f32");
  o.n_layer = 0;
  expect_usage(o, "zero layers");
  EXPECT_FALSE(std::ifstream(dir.file("bad.gguf")).good());
}

// The rope.scaling.* keys llama.cpp reads (llama_model::load_hparams):
// none without keys, and the same bytes for the same options and seed.
TEST(SynthRopeScaling, WritesTheKeysLlamaCppReads) {
  test::TempDir dir;
  SynthOptions o = options("qwen2", "f32");
  o.n_ctx = 512;
  o.rope_scaling = {"yarn", 4, 64};
  const GgufFile yarn = synth_file(dir, o, "yarn.gguf");
  const GgufMetadata& md = yarn.metadata();
  EXPECT_EQ(md.get_string("qwen2.rope.scaling.type"), "yarn");
  EXPECT_EQ(md.get_double("qwen2.rope.scaling.factor"), 4.0);
  EXPECT_EQ(md.get_int("qwen2.rope.scaling.original_context_length"), 64);
  EXPECT_EQ(md.get_int("qwen2.context_length"), 512);
  synth_model(o, dir.file("again.gguf"));
  EXPECT_EQ(test::read_bytes(dir.file("yarn.gguf")), test::read_bytes(dir.file("again.gguf")));

  o.rope_scaling = {"linear", 2};
  const GgufFile linear = synth_file(dir, o, "linear.gguf");
  EXPECT_EQ(linear.metadata().get_string("qwen2.rope.scaling.type"), "linear");
  EXPECT_EQ(linear.metadata().get_double("qwen2.rope.scaling.factor"), 2.0);
  EXPECT_FALSE(linear.metadata().contains("qwen2.rope.scaling.original_context_length"));

  const GgufFile plain = synth_file(dir, options("qwen2", "f32"), "plain.gguf");
  for (const auto& [key, value] : plain.metadata().entries())
    EXPECT_EQ(key.find(".rope.scaling."), std::string::npos) << key;
}

TEST(SynthRopeScaling, OptionsThatDoNotFitAreUsageErrors) {
  test::TempDir dir;
  const SynthRopeScaling bad[] = {
      {"dynamic", 4, 0},  // not a type llama.cpp builds for these architectures
      {"yarn", 0, 64},    // no factor
      {"", 4, 0},         // a factor without a type
      {"none", 4, 0},
      {"linear", 4, 64},  // an original context without yarn
  };
  for (const SynthRopeScaling& r : bad) {
    SynthOptions o = options("llama", "f32");
    o.rope_scaling = r;
    try {
      synth_model(o, dir.file("bad.gguf"));
      ADD_FAILURE() << "no error for '" << r.type << "' " << r.factor << " " << r.original_context;
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Usage) << e.what();
    }
  }
  SynthOptions o = options("llama", "f32");
  o.n_ctx = 0;
  EXPECT_THROW(synth_model(o, dir.file("bad.gguf")), Error);
}

int run(const std::string& command, std::string* out = nullptr) {
  FILE* p = ::popen(command.c_str(), "r");
  char buf[512];
  std::string text;
  while (size_t n = std::fread(buf, 1, sizeof buf, p)) text.append(buf, n);
  const int status = ::pclose(p);
  if (out) *out = text;
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

TEST(SynthCli, WritesAFileAndReportsBadValuesAsUsage) {
  test::TempDir dir;
  const std::string cli = SYNAPSE_CLI_PATH;
  std::string out;
  EXPECT_EQ(run(cli + " synth --arch qwen2 --type q8_0 --seed 3 --n-layer 1 -o " +
                    dir.file("c.gguf") + " 2>&1",
                &out),
            0);
  EXPECT_NE(out.find("random weights"), std::string::npos) << out;
  EXPECT_EQ(GgufFile::open(dir.file("c.gguf")).metadata().get_int("qwen2.block_count"), 1);
  EXPECT_EQ(run(cli + " synth --arch nope -o " + dir.file("d.gguf") + " 2>&1", &out), 2) << out;
  EXPECT_EQ(run(cli + " synth --preset tiny --type q9 -o " + dir.file("d.gguf") + " 2>&1"), 2);
  EXPECT_EQ(run(cli + " synth --preset tiny 2>&1"), 2);  // -o is required
}

TEST(SynthCli, RopeScalingFlagsWriteTheKeys) {
  test::TempDir dir;
  const std::string cli = SYNAPSE_CLI_PATH;
  std::string out;
  ASSERT_EQ(run(cli + " synth --arch llama --n-layer 1 --n-ctx 256 --rope-scaling yarn --rope-scale 4 " +
                    "--rope-orig-ctx 64 -o " + dir.file("y.gguf") + " 2>&1",
                &out),
            0)
      << out;
  const GgufFile f = GgufFile::open(dir.file("y.gguf"));
  EXPECT_EQ(f.metadata().get_string("llama.rope.scaling.type"), "yarn");
  EXPECT_EQ(f.metadata().get_double("llama.rope.scaling.factor"), 4.0);
  EXPECT_EQ(f.metadata().get_int("llama.rope.scaling.original_context_length"), 64);
  EXPECT_EQ(f.metadata().get_int("llama.context_length"), 256);
  EXPECT_EQ(run(cli + " synth --rope-scaling yarn -o " + dir.file("n.gguf") + " 2>&1", &out), 2) << out;
}

}  // namespace
}  // namespace synapse

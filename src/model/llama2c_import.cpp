#include "model/llama2c_import.h"

#include <cstring>
#include <filesystem>

#include "encoding/encoding.h"
#include "model/dense_builder.h"
#include "synapse/error.h"

namespace synapse {
namespace {

// Fixed by llama2.c's training code, not stored in the file.
constexpr float kRmsEps = 1e-5f;
constexpr float kRopeTheta = 10000.0f;

struct Llama2cHeader {
  int32_t dim, hidden_dim, n_layers, n_heads, n_kv_heads, vocab_size, seq_len;
};

uint64_t checked_mul(uint64_t a, uint64_t b) {
  if (b != 0 && a > UINT64_MAX / b) throw Error(ErrorKind::Overflow, "llama2.c weight size overflows");
  return a * b;
}

Llama2cHeader read_header(std::span<const uint8_t> bytes) {
  Llama2cHeader h;
  if (bytes.size() < sizeof h)
    throw Error(ErrorKind::Truncated, "llama2.c checkpoint is shorter than its 28-byte header", bytes.size());
  std::memcpy(&h, bytes.data(), sizeof h);
  auto positive = [](int32_t v, const char* field) {
    if (v <= 0)
      throw Error(ErrorKind::InvalidValue, std::string("llama2.c header ") + field + " = " + std::to_string(v) +
                                               " must be positive",
                  Error::kNoOffset, field);
  };
  positive(h.dim, "dim");
  positive(h.hidden_dim, "hidden_dim");
  positive(h.n_layers, "n_layers");
  positive(h.n_heads, "n_heads");
  positive(h.n_kv_heads, "n_kv_heads");
  positive(h.seq_len, "seq_len");
  if (h.vocab_size == 0 || h.vocab_size == INT32_MIN)
    throw Error(ErrorKind::InvalidValue, "llama2.c header vocab_size = " + std::to_string(h.vocab_size),
                Error::kNoOffset, "vocab_size");
  if (h.dim % h.n_heads != 0 || h.n_heads % h.n_kv_heads != 0 || (h.dim / h.n_heads) % 2 != 0)
    throw Error(ErrorKind::InvalidValue, "llama2.c header: dim " + std::to_string(h.dim) + ", n_heads " +
                                             std::to_string(h.n_heads) + ", n_kv_heads " +
                                             std::to_string(h.n_kv_heads) + " do not form even, grouped heads");
  return h;
}

// Lays out run.c's memory_map_weights order: one array after the other,
// per-layer arrays split into llama.cpp's per-block tensors.
class Llama2cLayout {
 public:
  Llama2cLayout(uint64_t file_size, uint64_t start) : file_size_(file_size), offset_(start) {}

  // The next array of `count` float32 values; when `shape` is given, it is
  // split into `layers` tensors "blk.N.<name>" of that shape, else one tensor.
  void layered(const char* name, uint32_t layers, const TensorShape& shape) {
    for (uint32_t il = 0; il < layers; ++il) add("blk." + std::to_string(il) + "." + name, shape);
  }
  void add(const std::string& name, const TensorShape& shape) {
    uint64_t elements = 1;
    for (int64_t d : shape) elements = checked_mul(elements, static_cast<uint64_t>(d));
    ir::WeightDescriptor d{name, 0, offset_, reserve(name, checked_mul(elements, sizeof(float))),
                           Encoding::F32, shape};
    table_.add(std::move(d));
  }
  // Advances past bytes we do not use (the legacy RoPE tables).
  void skip(const std::string& what, uint64_t bytes) { reserve(what, bytes); }

  TensorTable take() && { return std::move(table_); }

 private:
  uint64_t reserve(const std::string& what, uint64_t bytes) {
    if (bytes > file_size_ - offset_)
      throw Error(ErrorKind::Truncated, "llama2.c checkpoint ends inside " + what, file_size_, what);
    offset_ += bytes;
    return bytes;
  }

  uint64_t file_size_;
  uint64_t offset_;
  TensorTable table_;
};

DenseHparams hparams_of(const Llama2cHeader& h) {
  DenseHparams hp;
  hp.n_embd = h.dim;
  hp.n_layer = h.n_layers;
  hp.n_head = h.n_heads;
  hp.n_head_kv = h.n_kv_heads;
  hp.head_dim = h.dim / h.n_heads;
  hp.rotary_dim = hp.head_dim;
  hp.n_ff = h.hidden_dim;
  hp.n_vocab = static_cast<uint32_t>(h.vocab_size < 0 ? -h.vocab_size : h.vocab_size);
  hp.n_ctx_train = h.seq_len;
  hp.rms_eps = kRmsEps;
  hp.rope_theta = kRopeTheta;
  return hp;
}

TensorTable llama2c_tensor_table(const Llama2cHeader& h, const DenseHparams& hp, uint64_t file_size) {
  const int64_t dim = hp.n_embd, hidden = hp.n_ff, kv_dim = int64_t{hp.n_head_kv} * hp.head_dim;
  const uint32_t layers = hp.n_layer;
  Llama2cLayout layout(file_size, sizeof(Llama2cHeader));
  layout.add("token_embd.weight", {hp.n_vocab, dim});
  layout.layered("attn_norm.weight", layers, {dim});
  layout.layered("attn_q.weight", layers, {dim, dim});
  layout.layered("attn_k.weight", layers, {kv_dim, dim});
  layout.layered("attn_v.weight", layers, {kv_dim, dim});
  layout.layered("attn_output.weight", layers, {dim, dim});
  layout.layered("ffn_norm.weight", layers, {dim});
  layout.layered("ffn_gate.weight", layers, {hidden, dim});  // w1
  layout.layered("ffn_down.weight", layers, {dim, hidden});  // w2
  layout.layered("ffn_up.weight", layers, {hidden, dim});    // w3
  layout.add("output_norm.weight", {dim});
  const uint64_t rope_table = checked_mul(checked_mul(h.seq_len, hp.head_dim / 2), sizeof(float));
  layout.skip("freq_cis_real", rope_table);
  layout.skip("freq_cis_imag", rope_table);
  // A negative vocab_size means a separate classifier follows; else it is tied.
  if (h.vocab_size < 0) layout.add("output.weight", {hp.n_vocab, dim});
  return std::move(layout).take();
}

}  // namespace

Model load_llama2c_model(const std::string& path, const LoadOptions& options) {
  auto file = std::make_shared<MappedFile>(path);
  Llama2cHeader header;
  DenseHparams hp;
  try {
    header = read_header(file->bytes());
    hp = hparams_of(header);
  } catch (const Error& e) {
    // Files without GGUF's magic are read as llama2.c checkpoints, which
    // have none: a header that makes no sense is most likely another file.
    throw Error(e.kind(), path + " is neither a GGUF file (it does not start with \"GGUF\") nor a llama2.c checkpoint (" +
                              e.message() + ")",
                e.offset(), e.subject());
  }
  const TensorTable tensors = llama2c_tensor_table(header, hp, file->bytes().size());

  Model model;
  model.info.architecture = llama_family().arch;
  model.info.name = std::filesystem::path(path).filename().string();
  model.info.n_vocab = hp.n_vocab;
  model.info.n_embd = hp.n_embd;
  model.info.n_layer = hp.n_layer;
  model.info.n_ctx_train = hp.n_ctx_train;
  // llama2.c's tokenizer (SentencePiece-style): BOS 1, EOS 2, BOS prepended.
  model.info.bos_token = 1;
  model.info.eos_token = 2;
  model.info.add_bos = true;
  model.graph = build_dense_graph(llama_family(), hp, tensors, bounds_for(options, hp.n_ctx_train));
  const uint64_t sizes[] = {file->bytes().size()};
  ir::check_weight_bounds(model.graph, sizes);
  model.files.push_back(std::move(file));
  return model;
}

}  // namespace synapse

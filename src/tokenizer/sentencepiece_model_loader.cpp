// Reads the few fields of SentencePiece's ModelProto we need with a minimal
// protobuf wire-format reader (no protobuf library):
//   ModelProto     1: pieces (repeated SentencePiece), 2: trainer_spec, 3: normalizer_spec
//   SentencePiece  1: piece, 2: score (float), 3: type (enum, default NORMAL)
//   TrainerSpec    3: model_type (2 = BPE), 40-42: unk/bos/eos id
//   NormalizerSpec 3: add_dummy_prefix, 4: remove_extra_whitespaces (both default true)
#include <cstring>

#include "synapse/error.h"
#include "tokenizer/vocabulary_loaders.h"

namespace synapse {

namespace {

enum WireType : uint32_t { Varint = 0, Fixed64 = 1, LengthDelimited = 2, Fixed32 = 5 };

struct Field {
  uint32_t number = 0;
  uint32_t wire = 0;
  uint64_t value = 0;      // Varint, Fixed32 (raw bits), Fixed64
  std::string_view bytes;  // LengthDelimited
};

class ProtoReader {
 public:
  ProtoReader(std::string_view data, uint64_t base) : data_(data), base_(base) {}

  // The next field, or false at the end. Throws Truncated / InvalidValue.
  bool next(Field& f) {
    if (pos_ >= data_.size()) return false;
    const uint64_t key = varint();
    f.number = static_cast<uint32_t>(key >> 3);
    f.wire = static_cast<uint32_t>(key & 7);
    switch (f.wire) {
      case Varint:
        f.value = varint();
        break;
      case Fixed64:
      case Fixed32: {
        const size_t n = f.wire == Fixed64 ? 8 : 4;
        need(n);
        f.value = 0;
        std::memcpy(&f.value, data_.data() + pos_, n);  // little-endian host
        pos_ += n;
        break;
      }
      case LengthDelimited: {
        const uint64_t n = varint();
        need(n);
        f.bytes = data_.substr(pos_, n);
        offset_of_bytes_ = base_ + pos_;
        pos_ += n;
        break;
      }
      default:
        throw Error(ErrorKind::InvalidValue, "SentencePiece model: unsupported wire type " + std::to_string(f.wire),
                    base_ + pos_);
    }
    return true;
  }

  uint64_t offset_of_bytes() const { return offset_of_bytes_; }

 private:
  void need(uint64_t n) const {
    if (n > data_.size() - pos_) throw Error(ErrorKind::Truncated, "SentencePiece model ends inside a field", base_ + pos_);
  }
  uint64_t varint() {
    uint64_t v = 0;
    for (int shift = 0; shift < 64; shift += 7) {
      need(1);
      const auto byte = static_cast<uint8_t>(data_[pos_++]);
      v |= static_cast<uint64_t>(byte & 0x7F) << shift;
      if ((byte & 0x80) == 0) return v;
    }
    throw Error(ErrorKind::InvalidValue, "SentencePiece model: varint too long", base_ + pos_);
  }

  std::string_view data_;
  uint64_t base_;
  size_t pos_ = 0;
  uint64_t offset_of_bytes_ = 0;
};

float as_float(uint64_t bits) {
  const auto raw = static_cast<uint32_t>(bits);
  float f;
  std::memcpy(&f, &raw, sizeof f);
  return f;
}

// An int32 id as protobuf stores it (negative ones sign-extended to 64 bits).
std::optional<int32_t> as_id(uint64_t value) {
  const auto id = static_cast<int32_t>(value);
  return id < 0 ? std::nullopt : std::optional<int32_t>(id);
}

void read_piece(std::string_view bytes, uint64_t base, Vocabulary& v) {
  ProtoReader r(bytes, base);
  std::string piece;
  float score = 0.0f;
  uint64_t type = 1;
  for (Field f; r.next(f);) {
    if (f.number == 1 && f.wire == LengthDelimited) piece = std::string(f.bytes);
    if (f.number == 2 && f.wire == Fixed32) score = as_float(f.value);
    if (f.number == 3 && f.wire == Varint) type = f.value;
  }
  if (type < 1 || type > 6) {
    throw Error(ErrorKind::InvalidValue, "SentencePiece piece " + std::to_string(v.tokens.size()) +
                                             " has unknown type " + std::to_string(type), base);
  }
  v.tokens.push_back(std::move(piece));
  v.scores.push_back(score);
  v.types.push_back(static_cast<TokenType>(type));
}

}  // namespace

Vocabulary vocabulary_from_sentencepiece(std::string_view model_bytes) {
  Vocabulary v;
  v.kind = VocabularyKind::SentencePiece;
  v.add_bos = true;
  // Protobuf defaults, for fields the file leaves out.
  uint64_t model_type = 1;  // UNIGRAM
  v.unk_id = 0, v.bos_id = 1, v.eos_id = 2;
  v.add_dummy_prefix = true;
  v.remove_extra_whitespaces = true;

  ProtoReader model(model_bytes, 0);
  for (Field f; model.next(f);) {
    if (f.wire != LengthDelimited) continue;
    const uint64_t base = model.offset_of_bytes();
    if (f.number == 1) read_piece(f.bytes, base, v);
    if (f.number == 2) {
      ProtoReader trainer(f.bytes, base);
      for (Field t; trainer.next(t);) {
        if (t.wire != Varint) continue;
        if (t.number == 3) model_type = t.value;
        if (t.number == 40) v.unk_id = as_id(t.value);
        if (t.number == 41) v.bos_id = as_id(t.value);
        if (t.number == 42) v.eos_id = as_id(t.value);
      }
    }
    if (f.number == 3) {
      ProtoReader normalizer(f.bytes, base);
      for (Field n; normalizer.next(n);) {
        if (n.wire != Varint) continue;
        if (n.number == 3) v.add_dummy_prefix = n.value != 0;
        if (n.number == 4) v.remove_extra_whitespaces = n.value != 0;
      }
    }
  }
  if (model_type != 2) {
    throw Error(ErrorKind::Unsupported, "SentencePiece model type " + std::to_string(model_type) +
                                            " (only BPE, type 2, is supported)");
  }
  v.finalize();
  return v;
}

}  // namespace synapse

#include "tokenizer/tokenizer.h"

#include <filesystem>
#include <fstream>
#include <sstream>

#include "format/gguf_reader.h"
#include "synapse/error.h"
#include "tokenizer/bpe_tokenizer.h"
#include "tokenizer/nfc.h"
#include "tokenizer/spm_tokenizer.h"
#include "tokenizer/vocabulary_loaders.h"

namespace synapse {

namespace {

// The special token whose text starts `text` at `pos`, the longest one.
std::optional<int32_t> special_at(const Vocabulary& vocab, std::string_view text, size_t pos,
                                  bool parse_special) {
  if (!vocab.may_start_special(text[pos])) return std::nullopt;
  for (int32_t id : vocab.special_ids()) {  // longest first
    if (!parse_special && vocab.type(id) == TokenType::Control) continue;
    const std::string& piece = vocab.tokens[static_cast<size_t>(id)];
    if (text.compare(pos, piece.size(), piece) == 0) return id;
  }
  return std::nullopt;
}

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(ErrorKind::Io, "cannot open tokenizer file " + path);
  std::ostringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// GGUF files can be large: look at the magic alone.
bool starts_with_gguf_magic(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  char magic[4] = {};
  return in.read(magic, sizeof magic) && std::string_view(magic, sizeof magic) == "GGUF";
}

bool looks_like_json(std::string_view bytes) {
  const size_t first = bytes.find_first_not_of(" \t\r\n");
  return first != std::string_view::npos && bytes[first] == '{';
}

}  // namespace

std::vector<int32_t> Tokenizer::encode(std::string_view text, bool add_special, bool parse_special) const {
  std::vector<int32_t> out;
  if (add_special && vocab_.add_bos && vocab_.bos_id) out.push_back(*vocab_.bos_id);
  bool after_special = true;
  size_t fragment_start = 0;
  const auto flush_fragment = [&](size_t end) {
    if (end > fragment_start) {
      const std::string_view fragment = text.substr(fragment_start, end - fragment_start);
      if (vocab_.normalize_nfc) {
        encode_text(nfc_normalize(fragment), after_special, out);
      } else {
        encode_text(fragment, after_special, out);
      }
      after_special = false;
    }
  };
  for (size_t pos = 0; pos < text.size();) {
    const std::optional<int32_t> special = special_at(vocab_, text, pos, parse_special);
    if (!special) {
      ++pos;
      continue;
    }
    flush_fragment(pos);
    out.push_back(*special);
    after_special = true;
    pos += vocab_.tokens[static_cast<size_t>(*special)].size();
    fragment_start = pos;
  }
  flush_fragment(text.size());
  return out;
}

std::string Tokenizer::token_to_piece(int32_t id, bool render_special) const {
  if (!vocab_.contains(id)) return {};
  switch (vocab_.type(id)) {
    case TokenType::Control:
    case TokenType::Unknown:
      return render_special ? vocab_.tokens[static_cast<size_t>(id)] : std::string();
    case TokenType::Unused:
      return {};
    default:
      return piece_bytes(id);
  }
}

std::string Tokenizer::decode(std::span<const int32_t> ids, bool render_special) const {
  std::string text;
  bool strip_dummy_prefix = vocab_.add_dummy_prefix;
  for (int32_t id : ids) {
    std::string piece = token_to_piece(id, render_special);
    if (piece.empty()) continue;
    if (strip_dummy_prefix && piece[0] == ' ') piece.erase(0, 1);
    strip_dummy_prefix = false;
    text += piece;
  }
  return text;
}

std::unique_ptr<Tokenizer> make_tokenizer(Vocabulary vocabulary) {
  switch (vocabulary.kind) {
    case VocabularyKind::SentencePiece:
      return std::make_unique<SpmTokenizer>(std::move(vocabulary));
    case VocabularyKind::ByteLevelBpe:
      return std::make_unique<BpeTokenizer>(std::move(vocabulary));
  }
  throw Error(ErrorKind::Unsupported, "unknown vocabulary kind");
}

std::string hf_tokenizer_file(const std::string& model_path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path folder = fs::is_directory(model_path, ec) ? fs::path(model_path) : fs::path(model_path).parent_path();
  for (const char* name : {"tokenizer.model", "tokenizer.json"})
    if (fs::is_regular_file(folder / name, ec)) return (folder / name).string();
  throw Error(ErrorKind::MissingKey,
              "the folder " + folder.string() + " has no tokenizer (tokenizer.model or tokenizer.json); give one with "
              "--tokenizer FILE",
              Error::kNoOffset, folder.string());
}

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec) || path.ends_with(".safetensors"))
    return load_tokenizer(hf_tokenizer_file(path));
  if (starts_with_gguf_magic(path)) return make_tokenizer(vocabulary_from_gguf(GgufFile::open(path).metadata()));
  const std::string bytes = read_file(path);
  if (looks_like_json(bytes)) {
    // tokenizer_config.json next to tokenizer.json says whether BOS is added.
    const std::string dir = path.substr(0, path.find_last_of('/') + 1);
    std::string config;
    if (std::ifstream(dir + "tokenizer_config.json")) config = read_file(dir + "tokenizer_config.json");
    return make_tokenizer(vocabulary_from_hf_json(bytes, config));
  }
  return make_tokenizer(vocabulary_from_sentencepiece(bytes));
}

}  // namespace synapse

#include "tokenizer/tokenizer.h"

#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
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

// A device or a pipe (/dev/zero, a FIFO) would be read without end, or
// block: only regular files are read.
void require_regular_file(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec))
    throw Error(ErrorKind::Io, "tokenizer file " + path + (std::filesystem::exists(path, ec) ? " is not a regular file" : " does not exist"),
                Error::kNoOffset, path);
}

std::string read_file(const std::string& path) {
  require_regular_file(path);
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

namespace {

// The tokens a Hugging Face folder adds to its SentencePiece model, as the
// converter merges them (_create_vocab_sentencepiece): added_tokens.json
// (content -> id) and tokenizer_config.json's added_tokens_decoder (id ->
// {content, special}); an id inside the model renames its piece, one past it
// extends the vocabulary (gaps become unused "[PADn]"). Special tokens are
// Control, the others UserDefined. Ids past 2^24 are refused.
void add_folder_tokens(Vocabulary& vocab, const std::filesystem::path& folder) {
  using nlohmann::json;
  std::map<int64_t, std::pair<std::string, bool>> added;  // id -> content, special
  std::error_code ec;
  if (std::filesystem::is_regular_file(folder / "added_tokens.json", ec)) {
    const json j = json::parse(read_file((folder / "added_tokens.json").string()), nullptr, false);
    if (j.is_object())
      for (auto it = j.begin(); it != j.end(); ++it)
        if (it.value().is_number_integer()) added[it.value().get<int64_t>()] = {it.key(), false};
  }
  if (std::filesystem::is_regular_file(folder / "tokenizer_config.json", ec)) {
    const json j = json::parse(read_file((folder / "tokenizer_config.json").string()), nullptr, false);
    const json decoder = j.is_object() ? j.value("added_tokens_decoder", json()) : json();
    if (decoder.is_object())
      for (auto it = decoder.begin(); it != decoder.end(); ++it) {
        const json& entry = it.value();
        if (!entry.is_object() || !entry.contains("content") || !entry["content"].is_string()) continue;
        const std::string& key = it.key();
        if (key.empty() || key.size() > 9 || key.find_first_not_of("0123456789") != std::string::npos) continue;
        added[std::stoll(key)] = {entry["content"].get<std::string>(), entry.value("special", false) == true};
      }
  }
  constexpr int64_t kMaxId = int64_t{1} << 24;
  for (const auto& [id, token] : added) {
    if (id < 0 || id >= kMaxId) throw Error(ErrorKind::InvalidValue, "added token id " + std::to_string(id) + " is out of range");
    while (vocab.size() <= id) {
      vocab.tokens.push_back("[PAD" + std::to_string(vocab.size()) + "]");
      vocab.types.push_back(TokenType::Unused);
      if (!vocab.scores.empty()) vocab.scores.push_back(-10000.0f);
    }
    vocab.tokens[static_cast<size_t>(id)] = token.first;
    vocab.types[static_cast<size_t>(id)] = token.second ? TokenType::Control : TokenType::UserDefined;
  }
  vocab.finalize();
}

}  // namespace

std::unique_ptr<Tokenizer> load_tokenizer(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec) || path.ends_with(".safetensors")) {
    const std::string file = hf_tokenizer_file(path);
    if (!file.ends_with("tokenizer.model")) return load_tokenizer(file);
    Vocabulary vocab = vocabulary_from_sentencepiece(read_file(file));
    add_folder_tokens(vocab, std::filesystem::path(file).parent_path());
    return make_tokenizer(std::move(vocab));
  }
  require_regular_file(path);
  if (starts_with_gguf_magic(path)) return make_tokenizer(vocabulary_from_gguf(GgufFile::open(path).metadata()));
  const std::string bytes = read_file(path);
  if (looks_like_json(bytes)) {
    // tokenizer_config.json next to tokenizer.json says whether BOS is added.
    const std::string dir = path.substr(0, path.find_last_of('/') + 1);
    std::string config;
    if (std::filesystem::is_regular_file(dir + "tokenizer_config.json", ec)) config = read_file(dir + "tokenizer_config.json");
    return make_tokenizer(vocabulary_from_hf_json(bytes, config));
  }
  try {
    return make_tokenizer(vocabulary_from_sentencepiece(bytes));
  } catch (const Error& e) {
    // The last reading tried: say what the file is not, and where.
    throw Error(e.kind(),
                "no tokenizer in " + path + ": not GGUF, tokenizer.json or a SentencePiece model (" + e.message() + ")",
                e.offset(), e.subject());
  }
}

}  // namespace synapse

#include "dist/frame.h"

#include <cstring>

#include "encoding/fp16.h"
#include "synapse/error.h"

namespace synapse::dist {
namespace {

constexpr uint32_t kMagic = 0x4d505953;  // "SYPM"
constexpr uint32_t kVersion = 3;
// The largest step a frame carries (a prefill chunk) and hidden width.
constexpr uint32_t kMaxTokens = 1u << 16;
constexpr uint32_t kMaxWidth = 1u << 20;
constexpr uint32_t kMaxText = 4096;

struct Packed {
  uint32_t magic, version;
  uint8_t kind, wire, wants_token, pad;
  uint32_t forks;
  uint32_t epoch, entries;
  uint64_t session, step;
  int64_t sent_ns;
  uint32_t tokens, width;
  uint32_t text, reserved;
  uint64_t plan;
};

// The wire layout: a frame is read on the machine that wrote it or one of
// the same byte order, as every rank of one run is.
static_assert(sizeof(Packed) == 72 && sizeof(FrameEntry) == 16);

[[noreturn]] void bad(const std::string& what) { throw Error(ErrorKind::InvalidValue, "pipeline frame: " + what); }

template <class T>
void append(std::vector<uint8_t>& out, const T* data, size_t count) {
  const size_t at = out.size();
  out.resize(at + count * sizeof(T));
  if (count > 0) std::memcpy(out.data() + at, data, count * sizeof(T));
}

size_t value_bytes(Wire wire) { return wire == Wire::F16 ? 2 : 4; }

}  // namespace

const char* to_string(Wire wire) { return wire == Wire::F16 ? "f16" : "f32"; }

std::vector<uint8_t> encode_frame(const FrameHeader& h, std::span<const FrameEntry> entries,
                                  std::span<const int32_t> tokens, std::span<const float> hidden,
                                  std::string_view text) {
  text = text.substr(0, kMaxText);
  uint64_t entry_tokens = 0;
  for (const FrameEntry& e : entries) entry_tokens += e.tokens;
  if (entries.size() != h.entries || entry_tokens != h.tokens || tokens.size() != h.tokens ||
      hidden.size() != static_cast<size_t>(h.tokens) * h.width)
    bad("the header's " + std::to_string(h.entries) + " entries of " + std::to_string(h.tokens) +
        " tokens of width " + std::to_string(h.width) + " disagree with the data");
  const Packed p{kMagic,  kVersion,  static_cast<uint8_t>(h.kind), static_cast<uint8_t>(h.wire),
                 h.wants_token, 0, h.forks, h.epoch, h.entries, h.session, h.step, h.sent_ns,
                 h.tokens, h.width, static_cast<uint32_t>(text.size()), 0, h.plan};
  std::vector<uint8_t> out;
  out.reserve(sizeof p + entries.size_bytes() + tokens.size_bytes() + hidden.size() * value_bytes(h.wire) +
              text.size());
  append(out, &p, 1);
  append(out, entries.data(), entries.size());
  append(out, tokens.data(), tokens.size());
  if (h.wire == Wire::F32) {
    append(out, hidden.data(), hidden.size());
  } else {
    for (float v : hidden) {
      const uint16_t half = fp32_to_fp16(v);
      append(out, &half, 1);
    }
  }
  append(out, text.data(), text.size());
  return out;
}

Frame decode_frame(std::span<const uint8_t> bytes, const FrameExpectation& expect) {
  Packed p;
  if (bytes.size() < sizeof p)
    throw Error(ErrorKind::Truncated, "pipeline frame of " + std::to_string(bytes.size()) + " bytes, shorter than its header");
  std::memcpy(&p, bytes.data(), sizeof p);
  if (p.magic != kMagic || p.version != kVersion) bad("not a frame of this version");
  if (p.kind < 1 || p.kind > 10 || p.wire > 1 || p.wants_token > 1) bad("unknown kind, wire or flag");
  if (p.session != expect.session)
    bad("session " + std::to_string(p.session) + ", expected " + std::to_string(expect.session));
  if (p.epoch != expect.epoch)
    bad(std::string(p.epoch < expect.epoch ? "stale" : "future") + " epoch " + std::to_string(p.epoch) +
        ", expected " + std::to_string(expect.epoch));
  if (p.plan != expect.plan)
    bad("plan fingerprint " + std::to_string(p.plan) + ", expected " + std::to_string(expect.plan) +
        ": the ranks run different models, splits or wires");
  if (p.tokens > kMaxTokens || p.entries > kMaxTokens || p.width > kMaxWidth || p.forks > kMaxTokens ||
      p.text > kMaxText)
    bad("a step of " + std::to_string(p.entries) + " entries, " + std::to_string(p.tokens) + " tokens of width " +
        std::to_string(p.width) + ", " + std::to_string(p.forks) + " forks");
  Frame f;
  f.header = {static_cast<FrameKind>(p.kind), static_cast<Wire>(p.wire), p.wants_token != 0, p.forks, p.session,
              p.epoch, p.step, p.sent_ns, p.entries, p.tokens, p.width, p.plan};
  const uint64_t values = uint64_t{p.tokens} * p.width;
  const uint64_t need = sizeof p + uint64_t{p.entries} * sizeof(FrameEntry) + uint64_t{p.tokens} * 4 +
                        values * value_bytes(f.header.wire) + p.text;
  if (bytes.size() != need)
    throw Error(ErrorKind::Truncated, "pipeline frame of " + std::to_string(bytes.size()) + " bytes; its header says " +
                                          std::to_string(need));
  f.bytes = bytes.size();
  const uint8_t* at = bytes.data() + sizeof p;
  f.entries.resize(p.entries);
  if (p.entries > 0) std::memcpy(f.entries.data(), at, f.entries.size() * sizeof(FrameEntry));
  at += f.entries.size() * sizeof(FrameEntry);
  uint64_t entry_tokens = 0;
  for (const FrameEntry& e : f.entries) {
    if (e.sequence < 0 || e.position < 0) bad("an entry of sequence " + std::to_string(e.sequence) + " at position " + std::to_string(e.position));
    entry_tokens += e.tokens;
  }
  if (entry_tokens != p.tokens)
    bad("entries of " + std::to_string(entry_tokens) + " tokens in a frame of " + std::to_string(p.tokens));
  f.tokens.resize(p.tokens);
  if (p.tokens > 0) std::memcpy(f.tokens.data(), at, f.tokens.size() * 4);
  at += f.tokens.size() * 4;
  f.hidden.resize(values);
  if (f.header.wire == Wire::F32) {
    if (values > 0) std::memcpy(f.hidden.data(), at, values * 4);
  } else {
    for (uint64_t i = 0; i < values; ++i) {
      uint16_t half;
      std::memcpy(&half, at + i * 2, 2);
      f.hidden[i] = fp16_to_fp32(half);
    }
  }
  at += values * value_bytes(f.header.wire);
  f.text.assign(reinterpret_cast<const char*>(at), p.text);
  return f;
}

}  // namespace synapse::dist

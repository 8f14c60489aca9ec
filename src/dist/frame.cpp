#include "dist/frame.h"

#include <cstring>

#include "encoding/fp16.h"
#include "synapse/error.h"

namespace synapse::dist {
namespace {

constexpr uint32_t kMagic = 0x4d505953;  // "SYPM"
constexpr uint32_t kVersion = 1;
// The largest step a frame carries (a prefill chunk) and hidden width.
constexpr uint32_t kMaxTokens = 1u << 16;
constexpr uint32_t kMaxWidth = 1u << 20;

struct Packed {
  uint32_t magic, version;
  uint8_t kind, wire, wants_token, pad;
  uint32_t epoch;
  uint64_t session, step;
  int64_t position;
  uint32_t tokens, width;
  uint64_t plan;
};

[[noreturn]] void bad(const std::string& what) { throw Error(ErrorKind::InvalidValue, "pipeline frame: " + what); }

template <class T>
void append(std::vector<uint8_t>& out, const T* data, size_t count) {
  const size_t at = out.size();
  out.resize(at + count * sizeof(T));
  if (count > 0) std::memcpy(out.data() + at, data, count * sizeof(T));
}

}  // namespace

const char* to_string(Wire wire) { return wire == Wire::F16 ? "f16" : "f32"; }

std::vector<uint8_t> encode_frame(const FrameHeader& h, std::span<const int32_t> tokens,
                                  std::span<const float> hidden) {
  if (tokens.size() != h.tokens || hidden.size() != static_cast<size_t>(h.tokens) * h.width)
    bad("the header's " + std::to_string(h.tokens) + " tokens of width " + std::to_string(h.width) +
        " disagree with the data");
  const Packed p{kMagic,    kVersion, static_cast<uint8_t>(h.kind), static_cast<uint8_t>(h.wire),
                 h.wants_token, 0,    h.epoch,   h.session,        h.step,
                 h.position, h.tokens, h.width,  h.plan};
  std::vector<uint8_t> out;
  out.reserve(sizeof p + tokens.size_bytes() + hidden.size() * (h.wire == Wire::F16 ? 2 : 4));
  append(out, &p, 1);
  append(out, tokens.data(), tokens.size());
  if (h.wire == Wire::F32) {
    append(out, hidden.data(), hidden.size());
  } else {
    for (float v : hidden) {
      const uint16_t half = fp32_to_fp16(v);
      append(out, &half, 1);
    }
  }
  return out;
}

Frame decode_frame(std::span<const uint8_t> bytes, const FrameExpectation& expect) {
  Packed p;
  if (bytes.size() < sizeof p)
    throw Error(ErrorKind::Truncated, "pipeline frame of " + std::to_string(bytes.size()) + " bytes, shorter than its header");
  std::memcpy(&p, bytes.data(), sizeof p);
  if (p.magic != kMagic || p.version != kVersion) bad("not a frame of this version");
  if (p.kind < 1 || p.kind > 3 || p.wire > 1 || p.wants_token > 1) bad("unknown kind, wire or flag");
  if (p.session != expect.session)
    bad("session " + std::to_string(p.session) + ", expected " + std::to_string(expect.session));
  if (p.epoch != expect.epoch)
    bad(std::string(p.epoch < expect.epoch ? "stale" : "future") + " epoch " + std::to_string(p.epoch) +
        ", expected " + std::to_string(expect.epoch));
  if (p.plan != expect.plan)
    bad("plan fingerprint " + std::to_string(p.plan) + ", expected " + std::to_string(expect.plan) +
        ": the ranks run different models, splits or wires");
  if (p.tokens > kMaxTokens || p.width > kMaxWidth) bad("a step of " + std::to_string(p.tokens) + " tokens of width " + std::to_string(p.width));
  Frame f;
  f.header = {static_cast<FrameKind>(p.kind), static_cast<Wire>(p.wire), p.wants_token != 0, p.session, p.epoch,
              p.step, p.position, p.tokens, p.width, p.plan};
  const uint64_t values = uint64_t{p.tokens} * p.width;
  const uint64_t need = sizeof p + uint64_t{p.tokens} * 4 + values * (f.header.wire == Wire::F16 ? 2 : 4);
  if (bytes.size() != need)
    throw Error(ErrorKind::Truncated, "pipeline frame of " + std::to_string(bytes.size()) + " bytes; its header says " +
                                          std::to_string(need));
  const uint8_t* at = bytes.data() + sizeof p;
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
  return f;
}

}  // namespace synapse::dist

// libFuzzer target: the pipeline frame decoder (dist/frame.h) must turn any
// bytes into either a frame whose parts agree (entries adding up to its
// tokens, hidden vectors of tokens x width) or a synapse::Error; anything
// else is a finding. Frames come from other ranks, over a network. An
// input is read either as raw bytes, or (most inputs) as a recipe: a valid
// frame of the shape its first bytes choose, then the rest as byte flips
// and a truncation, so the fuzzer reaches past the header's checks without
// a seed corpus.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <span>
#include <string>
#include <vector>

#include "dist/frame.h"
#include "synapse/error.h"

namespace {

using synapse::dist::FrameEntry;
using synapse::dist::FrameExpectation;
using synapse::dist::FrameHeader;

constexpr FrameExpectation kExpect{7, 3, 0xfeedface};

void check(std::span<const uint8_t> bytes) {
  try {
    const synapse::dist::Frame f = synapse::dist::decode_frame(bytes, kExpect);
    uint64_t tokens = 0;
    for (const FrameEntry& e : f.entries) tokens += e.tokens;
    if (tokens != f.tokens.size() || f.entries.size() != f.header.entries || f.tokens.size() != f.header.tokens ||
        f.hidden.size() != f.tokens.size() * f.header.width || f.bytes != bytes.size() || f.text.size() > 4096)
      std::abort();
  } catch (const synapse::Error&) {
  }
}

// A valid frame of the shape data[0..4] choose.
std::vector<uint8_t> recipe_frame(const uint8_t* data) {
  FrameHeader h;
  h.kind = static_cast<synapse::dist::FrameKind>(1 + data[0] % 10);
  h.wire = static_cast<synapse::dist::Wire>(data[1] & 1);
  h.wants_token = (data[1] & 2) != 0;
  h.forks = data[1] >> 4;
  h.session = kExpect.session;
  h.epoch = kExpect.epoch;
  h.plan = kExpect.plan;
  h.width = data[2] % 9;
  std::vector<FrameEntry> entries(data[3] % 5);
  std::vector<int32_t> tokens;
  for (size_t e = 0; e < entries.size(); ++e) {
    entries[e] = {static_cast<int32_t>(e), static_cast<uint32_t>((data[4] >> (2 * e)) & 3), static_cast<int64_t>(e) * 5};
    for (uint32_t t = 0; t < entries[e].tokens; ++t) tokens.push_back(static_cast<int32_t>(t));
  }
  h.entries = static_cast<uint32_t>(entries.size());
  h.tokens = static_cast<uint32_t>(tokens.size());
  std::vector<float> hidden(tokens.size() * h.width, 0.5f);
  return synapse::dist::encode_frame(h, entries, tokens, hidden, std::string(data[4] % 5, 'x'));
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 6 || data[0] == 0xff) {
    check(std::span<const uint8_t>(data, size));
    return 0;
  }
  std::vector<uint8_t> frame = recipe_frame(data + 1);
  // Then pairs (offset, xor), and a last odd byte: bytes cut off the end.
  size_t at = 6;
  for (; at + 1 < size; at += 2) frame[data[at] % frame.size()] ^= data[at + 1];
  if (at < size) frame.resize(frame.size() - std::min<size_t>(frame.size(), data[at] % 8));
  check(frame);
  return 0;
}

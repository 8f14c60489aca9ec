// The messages between pipeline stages (SPEC §11): per step one frame per
// hop, a fixed header, then an entry per sequence in the step (its id, its
// token count and the position of its first token), the step's token ids
// and, for hidden vectors, the rows the stage hands on (F32, or F16 with
// --wire f16, a numerical mode of its own). A receiver checks what it got
// before use: the session, the epoch (a frame of an earlier epoch is stale)
// and the plan fingerprint (every stage must run the same model, split and
// wire), so a mismatched rank fails with a clear error instead of computing
// garbage.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace synapse::dist {

enum class FrameKind : uint8_t {
  Hidden = 1,  // a step's tokens and the hidden vectors the next stage takes
  Token = 2,   // the tokens the last stage sampled, an entry each, back to the first
  Stop = 3,    // the run is over: stages leave their loops
  Ping = 4,    // measuring a hop before the run (latency and clock offset)
  Pong = 5,    // the answer to a Ping, stamped with the answering rank's clock
  // A server's sequence operations, done by every rank in frame order: an
  // entry each, its sequence and (Fork: the sequence it forks, Rewind: the
  // position it keeps up to) its position.
  Fork = 6,
  Rewind = 7,
  Drop = 8,
  Logits = 9,  // a server's step: each entry's logits row, from the last rank to the first (F32)
  // A server's step a later rank could not run: its entries and why (the
  // text), passed on to the last rank and back to the first in place of
  // the logits.
  Failed = 10,
};

enum class Wire : uint8_t { F32 = 0, F16 = 1 };
const char* to_string(Wire wire);

struct FrameHeader {
  FrameKind kind = FrameKind::Hidden;
  Wire wire = Wire::F32;
  bool wants_token = false;  // the last stage samples after this step
  uint32_t forks = 0;        // after this step, sequence 0 forks this many new sequences
  uint64_t session = 0;
  uint32_t epoch = 0;
  uint64_t step = 0;
  int64_t sent_ns = 0;  // the sender's steady clock as it sent the frame
  uint32_t entries = 0;
  uint32_t tokens = 0;
  uint32_t width = 0;  // hidden values per token (0 but for Hidden frames)
  uint64_t plan = 0;   // plan fingerprint
};

// One sequence's part of a step: its tokens follow those of the entries
// before it.
struct FrameEntry {
  int32_t sequence = 0;
  uint32_t tokens = 0;
  int64_t position = 0;  // of its first token
};

struct Frame {
  FrameHeader header;
  std::vector<FrameEntry> entries;
  std::vector<int32_t> tokens;
  std::vector<float> hidden;  // [tokens, width], as F32 whatever the wire
  std::string text;           // a Failed frame's reason
  size_t bytes = 0;           // on the wire
};

// What a receiver expects of every frame.
struct FrameExpectation {
  uint64_t session = 0;
  uint32_t epoch = 0;
  uint64_t plan = 0;
};

// The bytes of a frame; entries' tokens add up to header.tokens and hidden
// is [header.tokens, header.width], sent as header.wire says; then the
// text (at most 4096 bytes, cut there).
std::vector<uint8_t> encode_frame(const FrameHeader& header, std::span<const FrameEntry> entries,
                                  std::span<const int32_t> tokens, std::span<const float> hidden,
                                  std::string_view text = {});

// Throws Error: Truncated or InvalidValue for bytes that are not a whole
// frame of this format (entries that do not add up to its tokens
// included); InvalidValue for another session, a stale (or future) epoch,
// or another plan fingerprint, each naming both values.
Frame decode_frame(std::span<const uint8_t> bytes, const FrameExpectation& expect);

}  // namespace synapse::dist

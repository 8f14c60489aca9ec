// A pipeline step as a stage runs it: the sequences and tokens of a frame,
// as Session::eval_batch takes them and as a frame's entries carry them.
#pragma once

#include <span>
#include <vector>

#include "dist/frame.h"
#include "exec/session.h"

namespace synapse::dist {

struct StageStep {
  std::vector<exec::SequenceTokens> batch;
  std::vector<FrameEntry> entries;
  std::vector<int32_t> tokens;

  void clear();
  // A sequence's tokens at its next positions in `stage`.
  void add(const exec::Session& stage, exec::SequenceId id, std::span<const int32_t> step_tokens);
  // The batch's spans into tokens, once every entry is added.
  std::span<const exec::SequenceTokens> sequences();
  // The step a Hidden frame from rank `from` carries. Throws
  // Error(InvalidValue) for another kind of frame, hidden vectors of another
  // width, or an entry of a sequence this stage does not hold at that
  // position.
  void load(const Frame& in, const exec::Session& stage, int from);
};

// Forks sequence 0 `count` times; every rank numbers the new sequences the
// same way, 1, 2, ...
void fork_sequences(exec::Session& stage, uint32_t count);

}  // namespace synapse::dist

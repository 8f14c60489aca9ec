#include "dist/stage_step.h"

#include <string>

#include "synapse/error.h"

namespace synapse::dist {

void StageStep::clear() {
  batch.clear();
  entries.clear();
  tokens.clear();
}

void StageStep::add(const exec::Session& stage, exec::SequenceId id, std::span<const int32_t> step_tokens) {
  entries.push_back({id, static_cast<uint32_t>(step_tokens.size()), stage.position(id)});
  tokens.insert(tokens.end(), step_tokens.begin(), step_tokens.end());
}

std::span<const exec::SequenceTokens> StageStep::sequences() {
  batch.clear();
  size_t at = 0;
  for (const FrameEntry& e : entries) {
    batch.push_back({e.sequence, std::span<const int32_t>(tokens).subspan(at, e.tokens)});
    at += e.tokens;
  }
  return batch;
}

void StageStep::load(const Frame& in, const exec::Session& stage, int from) {
  const auto width = static_cast<uint32_t>(stage.hidden_width());
  const auto refuse = [from](const std::string& what) {
    throw Error(ErrorKind::InvalidValue, "pipeline: rank " + std::to_string(from) + " sent " + what);
  };
  if (in.header.kind != FrameKind::Hidden) refuse("a frame that is not a step");
  if (in.header.width != width)
    refuse("hidden vectors of width " + std::to_string(in.header.width) + "; this stage's is " + std::to_string(width));
  clear();
  size_t at = 0;
  for (const FrameEntry& e : in.entries) {
    int64_t position = -1;
    try {
      position = stage.position(e.sequence);
    } catch (const Error&) {
      refuse("a step of sequence " + std::to_string(e.sequence) + ", which this stage does not hold");
    }
    if (e.position != position)
      refuse("a step of sequence " + std::to_string(e.sequence) + " at position " + std::to_string(e.position) +
             "; this stage holds it at " + std::to_string(position));
    add(stage, e.sequence, std::span<const int32_t>(in.tokens).subspan(at, e.tokens));
    at += e.tokens;
  }
}

void fork_sequences(exec::Session& stage, uint32_t count) {
  for (uint32_t i = 0; i < count; ++i)
    if (stage.fork(0) != static_cast<exec::SequenceId>(i + 1))
      throw Error(ErrorKind::InvalidValue, "pipeline: forks must number the sequences 1, 2, ... on every rank");
}

}  // namespace synapse::dist

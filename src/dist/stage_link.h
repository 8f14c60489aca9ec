// One rank's end of a pipeline (SPEC §11): sends and checks its frames, and
// measures its hops. Before the run each hop is measured with a few
// ping-pongs: its round trip, and the offset between the two ranks' steady
// clocks (NTP's estimate), so the receiver of a frame can tell how long it
// took from its sender's clock to its own even across hosts.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <span>
#include <vector>

#include "dist/frame.h"
#include "dist/transport.h"
#include "exec/region_trace.h"

namespace synapse::dist {

// Told of each frame this rank receives and of each hop it measures.
using HopListener = std::function<void(const exec::HopEvent&)>;

class StageLink {
 public:
  StageLink(Transport& transport, const FrameExpectation& expect, Wire wire, std::chrono::milliseconds timeout,
            HopListener hops);

  int rank() const { return transport_.rank(); }
  int last() const { return transport_.size() - 1; }
  int next() const { return (rank() + 1) % transport_.size(); }
  int previous() const { return (rank() + transport_.size() - 1) % transport_.size(); }

  // Measures every hop of the ring (r to r+1, the last to the first), one
  // hop at a time in the same order on every rank; this rank's incoming
  // hop's clock offset is kept for later frames. Every rank must call it.
  void measure_hops(int round_trips = 8);

  // header's session, epoch, plan, wire (F32 for logits), step, counts and
  // clock are filled in; hidden is [tokens, width].
  void send(int to, FrameHeader header, std::span<const FrameEntry> entries, std::span<const int32_t> tokens,
            std::span<const float> hidden, std::string_view text = {});
  // The next frame from `from`, waiting at most the link's timeout, or
  // without end when `idle` (a server's ranks wait for requests).
  Frame receive(int from, bool idle = false);

 private:
  Transport& transport_;
  FrameExpectation expect_;
  Wire wire_;
  std::chrono::milliseconds timeout_;
  HopListener hops_;
  uint64_t step_ = 0;
  int64_t clock_offset_ns_ = 0;  // this rank's steady clock minus previous()'s
};

}  // namespace synapse::dist

#include "dist/stage_link.h"

#include <algorithm>

namespace synapse::dist {
namespace {

int64_t now_ns() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

}  // namespace

StageLink::StageLink(Transport& transport, const FrameExpectation& expect, Wire wire,
                     std::chrono::milliseconds timeout, HopListener hops)
    : transport_(transport), expect_(expect), wire_(wire), timeout_(timeout), hops_(std::move(hops)) {}

void StageLink::send(int to, FrameHeader h, std::span<const FrameEntry> entries, std::span<const int32_t> tokens,
                     std::span<const float> hidden, std::string_view text) {
  h.wire = h.kind == FrameKind::Logits ? Wire::F32 : wire_;  // sampling reads exact logits
  h.session = expect_.session;
  h.epoch = expect_.epoch;
  h.plan = expect_.plan;
  h.step = step_++;
  h.entries = static_cast<uint32_t>(entries.size());
  h.tokens = static_cast<uint32_t>(tokens.size());
  h.width = tokens.empty() ? 0 : static_cast<uint32_t>(hidden.size() / tokens.size());
  h.sent_ns = now_ns();
  transport_.send(to, encode_frame(h, entries, tokens, hidden, text), timeout_);
}

Frame StageLink::receive(int from, bool idle) {
  const int64_t start = now_ns();
  constexpr std::chrono::milliseconds kForever = std::chrono::hours(24 * 365);
  Frame f = decode_frame(transport_.receive(from, idle ? kForever : timeout_), expect_);
  const int64_t end = now_ns();
  const bool step = f.header.kind == FrameKind::Hidden || f.header.kind == FrameKind::Token ||
                    f.header.kind == FrameKind::Logits;
  if (hops_ && step) {
    const int64_t offset = from == previous() ? clock_offset_ns_ : 0;
    const char* kind = f.header.kind == FrameKind::Hidden ? "hidden" : f.header.kind == FrameKind::Token ? "token" : "logits";
    hops_({kind, from, rank(), f.header.step, f.bytes,
           static_cast<int64_t>(f.header.tokens), end - (f.header.sent_ns + offset), end - start});
  }
  return f;
}

void StageLink::measure_hops(int round_trips) {
  const int ranks = transport_.size();
  for (int from = 0; from < ranks; ++from) {
    const int to = (from + 1) % ranks;
    if (rank() == from) {  // answers the receiver's pings
      for (int i = 0; i < round_trips; ++i) {
        receive(to);
        send(to, {.kind = FrameKind::Pong}, {}, {}, {});
      }
    } else if (rank() == to) {  // pings its sender, NTP-style with the answer stamped once
      std::vector<int64_t> trips, offsets;
      for (int i = 0; i < round_trips; ++i) {
        const int64_t t0 = now_ns();
        send(from, {.kind = FrameKind::Ping}, {}, {}, {});
        const Frame pong = receive(from);
        const int64_t t3 = now_ns();
        trips.push_back(t3 - t0);
        offsets.push_back((t0 + t3) / 2 - pong.header.sent_ns);
      }
      // The exchange with the shortest round trip bounds the offset best.
      const size_t best = static_cast<size_t>(std::min_element(trips.begin(), trips.end()) - trips.begin());
      clock_offset_ns_ = offsets[best];
      std::vector<int64_t> sorted = trips;
      std::nth_element(sorted.begin(), sorted.begin() + static_cast<long>(sorted.size() / 2), sorted.end());
      if (hops_) hops_({"link", from, to, 0, 0, 0, sorted[sorted.size() / 2], 0});
    }
  }
}

}  // namespace synapse::dist

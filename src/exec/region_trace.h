// The opt-in region activation trace (SPEC §9): one JSON line per region per
// step, streamed to a file so memory stays bounded however long the run.
// A region of a layer the user dropped has provenance "UserDropped", and
// every event of such a run says "mode":"QualityBounded".
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "exec/scheduler.h"
#include "model/model.h"

namespace synapse::exec {

// A speculative run's totals (SPEC §10), one line at the trace's end.
struct SpeculationTotals {
  int64_t drafted = 0;        // drafted tokens the target verified
  int64_t accepted = 0;       // of those, kept
  int64_t target_passes = 0;  // target evals after the prompt
  int64_t committed = 0;      // tokens generated
  int64_t decode_ns = 0;      // from the first token chosen to the last
};

// A message between pipeline ranks (SPEC §11) as its receiver saw it, or
// a hop measured before the run (kind "link": latency_ns is its median
// round trip).
struct HopEvent {
  const char* kind = "hidden";  // "hidden", "token" or "link"
  int from = 0;
  int to = 0;
  uint64_t step = 0;  // the sender's
  uint64_t bytes = 0;
  int64_t tokens = 0;
  // From the sender's send until the receiver had it (on the receiver's
  // clock, the two clocks' offset measured by the link), time it queued
  // while the receiver was busy included.
  int64_t latency_ns = 0;
  int64_t wait_ns = 0;  // how long the receiver waited for it
};

// Where pipeline rank `rank` writes the trace a run was asked to write at
// `path`: rank 0 at path, rank r at path.rank<r> (synapse trace reads them
// together).
std::string rank_trace_path(const std::string& path, int rank);

class RegionTraceWriter {
 public:
  // Throws Error(Io) when the file cannot be created. Every line says the
  // pipeline rank that wrote it. The lines go to PATH.part, renamed to PATH
  // by close(): a run that fails before leaves neither. A device or FIFO at
  // PATH (/dev/stdout) is written in place.
  RegionTraceWriter(const std::string& path, const Model& model, std::string session = "s1", int rank = 0);
  ~RegionTraceWriter();
  RegionTraceWriter(const RegionTraceWriter&) = delete;
  RegionTraceWriter& operator=(const RegionTraceWriter&) = delete;

  void write(const RegionEvent& event);
  // {"session":..,"event":"speculation","drafted":..,...}
  void write(const SpeculationTotals& totals);
  // {"session":..,"event":"hop","kind":..,"from":..,"to":..,...}
  void write(const HopEvent& hop);
  // Flushes, closes and renames into place; throws Error(Io) if the data
  // could not be written.
  void close();

 private:
  std::FILE* file_ = nullptr;
  std::string path_;
  std::string part_;  // where the lines go until close(): part_path_for(path_)
  std::string session_;
  int rank_ = 0;
  std::vector<std::string> precision_;  // per region: its weights' main encoding
};

}  // namespace synapse::exec

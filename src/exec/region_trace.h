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

class RegionTraceWriter {
 public:
  // Throws Error(Io) when the file cannot be created.
  RegionTraceWriter(const std::string& path, const Model& model, std::string session = "s1");
  ~RegionTraceWriter();
  RegionTraceWriter(const RegionTraceWriter&) = delete;
  RegionTraceWriter& operator=(const RegionTraceWriter&) = delete;

  void write(const RegionEvent& event);
  // {"session":..,"event":"speculation","drafted":..,...}
  void write(const SpeculationTotals& totals);
  // Flushes and closes; throws Error(Io) if the data could not be written.
  void close();

 private:
  std::FILE* file_ = nullptr;
  std::string path_;
  std::string session_;
  std::vector<std::string> precision_;  // per region: its weights' main encoding
};

}  // namespace synapse::exec

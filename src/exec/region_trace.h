// The opt-in region activation trace (SPEC §9): one JSON line per region per
// step, streamed to a file so memory stays bounded however long the run.
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "exec/scheduler.h"
#include "model/model.h"

namespace synapse::exec {

class RegionTraceWriter {
 public:
  // Throws Error(Io) when the file cannot be created.
  RegionTraceWriter(const std::string& path, const Model& model, std::string session = "s1");
  ~RegionTraceWriter();
  RegionTraceWriter(const RegionTraceWriter&) = delete;
  RegionTraceWriter& operator=(const RegionTraceWriter&) = delete;

  void write(const RegionEvent& event);
  // Flushes and closes; throws Error(Io) if the data could not be written.
  void close();

 private:
  std::FILE* file_ = nullptr;
  std::string path_;
  std::string session_;
  std::vector<std::string> precision_;  // per region: its weights' main encoding
};

}  // namespace synapse::exec

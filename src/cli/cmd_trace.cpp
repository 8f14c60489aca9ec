// synapse trace FILE [--heatmap OUT.svg]: what a `synapse run --trace-regions`
// trace says about a run: regions executed and skipped per step and token,
// weight bytes per token, the expert histogram per layer.
#include <cerrno>
#include <cstring>
#include <fstream>

#include "cli/command.h"
#include "exec/region_trace_summary.h"
#include "synapse/error.h"

namespace synapse::cli {
namespace {

struct TraceFlags {
  std::string file;
  std::string heatmap;
};

int trace(const TraceFlags& f) {
  std::ifstream in(f.file);
  if (!in) throw Error(ErrorKind::Io, std::string("cannot open trace: ") + std::strerror(errno), Error::kNoOffset, f.file);
  const exec::TraceSummary summary = exec::summarize_trace(in);
  exec::print_trace_summary(summary, stdout);
  if (!f.heatmap.empty()) {
    std::ofstream svg(f.heatmap, std::ios::binary);
    svg << exec::trace_heatmap_svg(summary);
    svg.close();
    if (!svg) throw Error(ErrorKind::Io, "cannot write the heatmap", Error::kNoOffset, f.heatmap);
  }
  return kExitOk;
}

Register trace_reg{{"trace", "Summarize a region trace (synapse run --trace-regions)",
                    [](CLI::App& app) -> std::function<int()> {
                      auto f = std::make_shared<TraceFlags>();
                      app.add_option("file", f->file, "the JSONL trace")->required()->check(CLI::ExistingFile);
                      app.add_option("--heatmap", f->heatmap, "also draw token x region activity as SVG");
                      return [f] { return trace(*f); };
                    }}};

}  // namespace
}  // namespace synapse::cli

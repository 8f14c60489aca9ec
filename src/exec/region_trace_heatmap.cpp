// The token x region heatmap of `synapse trace --heatmap` as SVG.
#include <string>

#include "exec/region_trace_summary.h"

namespace synapse::exec {
namespace {

constexpr int kCell = 4;  // pixels per step and per region

const char* colour(char outcome) {
  switch (outcome) {
    case 'E': return "#1f4e79";  // executed
    case 'S': return "#dde7f0";  // skipped
    case 'B': return "#9bbf85";  // bypassed
    case 'A': return "#e8b0a0";  // absent
    default: return "#ffffff";
  }
}

}  // namespace

std::string trace_heatmap_svg(const TraceSummary& summary) {
  const size_t width = size_t{summary.regions} * kCell, height = summary.steps.size() * kCell;
  std::string svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" + std::to_string(width) + "\" height=\"" +
                    std::to_string(height) + "\" shape-rendering=\"crispEdges\">\n";
  svg += "<title>token x region activity: rows are steps, columns region ids</title>\n";
  for (size_t row = 0; row < summary.steps.size(); ++row) {
    const std::string& activity = summary.steps[row].activity;
    // One rectangle per run of equal outcomes keeps the file small.
    for (size_t col = 0; col < activity.size();) {
      size_t end = col + 1;
      while (end < activity.size() && activity[end] == activity[col]) ++end;
      if (activity[col] != '?')
        svg += "<rect x=\"" + std::to_string(col * kCell) + "\" y=\"" + std::to_string(row * kCell) +
               "\" width=\"" + std::to_string((end - col) * kCell) + "\" height=\"" + std::to_string(kCell) +
               "\" fill=\"" + colour(activity[col]) + "\"/>\n";
      col = end;
    }
  }
  return svg + "</svg>\n";
}

}  // namespace synapse::exec

// What synapse-bench-run measured and how it is reported: every engine run
// of every round, the rows (case × test) summarized from them, and the three
// outputs: rounds.json (everything raw), summary.md (the table) and the
// gnuplot script behind ratios.png.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench_plan.h"
#include "engines.h"
#include "paired_stats.h"

namespace synapse::bench {

struct MembwReading {
  int threads = 1;
  double before_gbps = 0;
  double after_gbps = 0;
};

struct HostInfo {
  std::string cpu_model;
  std::vector<MembwReading> membw;  // one per thread count of the plan
};

// One engine's invocation in one round.
struct EngineRun {
  int round = 0;  // from 1
  size_t case_index = 0;
  Engine engine = Engine::Synapse;
  int position = 0;  // 0: ran first in its round, 1: second
  std::vector<std::string> command;
  int exit_code = 0;
  double seconds = 0;
  std::string error;  // empty when the run succeeded
  std::vector<TestRate> rates;
};

// One case's test over the rounds.
struct RowResult {
  size_t case_index = 0;
  std::string test;
  std::vector<std::optional<double>> synapse_tps;  // per round; nullopt where the run failed
  std::vector<std::optional<double>> peer_tps;
  uint64_t decode_weight_bytes = 0;  // from synapse's tg runs, 0 otherwise
  // The lowest share of each engine's weights in 2 MiB pages over the
  // rounds (the page cache's state and the mapping's advice move decode
  // speed); < 0 unknown.
  double huge_page_share = -1;
  double peer_huge_page_share = -1;
  PairedSummary stats;
};

struct BenchReport {
  std::string command;       // how the runner was invoked
  nlohmann::json plan_json;  // the plan as run, flags applied
  Plan plan;
  HostInfo host;
  std::vector<EngineRun> runs;
  std::vector<RowResult> rows;
};

// One row per case and test, in plan order, from the runs.
std::vector<RowResult> summarize_rows(const Plan& plan, const std::vector<EngineRun>& runs);

nlohmann::json rounds_json(const BenchReport& report);

// The host line, the command, the table, and the decode bandwidth lines.
std::string summary_markdown(const BenchReport& report);

// A gnuplot script drawing each row's median ratio with its interval, and
// the line at 1.0, into `png_path`.
std::string ratio_plot_script(const BenchReport& report, const std::string& png_path);

}  // namespace synapse::bench

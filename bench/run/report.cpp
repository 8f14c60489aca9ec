#include "report.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>

namespace synapse::bench {
namespace {

using nlohmann::json;

// `value` through printf's `fmt`; "–" for NaN (a median of no rounds).
std::string format(const char* fmt, double value) {
  if (std::isnan(value)) return "–";
  char text[64];
  std::snprintf(text, sizeof text, fmt, value);
  return text;
}

std::string model_name(const BenchCase& c) { return std::filesystem::path(c.model).filename().string(); }

std::optional<double> rate_of(const EngineRun& run, const std::string& test) {
  if (!run.error.empty()) return std::nullopt;
  for (const TestRate& r : run.rates) {
    if (r.test == test) return r.tps;
  }
  return std::nullopt;
}

json optional_list(const std::vector<std::optional<double>>& values) {
  json list = json::array();
  for (const auto& v : values) list.push_back(v ? json(*v) : json(nullptr));
  return list;
}

const MembwReading* membw_at(const HostInfo& host, int threads) {
  for (const MembwReading& m : host.membw) {
    if (m.threads == threads) return &m;
  }
  return nullptr;
}

}  // namespace

std::vector<RowResult> summarize_rows(const Plan& plan, const std::vector<EngineRun>& runs) {
  std::vector<RowResult> rows;
  for (size_t ci = 0; ci < plan.cases.size(); ++ci) {
    for (const std::string& test : plan.cases[ci].tests()) {
      RowResult row;
      row.case_index = ci;
      row.test = test;
      row.synapse_tps.resize(static_cast<size_t>(plan.rounds));
      row.peer_tps.resize(static_cast<size_t>(plan.rounds));
      for (const EngineRun& run : runs) {
        if (run.case_index != ci) continue;
        auto& per_round = run.engine == Engine::Synapse ? row.synapse_tps : row.peer_tps;
        per_round.at(static_cast<size_t>(run.round - 1)) = rate_of(run, test);
        double& lowest_share = run.engine == Engine::Synapse ? row.huge_page_share : row.peer_huge_page_share;
        for (const TestRate& r : run.rates) {
          if (r.test == test && r.decode_weight_bytes > 0) row.decode_weight_bytes = r.decode_weight_bytes;
          if (r.test == test && r.huge_page_share >= 0)
            lowest_share = lowest_share < 0 ? r.huge_page_share : std::min(lowest_share, r.huge_page_share);
        }
      }
      row.stats = summarize_paired(row.synapse_tps, row.peer_tps, plan.cases[ci].target, plan.seed);
      rows.push_back(std::move(row));
    }
  }
  return rows;
}

json rounds_json(const BenchReport& report) {
  json membw = json::array();
  for (const MembwReading& m : report.host.membw) {
    membw.push_back({{"threads", m.threads},
                     {"size", report.plan.membw_size},
                     {"before_gbps", m.before_gbps},
                     {"after_gbps", m.after_gbps}});
  }
  json runs = json::array();
  for (const EngineRun& run : report.runs) {
    json tps = json::object();
    for (const TestRate& r : run.rates) tps[r.test] = r.tps;
    runs.push_back({{"round", run.round},
                    {"case", run.case_index},
                    {"engine", engine_name(run.engine)},
                    {"position", run.position},
                    {"command", run.command},
                    {"exit_code", run.exit_code},
                    {"seconds", run.seconds},
                    {"error", run.error},
                    {"tps", tps}});
  }
  json rows = json::array();
  for (const RowResult& row : report.rows) {
    const BenchCase& c = report.plan.cases[row.case_index];
    const PairedSummary& s = row.stats;
    rows.push_back({{"case", row.case_index},
                    {"model", c.model},
                    {"test", row.test},
                    {"threads", c.threads},
                    {"target", s.target},
                    {"synapse_tps", optional_list(row.synapse_tps)},
                    {"llama.cpp_tps", optional_list(row.peer_tps)},
                    {"ratios", s.ratios},
                    {"median_synapse_tps", s.median_a},
                    {"median_llama.cpp_tps", s.median_b},
                    {"median_ratio", s.median_ratio},
                    {"ci95", s.ci ? json::array({s.ci->low, s.ci->high}) : json(nullptr)},
                    {"verdict", verdict_name(s.verdict)},
                    {"decode_weight_bytes", row.decode_weight_bytes},
                    {"synapse_weights_in_2m_pages",
                     row.huge_page_share < 0 ? json(nullptr) : json(row.huge_page_share)},
                    {"llama.cpp_weights_in_2m_pages",
                     row.peer_huge_page_share < 0 ? json(nullptr) : json(row.peer_huge_page_share)}});
  }
  return {{"command", report.command},
          {"host", {{"cpu_model", report.host.cpu_model}, {"membw", membw}}},
          {"plan", report.plan_json},
          {"bootstrap", {{"resamples", kBootstrapResamples}, {"level", kConfidenceLevel}, {"seed", report.plan.seed}}},
          {"runs", runs},
          {"rows", rows}};
}

std::string summary_markdown(const BenchReport& report) {
  std::string md = "host: " + report.host.cpu_model;
  for (const MembwReading& m : report.host.membw) {
    md += "; synapse-membw (" + std::to_string(m.threads) + (m.threads == 1 ? " thread, " : " threads, ") +
          report.plan.membw_size + "): " + format("%.2f", m.before_gbps) + " GB/s before, " +
          format("%.2f", m.after_gbps) + " GB/s after";
  }
  md += "\ncommand: `" + report.command + "`\n";
  md += std::to_string(report.plan.rounds) +
        " paired rounds (engines alternating first); ratio: median over the rounds of synapse t/s / llama.cpp "
        "t/s; 95% CI: percentile bootstrap of that median (" +
        std::to_string(kBootstrapResamples) + " resamples, seed " + std::to_string(report.plan.seed) + ")\n\n";
  md += "| model | test | threads | synapse t/s | llama.cpp t/s | ratio | 95% CI | verdict |\n";
  md += "|---|---|--:|--:|--:|--:|---|---|\n";
  for (const RowResult& row : report.rows) {
    const BenchCase& c = report.plan.cases[row.case_index];
    const PairedSummary& s = row.stats;
    std::string verdict = verdict_name(s.verdict);
    if (s.target != 1.0) verdict += " (target " + format("%.2f", s.target) + ")";
    if (s.ratios.size() < static_cast<size_t>(report.plan.rounds)) {
      verdict += " (" + std::to_string(s.ratios.size()) + " of " + std::to_string(report.plan.rounds) + " rounds)";
    }
    const std::string ci = s.ci ? format("%.3f", s.ci->low) + " – " + format("%.3f", s.ci->high) : "–";
    md += "| " + model_name(c) + " | " + row.test + " | " + std::to_string(c.threads) + " | " +
          format("%.2f", s.median_a) + " | " + format("%.2f", s.median_b) + " | " + format("%.3f", s.median_ratio) +
          " | " + ci + " | " + verdict + " |\n";
  }
  // Decode reads every weight once per token: the bandwidth each engine's
  // median rate implies, against the lower of membw's two figures.
  for (const RowResult& row : report.rows) {
    const BenchCase& c = report.plan.cases[row.case_index];
    const MembwReading* m = membw_at(report.host, c.threads);
    if (row.decode_weight_bytes == 0 || m == nullptr) continue;
    const double lower_gbps = std::min(m->before_gbps, m->after_gbps);
    auto moved = [&](double tps) {
      if (std::isnan(tps)) return std::string("–");
      const double gbps = tps * static_cast<double>(row.decode_weight_bytes) / 1e9;
      return format("%.2f GB/s", gbps) + format(" (%.0f%% of membw)", 100 * gbps / lower_gbps);
    };
    md += "\n" + row.test + " on " + model_name(c) + ", " + std::to_string(c.threads) +
          (c.threads == 1 ? " thread" : " threads") + ": weights read at " + moved(row.stats.median_a) +
          " by synapse, " + moved(row.stats.median_b) + " by llama.cpp";
    const auto share = [](double s) { return s < 0 ? std::string("–") : format("%.0f%%", 100 * s); };
    if (row.huge_page_share >= 0 || row.peer_huge_page_share >= 0)
      md += "; weights in 2 MiB pages (lowest round): synapse " + share(row.huge_page_share) + ", llama.cpp " +
            share(row.peer_huge_page_share);
  }
  return md + "\n";
}

std::string ratio_plot_script(const BenchReport& report, const std::string& png_path) {
  auto number = [](double v) {
    return std::isnan(v) ? std::string("NaN") : format("%.6g", v);
  };  // gnuplot's missing value
  std::string data;
  bool any_target = false;
  for (size_t i = 0; i < report.rows.size(); ++i) {
    const RowResult& row = report.rows[i];
    const BenchCase& c = report.plan.cases[row.case_index];
    const PairedSummary& s = row.stats;
    std::string label = model_name(c) + " " + row.test + " t" + std::to_string(c.threads);
    std::erase(label, '"');
    const double low = s.ci ? s.ci->low : s.median_ratio, high = s.ci ? s.ci->high : s.median_ratio;
    data += std::to_string(i) + " " + number(s.median_ratio) + " " + number(low) + " " + number(high) + " " +
            number(s.target) + " \"" + label + "\"\n";
    any_target = any_target || s.target != 1.0;
  }
  std::string script = "set terminal pngcairo size " + std::to_string(std::max<size_t>(800, 140 * report.rows.size())) +
                       ",480\nset output '" + png_path + "'\n";
  script +=
      "set title 'synapse / llama.cpp t/s: median of paired rounds, bootstrap 95% CI'\n"
      "set ylabel 'ratio (log scale)'\nset grid ytics\nset key below horizontal\nset xtics rotate by 30 right\nset "
      "lmargin 16\nset offsets 0, 0, graph 0.05, graph 0.05\n"
      "set xrange [-0.5:" +
      std::to_string(report.rows.size()) + "-0.5]\nset logscale y\n";
  script += "$ratios << EOD\n" + data + "EOD\n";
  script +=
      "plot $ratios using 1:2:3:4:xtic(6) with yerrorbars pt 7 lc rgb '#1f5fa8' title 'median ratio, 95% CI', \\\n"
      "     1 with lines dt 2 lc rgb 'black' title 'parity'";
  if (any_target) script += ", \\\n     $ratios using 1:5 with points pt 2 lc rgb '#c03020' title 'target'";
  return script + "\n";
}

}  // namespace synapse::bench

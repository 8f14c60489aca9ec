// synapse-bench-run [PLAN.json] [-m FILE -p 512 -n 128 -t 1] [-k 10] [-o DIR]:
// Synapse against llama.cpp over paired rounds. Each round runs every case
// of the plan on both engines, one timed repetition each, the engine that
// goes first alternating from round to round; synapse-membw runs before and
// after. Writes rounds.json, summary.md and ratios.png into DIR and prints
// the summary. Exit codes: 0 ok, 1 a run failed, 2 bad flags or plan.
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "bench_plan.h"
#include "engines.h"
#include "page_cache.h"
#include "paired_stats.h"
#include "report.h"
#include "subprocess.h"

namespace synapse::bench {
namespace {

constexpr int kExitRunFailed = 1;
constexpr int kExitUsage = 2;

// A failure that ends the run with exit code 1.
struct RunFailure : std::runtime_error {
  using std::runtime_error::runtime_error;
};

std::vector<std::string> split_words(const std::string& text) {
  std::istringstream in(text);
  std::vector<std::string> words;
  for (std::string w; in >> w;) words.push_back(w);
  return words;
}

// The build folder this executable belongs to: <build>/bench/run/synapse-bench-run.
std::string own_build_dir() {
  std::error_code ec;
  const std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "build" : exe.parent_path().parent_path().parent_path().string();
}

std::string cpu_model() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (line.rfind("model name", 0) == 0 && line.find(':') != std::string::npos) {
      return line.substr(line.find_first_not_of(" \t", line.find(':') + 1));
    }
  }
  return "unknown CPU";
}

double membw_gbps(const BuildPrograms& programs, int threads, const std::string& size) {
  const std::vector<std::string> command = {programs.membw, "-t",  std::to_string(threads), "-s", size, "-r", "3",
                                            "-o",           "json"};
  const ProcessResult r = run_process(command);
  try {
    if (r.exit_code == 0) return nlohmann::json::parse(r.out).at("median_gbps").get<double>();
  } catch (const nlohmann::json::exception&) {
  }
  throw RunFailure("synapse-membw failed (exit " + std::to_string(r.exit_code) + "): " + shell_line(command) + "\n" +
                   tail_lines(r.err, 5));
}

EngineRun run_engine(Engine engine, const BuildPrograms& programs, const Plan& plan, size_t case_index, int round,
                     int position) {
  EngineRun run;
  run.round = round;
  run.case_index = case_index;
  run.engine = engine;
  run.position = position;
  run.command = engine_command(engine, programs, plan.cases[case_index], plan);
  if (plan.reread && !reread_into_page_cache(plan.cases[case_index].model))
    std::fprintf(stderr, "# could not read %s back into the page cache\n", plan.cases[case_index].model.c_str());
  const ProcessResult r = run_process(
      run.command, {{"SYNAPSE_BENCH_ENGINE", engine_name(engine)}, {"SYNAPSE_BENCH_ROUND", std::to_string(round)}});
  run.exit_code = r.exit_code;
  run.seconds = r.seconds;
  if (r.exit_code != 0) {
    run.error = "exit " + std::to_string(r.exit_code) + ": " + tail_lines(r.err, 5);
  } else {
    try {
      run.rates = parse_engine_output(engine, r.out, plan.cases[case_index]);
    } catch (const std::runtime_error& e) {
      run.error = e.what();
    }
  }
  if (!run.error.empty() && !plan.keep_going) {
    throw RunFailure(std::string(engine_name(engine)) + " failed in round " + std::to_string(round) + ": " +
                     shell_line(run.command) + "\n" + run.error);
  }
  return run;
}

void report_progress(const EngineRun& run, const Plan& plan) {
  const BenchCase& c = plan.cases[run.case_index];
  std::string line = "round " + std::to_string(run.round) + "/" + std::to_string(plan.rounds) + ", case " +
                     std::to_string(run.case_index + 1) + "/" + std::to_string(plan.cases.size()) + " (" +
                     std::filesystem::path(c.model).filename().string() + ", t" + std::to_string(c.threads) +
                     "): " + engine_name(run.engine);
  char text[64];
  for (const TestRate& r : run.rates) {
    std::snprintf(text, sizeof text, " %s %.2f", r.test.c_str(), r.tps);
    line += text;
  }
  std::snprintf(text, sizeof text, " t/s (%.1f s)", run.seconds);
  line += run.error.empty() ? text : " FAILED, " + run.error;
  std::fprintf(stderr, "# %s\n", line.c_str());
}

void write_text(const std::filesystem::path& path, const std::string& text) {
  std::ofstream out(path);
  out << text;
  if (!out.flush()) throw RunFailure("cannot write " + path.string());
}

// Runs the plan and writes the outputs into `out_dir`.
void run_plan(BenchReport& report, const BuildPrograms& programs, const std::filesystem::path& out_dir) {
  const Plan& plan = report.plan;
  report.host.cpu_model = cpu_model();
  std::set<int> thread_counts;
  for (const BenchCase& c : plan.cases) thread_counts.insert(c.threads);
  for (int t : thread_counts) report.host.membw.push_back({t, membw_gbps(programs, t, plan.membw_size), 0});
  for (int round = 1; round <= plan.rounds; ++round) {
    const bool synapse_first = round % 2 == 1;
    for (size_t ci = 0; ci < plan.cases.size(); ++ci) {
      for (int position = 0; position < 2; ++position) {
        const Engine engine = (position == 0) == synapse_first ? Engine::Synapse : Engine::LlamaCpp;
        report.runs.push_back(run_engine(engine, programs, plan, ci, round, position));
        report_progress(report.runs.back(), plan);
      }
    }
  }
  for (MembwReading& m : report.host.membw) m.after_gbps = membw_gbps(programs, m.threads, plan.membw_size);
  report.rows = summarize_rows(plan, report.runs);

  const std::string summary = summary_markdown(report);
  write_text(out_dir / "rounds.json", rounds_json(report).dump(2) + "\n");
  write_text(out_dir / "summary.md", summary);
  std::fputs(summary.c_str(), stdout);
  const std::filesystem::path script = out_dir / "ratios.gp";
  write_text(script, ratio_plot_script(report, (out_dir / "ratios.png").string()));
  const ProcessResult plot = run_process({"gnuplot", script.string()});
  if (plot.exit_code == 127) {
    std::fprintf(stderr, "# gnuplot not found: no ratios.png (apt-get install gnuplot-nox; then gnuplot %s)\n",
                 script.c_str());
  } else if (plot.exit_code != 0) {
    std::fprintf(stderr, "# gnuplot failed, no ratios.png: %s\n", tail_lines(plot.err, 3).c_str());
  }
  std::fprintf(stderr, "# outputs in %s\n", out_dir.c_str());
}

int run_main(int argc, char** argv) {
  CLI::App app{"Synapse against llama.cpp over paired rounds, with a verdict per row"};
  std::string plan_file, build_dir = own_build_dir(), out_dir, wrap, synapse_args, peer_args, membw_size;
  std::vector<std::string> models;
  std::vector<int> threads{1};
  int n_prompt = 512, n_gen = 128, n_depth = 0, rounds = 0;
  uint64_t seed = 0;
  double target = 1.0;
  bool keep_going = false, reread = false;
  app.add_option("plan", plan_file, "plan file (JSON; see bench/README.md), instead of -m/-p/-n/-t/--target");
  auto* model_opt = app.add_option("-m,--model", models, "model file (repeat for several)");
  auto* prompt_opt =
      app.add_option("-p,--n-prompt", n_prompt, "prompt length of the pp test, 0 skips")->capture_default_str();
  auto* gen_opt =
      app.add_option("-n,--n-gen", n_gen, "generated tokens of the tg test, 0 skips")->capture_default_str();
  auto* depth_opt =
      app.add_option("-d,--n-depth", n_depth, "tokens in the context before each test, untimed")->capture_default_str();
  auto* threads_opt = app.add_option("-t,--threads", threads, "thread counts, comma list")->delimiter(',');
  auto* target_opt = app.add_option("--target", target, "the ratio a win must exceed (default 1)");
  auto* rounds_opt = app.add_option("-k,--rounds", rounds, "paired rounds (default 10)");
  auto* membw_opt = app.add_option("-s,--membw-size", membw_size, "synapse-membw buffer size (default 1G)");
  auto* seed_opt = app.add_option("--seed", seed, "bootstrap seed (default 1)");
  auto* wrap_opt = app.add_option("--wrap", wrap, "command prefix of every engine run (split on spaces)");
  auto* synapse_opt = app.add_option("--synapse-args", synapse_args, "extra synapse bench arguments (split on spaces)");
  auto* peer_opt = app.add_option("--peer-args", peer_args, "extra synapse-peer bench arguments (split on spaces)");
  auto* keep_opt = app.add_flag("--keep-going", keep_going, "record a failed run and go on (it counts in no median)");
  auto* reread_opt = app.add_flag("--reread", reread,
                                  "before every run, drop the model from the page cache and read it back in order");
  app.add_option("-b,--build", build_dir, "build folder holding synapse, synapse-peer, synapse-membw")
      ->capture_default_str();
  app.add_option("-o,--out", out_dir, "output folder (default: a new one under /tmp)");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : kExitUsage;
  }

  BenchReport report;
  std::vector<std::string> args(argv, argv + argc);
  report.command = shell_line(args);
  try {
    const bool row_flags =
        model_opt->count() + prompt_opt->count() + gen_opt->count() + depth_opt->count() + threads_opt->count() +
            target_opt->count() >
        0;
    if (!plan_file.empty() && row_flags)
      throw PlanError("(flags)", "give a plan file or -m/-p/-n/-t/--target, not both");
    if (plan_file.empty() && models.empty()) throw PlanError("(flags)", "give a plan file or -m FILE");
    nlohmann::json& plan = report.plan_json;
    if (!plan_file.empty()) {
      plan = read_plan_file(plan_file);
    } else {
      plan = {
          {"rows", {{{"model", models},
            {"threads", threads},
            {"pp", n_prompt},
            {"tg", n_gen},
            {"depth", n_depth},
            {"target", target}}}}};
    }
    if (!plan.is_object()) throw PlanError("(plan)", "expected a JSON object");
    if (rounds_opt->count()) plan["rounds"] = rounds;
    if (membw_opt->count()) plan["membw_size"] = membw_size;
    if (seed_opt->count()) plan["seed"] = seed;
    if (wrap_opt->count()) plan["wrap"] = split_words(wrap);
    if (synapse_opt->count()) plan["engine_args"]["synapse"] = split_words(synapse_args);
    if (peer_opt->count()) plan["engine_args"]["llama.cpp"] = split_words(peer_args);
    if (keep_opt->count()) plan["keep_going"] = true;
    if (reread_opt->count()) plan["reread"] = true;
    report.plan = parse_plan(plan);
  } catch (const PlanError& e) {
    std::fprintf(stderr, "synapse-bench-run: bad plan: %s\n", e.what());
    return kExitUsage;
  }
  if (report.plan.rounds < kRecommendedRounds) {
    std::fprintf(stderr, "# warning: %d rounds; a bootstrap interval needs about %d to be trusted\n",
                 report.plan.rounds, kRecommendedRounds);
  }

  const BuildPrograms programs(build_dir);
  for (const std::string& program : {programs.synapse, programs.peer, programs.membw}) {
    if (::access(program.c_str(), X_OK) != 0) {
      std::fprintf(stderr, "synapse-bench-run: %s not built (ninja -C %s synapse synapse-peer synapse-membw)\n",
                   program.c_str(), build_dir.c_str());
      return kExitRunFailed;
    }
  }
  try {
    std::filesystem::path out = out_dir;
    if (out_dir.empty()) {
      std::string pattern = (std::filesystem::temp_directory_path() / "synapse-bench-run.XXXXXX").string();
      if (::mkdtemp(pattern.data()) == nullptr) throw RunFailure("cannot create a folder " + pattern);
      out = pattern;
    }
    std::filesystem::create_directories(out);
    run_plan(report, programs, out);
  } catch (const RunFailure& e) {
    std::fprintf(stderr, "synapse-bench-run: %s\n", e.what());
    return kExitRunFailed;
  } catch (const std::filesystem::filesystem_error& e) {
    std::fprintf(stderr, "synapse-bench-run: %s\n", e.what());
    return kExitRunFailed;
  }
  return 0;
}

}  // namespace
}  // namespace synapse::bench

int main(int argc, char** argv) { return synapse::bench::run_main(argc, argv); }

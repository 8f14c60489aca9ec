#include "generate/bench_runner.h"

#include <algorithm>
#include <chrono>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <map>
#include <numeric>
#include <random>

#include "encoding/encoding.h"

namespace synapse {
namespace {

constexpr uint32_t kTokenSeed = 1234;  // the seed synapse-peer's bench uses

double mean(const std::vector<double>& v) {
  return v.empty() ? 0.0 : std::accumulate(v.begin(), v.end(), 0.0) / static_cast<double>(v.size());
}

// Sample standard deviation, as llama-bench computes it.
double stddev(const std::vector<double>& v) {
  if (v.size() < 2) return 0.0;
  const double m = mean(v);
  double sum = 0.0;
  for (double x : v) sum += (x - m) * (x - m);
  return std::sqrt(sum / static_cast<double>(v.size() - 1));
}

std::string printf_string(const char* format, double a, const char* unit) {
  char buf[64];
  std::snprintf(buf, sizeof buf, format, a, unit);
  return buf;
}

// "4.58 M", "494.03 M", "1.24 B": llama-bench's params column.
std::string params_label(uint64_t n, const char* format) {
  const double x = static_cast<double>(n);
  if (x >= 1e9) return printf_string(format, x / 1e9, "B");
  if (x >= 1e6) return printf_string(format, x / 1e6, "M");
  return printf_string(format, x / 1e3, "K");
}

std::string size_label(uint64_t bytes) {
  const double x = static_cast<double>(bytes);
  if (x >= 1024.0 * 1024 * 1024) return printf_string("%.2f %s", x / (1024.0 * 1024 * 1024), "GiB");
  return printf_string("%.2f %s", x / (1024.0 * 1024), "MiB");
}

// The encoding holding the most weight bytes, upper case as llama.cpp
// names file types ("Q8_0", "F32").
std::string dominant_encoding(const ir::Graph& graph) {
  std::map<Encoding, uint64_t> bytes;
  for (const auto& w : graph.weights) bytes[w.encoding] += w.length;
  if (bytes.empty()) return "?";
  const auto top = std::max_element(bytes.begin(), bytes.end(),
                                    [](const auto& a, const auto& b) { return a.second < b.second; });
  std::string name = encoding_info(top->first).name;
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return std::toupper(c); });
  return name;
}

uint64_t elapsed_ns(std::chrono::steady_clock::time_point start) {
  return static_cast<uint64_t>(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start).count());
}

// Empties the session, then evaluates the depth's tokens (untimed).
void fill_context(exec::Session& session, std::span<const int32_t> depth) {
  session.reset();
  if (!depth.empty()) session.eval(depth);
}

uint64_t time_prompt(exec::Session& session, std::span<const int32_t> depth, std::span<const int32_t> tokens) {
  fill_context(session, depth);
  const auto start = std::chrono::steady_clock::now();
  session.eval(tokens);
  return elapsed_ns(start);
}

uint64_t time_generation(exec::Session& session, std::span<const int32_t> depth, std::span<const int32_t> tokens) {
  fill_context(session, depth);
  const auto start = std::chrono::steady_clock::now();
  for (size_t i = 0; i < tokens.size(); ++i) session.eval(tokens.subspan(i, 1));
  return elapsed_ns(start);
}

}  // namespace

std::string BenchTest::name() const {
  const std::string test = n_prompt > 0 ? "pp" + std::to_string(n_prompt) : "tg" + std::to_string(n_gen);
  return n_depth > 0 ? test + " @ d" + std::to_string(n_depth) : test;
}

std::vector<BenchTest> bench_tests(const std::vector<uint32_t>& prompts, const std::vector<uint32_t>& gens,
                                   const std::vector<uint32_t>& depths) {
  std::vector<BenchTest> tests;
  for (uint32_t p : prompts)
    for (uint32_t d : depths)
      if (p > 0) tests.push_back({.n_prompt = p, .n_depth = d});
  for (uint32_t n : gens)
    for (uint32_t d : depths)
      if (n > 0) tests.push_back({.n_gen = n, .n_depth = d});
  return tests;
}

double BenchResult::avg_ns() const {
  return mean(std::vector<double>(samples_ns.begin(), samples_ns.end()));
}
double BenchResult::stddev_ns() const {
  return stddev(std::vector<double>(samples_ns.begin(), samples_ns.end()));
}
std::vector<double> BenchResult::samples_ts() const {
  std::vector<double> ts;
  for (uint64_t ns : samples_ns) ts.push_back(1e9 * test.tokens() / static_cast<double>(ns));
  return ts;
}
double BenchResult::avg_ts() const { return mean(samples_ts()); }
double BenchResult::stddev_ts() const { return stddev(samples_ts()); }

uint64_t decode_weight_bytes(exec::Session& session) {
  struct ListenerScope {  // the listener goes, whichever way eval leaves
    exec::RegionScheduler& scheduler;
    ~ListenerScope() { scheduler.set_listener(nullptr); }
  } scope{session.scheduler()};
  uint64_t bytes = 0;
  scope.scheduler.set_listener([&bytes](const exec::RegionEvent& event, std::span<const exec::TensorRef>) {
    bytes += event.weight_bytes_touched;
  });
  const std::vector<int32_t> token = bench_tokens(1, static_cast<uint32_t>(session.vocab()));
  session.reset();
  session.eval(token);
  session.reset();
  return bytes;
}

BenchModel describe_model(const Model& model, const std::string& filename, exec::Session& session) {
  BenchModel m = describe_weights(model, filename);
  m.decode_bytes = decode_weight_bytes(session);
  uint64_t huge = 0, mapped = 0;
  for (const auto& file : model.files) {
    huge += file->bytes_in_huge_pages();
    mapped += file->bytes().size();
  }
  if (mapped > 0) m.huge_page_share = static_cast<double>(huge) / static_cast<double>(mapped);
  const exec::LayerDrop& drop = session.scheduler().layer_drop();
  m.numerical_mode = drop.numerical_mode();
  m.dropped_layers = drop.layers;
  return m;
}

BenchModel describe_weights(const Model& model, const std::string& filename) {
  BenchModel m;
  m.filename = filename;
  for (const auto& w : model.graph.weights) {
    m.size += w.length;
    uint64_t elems = 1;
    for (int64_t d : w.shape) elems *= static_cast<uint64_t>(d);
    m.n_params += elems;
  }
  m.type = model.info.architecture + " " + params_label(m.n_params, "%.1f%s") + " " +
           dominant_encoding(model.graph);
  return m;
}

std::vector<int32_t> bench_tokens(uint32_t n, uint32_t vocab) {
  std::mt19937 rng(kTokenSeed);
  std::vector<int32_t> tokens(n);
  for (auto& t : tokens) t = static_cast<int32_t>(rng() % vocab);
  return tokens;
}

BenchResult run_bench_test(exec::Session& session, const BenchTest& test, int reps, bool warmup) {
  // The depth's tokens, then the test's.
  const std::vector<int32_t> ids = bench_tokens(test.context(), static_cast<uint32_t>(session.vocab()));
  const std::span<const int32_t> depth = std::span(ids).first(test.n_depth);
  const std::span<const int32_t> tokens = std::span(ids).subspan(test.n_depth);
  BenchResult result;
  result.test = test;
  if (test.n_prompt > 0) {
    if (warmup) time_prompt(session, depth, tokens);
    for (int r = 0; r < reps; ++r) result.samples_ns.push_back(time_prompt(session, depth, tokens));
  } else {
    if (warmup) time_generation(session, depth, tokens.first(1));  // one token, as llama-bench
    for (int r = 0; r < reps; ++r) result.samples_ns.push_back(time_generation(session, depth, tokens));
  }
  session.reset();
  return result;
}

std::string bench_markdown(const BenchModel& model, int threads, const std::vector<BenchResult>& results) {
  std::string out =
      "| model                          |       size |     params | threads |          test |"
      "                  t/s |\n"
      "| ------------------------------ | ---------: | ---------: | ------: | ------------: |"
      " -------------------: |\n";
  for (const auto& r : results) {
    char ts[64];
    std::snprintf(ts, sizeof ts, "%.2f ± %.2f", r.avg_ts(), r.stddev_ts());
    char line[512];
    std::snprintf(line, sizeof line, "| %-30s | %10s | %10s | %7d | %13s | %20s |\n", model.type.c_str(),
                  size_label(model.size).c_str(), params_label(model.n_params, "%.2f %s").c_str(), threads,
                  r.test.name().c_str(), ts);
    out += line;
  }
  return out;
}

nlohmann::json bench_json(const BenchModel& model, int threads, const BenchResult& r) {
  nlohmann::json record = {
      {"model_filename", model.filename},
      {"model_type", model.type},
      {"model_size", model.size},
      {"model_n_params", model.n_params},
      {"n_threads", threads},
      {"n_prompt", r.test.n_prompt},
      {"n_gen", r.test.n_gen},
      {"n_depth", r.test.n_depth},
      {"avg_ns", static_cast<uint64_t>(std::llround(r.avg_ns()))},
      {"stddev_ns", static_cast<uint64_t>(std::llround(r.stddev_ns()))},
      {"avg_ts", r.avg_ts()},
      {"decode_weight_bytes", model.decode_bytes},
      {"weights_in_2m_pages", model.huge_page_share},
      {"numerical_mode", model.numerical_mode},
      {"dropped_layers", model.dropped_layers},
      {"stddev_ts", r.stddev_ts()},
      {"samples_ns", r.samples_ns},
      {"samples_ts", r.samples_ts()},
  };
  if (model.decode_bytes == 0) record.erase("decode_weight_bytes");
  if (model.huge_page_share < 0) record.erase("weights_in_2m_pages");
  return record;
}

}  // namespace synapse

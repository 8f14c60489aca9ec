// Throughput measured the way llama-bench measures it, so Synapse's numbers
// line up with llama-bench runs and with synapse-peer's `bench`:
//   pp<N>: N random token ids evaluated in one call from an empty context;
//          t/s = N / time.
//   tg<N>: N single-token evaluations from an empty context.
// With a depth D (llama-bench's -d, "pp512 @ d4096"), each run first fills
// the context with D tokens, untimed, and the test runs after them.
// One untimed warm-up run per test (unless turned off: at long context it
// costs as much as the test), then R timed repetitions, the session
// reset before each. Token ids come from a fixed seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "exec/session.h"
#include "model/model.h"

namespace synapse {

// One test: exactly one of n_prompt and n_gen is non-zero.
struct BenchTest {
  uint32_t n_prompt = 0;
  uint32_t n_gen = 0;
  uint32_t n_depth = 0;  // tokens in the context before the test

  std::string name() const;  // "pp512", "tg128", "tg128 @ d4096"
  uint32_t tokens() const { return n_prompt + n_gen; }  // timed
  uint32_t context() const { return n_depth + tokens(); }
};

// The pp tests for `prompts` then the tg tests for `gens`, skipping zeros,
// each at every depth of `depths`.
std::vector<BenchTest> bench_tests(const std::vector<uint32_t>& prompts, const std::vector<uint32_t>& gens,
                                   const std::vector<uint32_t>& depths = {0});

struct BenchResult {
  BenchTest test;
  std::vector<uint64_t> samples_ns;  // one per timed repetition

  double avg_ns() const;
  double stddev_ns() const;               // sample standard deviation; 0 for one sample
  std::vector<double> samples_ts() const;  // tokens per second, per repetition
  double avg_ts() const;
  double stddev_ts() const;
};

// What llama-bench reports about the model.
struct BenchModel {
  std::string filename;
  std::string type;      // "<arch> <params> <dominant encoding>", e.g. "llama 4.6M Q8_0"
  uint64_t size = 0;      // bytes of weights
  uint64_t n_params = 0;  // elements of weights
  // Weight bytes one decode step reads (decode_weight_bytes below); 0:
  // not measured (left out of the JSON).
  uint64_t decode_bytes = 0;
  // The share of the weight files mapped in 2 MiB pages after that step;
  // negative: not measured (left out of the JSON).
  double huge_page_share = -1;
  // "EquivalentNumerics", or "QualityBounded" with dropped layers.
  std::string numerical_mode = "EquivalentNumerics";
  std::vector<uint32_t> dropped_layers;
};

// `session` must run `model`; it is used for one decode step and reset.
BenchModel describe_model(const Model& model, const std::string& filename, exec::Session& session);
// The file's weights only: no decode bytes measured, EquivalentNumerics.
BenchModel describe_weights(const Model& model, const std::string& filename);

// The weight bytes one decode step reads, as the scheduler counts them: the
// weights of every region the step executes (an embedding table: one row).
// A mixture-of-experts layer counts its router's k experts, not all of them.
// Measured by evaluating the first benchmark token at position 0, with the
// scheduler's listener (replaced, then cleared); the session is then reset.
uint64_t decode_weight_bytes(exec::Session& session);

// `n` token ids below `vocab`, the same for every run.
std::vector<int32_t> bench_tokens(uint32_t n, uint32_t vocab);

// Runs one test: a warm-up (when `warmup`), then `reps` timed repetitions.
// Throws what the session throws (a test longer than its context:
// InvalidValue).
BenchResult run_bench_test(exec::Session& session, const BenchTest& test, int reps, bool warmup = true);

// llama-bench's markdown table, one row per result.
std::string bench_markdown(const BenchModel& model, int threads, const std::vector<BenchResult>& results);

// llama-bench's JSON record for one result.
nlohmann::json bench_json(const BenchModel& model, int threads, const BenchResult& result);

}  // namespace synapse

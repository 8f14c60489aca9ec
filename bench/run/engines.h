// The two engines synapse-bench-run compares: how each is invoked for one
// timed repetition of a case's tests, and how its output is read.
//   synapse:   BUILD/synapse bench -m FILE -p N -n N -d D -t T -r 1 -o jsonl ARGS
//   llama.cpp: BUILD/bench/peer/synapse-peer bench FILE --pp N --tg N -d D -t T -r 1 ARGS
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include "bench_plan.h"

namespace synapse::bench {

enum class Engine { Synapse, LlamaCpp };
inline constexpr std::array<Engine, 2> kEngines = {Engine::Synapse, Engine::LlamaCpp};

// "synapse" or "llama.cpp", as in plans and reports.
const char* engine_name(Engine engine);

// The programs of a build folder.
struct BuildPrograms {
  std::string synapse;
  std::string peer;
  std::string membw;
  explicit BuildPrograms(const std::string& build_dir);
};

// The full command line of one run, the plan's wrap prefix first.
std::vector<std::string> engine_command(Engine engine, const BuildPrograms& programs, const BenchCase& c,
                                        const Plan& plan);

// One test's throughput from one run.
struct TestRate {
  std::string test;  // "pp512", "tg128", "tg128 @ d8192"
  double tps = 0;
  uint64_t decode_weight_bytes = 0;  // synapse's tg tests only: weight bytes one decode step reads
  double huge_page_share = -1;       // tg tests: the engine's weights' share in 2 MiB pages; < 0 unknown
};

// Reads the JSON lines an engine printed; throws std::runtime_error when a
// test of `c` is missing or a line is not what the engine prints.
std::vector<TestRate> parse_engine_output(Engine engine, const std::string& output, const BenchCase& c);

}  // namespace synapse::bench

// The declarative plan synapse-bench-run follows: which models, tests and
// thread counts to measure on both engines, for how many paired rounds. A
// JSON object (see bench/README.md, "bench/run"):
//   {"rounds": 10, "seed": 1, "membw_size": "1G", "keep_going": false, "reread": false,
//    "wrap": ["cmd", "arg"], "engine_args": {"synapse": [...], "llama.cpp": [...]},
//    "rows": [{"model": "a.gguf" | [...], "threads": 1 | [...], "pp": 512, "tg": 128, "depth": 0,
//              "target": 1.0}]}
// Each entry of "rows" stands for every model × threads pair it names.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <vector>

namespace synapse::bench {

// A plan the parser refuses; field() names where, e.g. "rows[0].threads".
class PlanError : public std::runtime_error {
 public:
  PlanError(const std::string& field, const std::string& problem)
      : std::runtime_error(field + ": " + problem), field_(field) {}
  const std::string& field() const { return field_; }

 private:
  std::string field_;
};

// One model at one thread count: each engine measures its tests (pp, tg or
// both) in one invocation per round.
struct BenchCase {
  std::string model;
  int threads = 1;
  int n_prompt = 0;     // the ppN test, 0 for none
  int n_gen = 0;        // the tgN test, 0 for none
  int n_depth = 0;      // tokens in the context before each test (llama-bench's -d)
  double target = 1.0;  // the ratio synapse / llama.cpp a win must exceed

  // "pp512", "tg128", "tg128 @ d8192": the tests this case runs, pp first.
  std::vector<std::string> tests() const;
};

struct Plan {
  int rounds = 10;
  uint64_t seed = 1;  // of the bootstrap
  std::string membw_size = "1G";
  bool keep_going = false;                // a failed run is recorded and left out, not fatal
  bool reread = false;                    // each run's model is dropped from the page cache and read back first
  std::vector<std::string> wrap;          // command prefix of every engine run
  std::vector<std::string> synapse_args;  // appended to `synapse bench`
  std::vector<std::string> peer_args;     // appended to `synapse-peer bench`
  std::vector<BenchCase> cases;           // the rows, expanded
};

inline constexpr int kRecommendedRounds = 10;

// Checks every field (unknown ones too) and that each model file exists.
Plan parse_plan(const nlohmann::json& plan);

// Reads and parses a plan file; a file that is not JSON fails with field "(file)".
nlohmann::json read_plan_file(const std::string& path);

}  // namespace synapse::bench

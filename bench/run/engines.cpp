#include "engines.h"

#include <algorithm>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>

namespace synapse::bench {

const char* engine_name(Engine engine) { return engine == Engine::Synapse ? "synapse" : "llama.cpp"; }

BuildPrograms::BuildPrograms(const std::string& build_dir)
    : synapse(build_dir + "/synapse"),
      peer(build_dir + "/bench/peer/synapse-peer"),
      membw(build_dir + "/bench/membw/synapse-membw") {}

std::vector<std::string> engine_command(Engine engine, const BuildPrograms& programs, const BenchCase& c,
                                        const Plan& plan) {
  std::vector<std::string> command = plan.wrap;
  const std::string pp = std::to_string(c.n_prompt), tg = std::to_string(c.n_gen), t = std::to_string(c.threads),
                    d = std::to_string(c.n_depth);
  const std::vector<std::string>* extra = nullptr;
  if (engine == Engine::Synapse) {
    command.insert(command.end(),
                   {programs.synapse, "bench", "-m", c.model, "-p", pp, "-n", tg, "-d", d, "-t", t, "-r", "1", "-o", "jsonl"});
    extra = &plan.synapse_args;
  } else {
    command.insert(command.end(), {programs.peer, "bench", c.model, "--pp", pp, "--tg", tg, "-d", d, "-t", t, "-r", "1"});
    extra = &plan.peer_args;
  }
  command.insert(command.end(), extra->begin(), extra->end());
  return command;
}

namespace {

// synapse bench -o jsonl: llama-bench's fields; the test is named by
// n_prompt / n_gen and n_depth.
TestRate synapse_rate(const nlohmann::json& line) {
  const int n_prompt = line.at("n_prompt").get<int>(), n_depth = line.value("n_depth", 0);
  std::string test = n_prompt > 0 ? "pp" + std::to_string(n_prompt) : "tg" + std::to_string(line.at("n_gen").get<int>());
  if (n_depth > 0) test += " @ d" + std::to_string(n_depth);
  TestRate rate{test, line.at("avg_ts").get<double>()};
  if (n_prompt == 0) {
    rate.decode_weight_bytes = line.value("decode_weight_bytes", uint64_t{0});
    rate.huge_page_share = line.value("weights_in_2m_pages", -1.0);
  }
  return rate;
}

// synapse-peer bench: "test" and "median_tps" (of its one repetition).
TestRate peer_rate(const nlohmann::json& line) {
  TestRate rate{line.at("test").get<std::string>(), line.at("median_tps").get<double>()};
  rate.huge_page_share = line.value("weights_in_2m_pages", -1.0);
  return rate;
}

}  // namespace

std::vector<TestRate> parse_engine_output(Engine engine, const std::string& output, const BenchCase& c) {
  std::vector<TestRate> rates;
  std::istringstream lines(output);
  for (std::string line; std::getline(lines, line);) {
    if (line.empty() || line[0] != '{') continue;  // only the result lines are JSON objects
    try {
      const nlohmann::json parsed = nlohmann::json::parse(line);
      rates.push_back(engine == Engine::Synapse ? synapse_rate(parsed) : peer_rate(parsed));
    } catch (const nlohmann::json::exception& e) {
      throw std::runtime_error(std::string(engine_name(engine)) + " printed an unexpected line (" + e.what() +
                               "): " + line);
    }
  }
  for (const std::string& test : c.tests()) {
    const bool found = std::any_of(rates.begin(), rates.end(), [&](const TestRate& r) { return r.test == test; });
    if (!found) throw std::runtime_error(std::string(engine_name(engine)) + " printed no result for " + test);
  }
  return rates;
}

}  // namespace synapse::bench

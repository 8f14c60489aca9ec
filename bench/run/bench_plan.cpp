#include "bench_plan.h"

#include <filesystem>
#include <fstream>
#include <set>

namespace synapse::bench {
namespace {

using nlohmann::json;

void require_known_keys(const json& object, const std::string& where, const std::set<std::string>& known) {
  for (const auto& [key, value] : object.items()) {
    if (!known.contains(key)) throw PlanError(where.empty() ? key : where + "." + key, "unknown field");
  }
}

int positive_int(const json& value, const std::string& field, int minimum) {
  if (!value.is_number_integer() || value.get<int64_t>() < minimum || value.get<int64_t>() > 1'000'000) {
    throw PlanError(field, "expected an integer of at least " + std::to_string(minimum));
  }
  return value.get<int>();
}

std::vector<std::string> string_list(const json& value, const std::string& field) {
  if (!value.is_array()) throw PlanError(field, "expected a list of strings");
  std::vector<std::string> list;
  for (size_t i = 0; i < value.size(); ++i) {
    if (!value[i].is_string()) throw PlanError(field + "[" + std::to_string(i) + "]", "expected a string");
    list.push_back(value[i].get<std::string>());
  }
  return list;
}

// A value or a list of values, each checked by `one(value, field)`.
template <typename T, typename One>
std::vector<T> one_or_list(const json& value, const std::string& field, One one) {
  if (!value.is_array()) return {one(value, field)};
  if (value.empty()) throw PlanError(field, "empty list");
  std::vector<T> list;
  for (size_t i = 0; i < value.size(); ++i) list.push_back(one(value[i], field + "[" + std::to_string(i) + "]"));
  return list;
}

std::string model_file(const json& value, const std::string& field) {
  if (!value.is_string()) throw PlanError(field, "expected a model file name");
  const std::string path = value.get<std::string>();
  if (!std::filesystem::is_regular_file(path)) throw PlanError(field, "no such file '" + path + "'");
  return path;
}

void parse_row(const json& row, const std::string& where, std::vector<BenchCase>& cases) {
  if (!row.is_object()) throw PlanError(where, "expected an object");
  require_known_keys(row, where, {"model", "threads", "pp", "tg", "depth", "target"});
  if (!row.contains("model")) throw PlanError(where + ".model", "missing");
  const std::vector<std::string> models = one_or_list<std::string>(row["model"], where + ".model", model_file);
  const std::vector<int> threads =
      row.contains("threads")
          ? one_or_list<int>(row["threads"], where + ".threads",
                             [](const json& v, const std::string& f) { return positive_int(v, f, 1); })
          : std::vector<int>{1};
  BenchCase base;
  if (row.contains("pp")) base.n_prompt = positive_int(row["pp"], where + ".pp", 0);
  if (row.contains("tg")) base.n_gen = positive_int(row["tg"], where + ".tg", 0);
  if (base.n_prompt == 0 && base.n_gen == 0) throw PlanError(where, "no test: give \"pp\" or \"tg\" above 0");
  if (row.contains("depth")) base.n_depth = positive_int(row["depth"], where + ".depth", 0);
  if (row.contains("target")) {
    if (!row["target"].is_number() || row["target"].get<double>() <= 0) {
      throw PlanError(where + ".target", "expected a ratio above 0");
    }
    base.target = row["target"].get<double>();
  }
  for (const std::string& model : models) {
    for (int t : threads) {
      BenchCase c = base;
      c.model = model;
      c.threads = t;
      cases.push_back(c);
    }
  }
}

}  // namespace

std::vector<std::string> BenchCase::tests() const {
  const std::string at_depth = n_depth > 0 ? " @ d" + std::to_string(n_depth) : "";
  std::vector<std::string> names;
  if (n_prompt > 0) names.push_back("pp" + std::to_string(n_prompt) + at_depth);
  if (n_gen > 0) names.push_back("tg" + std::to_string(n_gen) + at_depth);
  return names;
}

Plan parse_plan(const json& plan) {
  if (!plan.is_object()) throw PlanError("(plan)", "expected a JSON object");
  require_known_keys(plan, "", {"rounds", "seed", "membw_size", "keep_going", "reread", "wrap", "engine_args", "rows"});
  Plan p;
  if (plan.contains("rounds")) p.rounds = positive_int(plan["rounds"], "rounds", 2);
  if (plan.contains("seed")) {
    const json& seed = plan["seed"];
    if (!seed.is_number_integer() || (!seed.is_number_unsigned() && seed.get<int64_t>() < 0)) {
      throw PlanError("seed", "expected an integer of at least 0");
    }
    p.seed = seed.get<uint64_t>();
  }
  if (plan.contains("membw_size")) {
    if (!plan["membw_size"].is_string()) throw PlanError("membw_size", "expected a size such as \"1G\"");
    p.membw_size = plan["membw_size"].get<std::string>();
  }
  for (const auto& [name, field] : {std::pair{"keep_going", &p.keep_going}, std::pair{"reread", &p.reread}}) {
    if (!plan.contains(name)) continue;
    if (!plan[name].is_boolean()) throw PlanError(name, "expected true or false");
    *field = plan[name].get<bool>();
  }
  if (plan.contains("wrap")) p.wrap = string_list(plan["wrap"], "wrap");
  if (plan.contains("engine_args")) {
    const json& args = plan["engine_args"];
    if (!args.is_object()) throw PlanError("engine_args", "expected an object keyed by engine");
    require_known_keys(args, "engine_args", {"synapse", "llama.cpp"});
    if (args.contains("synapse")) p.synapse_args = string_list(args["synapse"], "engine_args.synapse");
    if (args.contains("llama.cpp")) p.peer_args = string_list(args["llama.cpp"], "engine_args.llama.cpp");
  }
  if (!plan.contains("rows")) throw PlanError("rows", "missing");
  if (!plan["rows"].is_array() || plan["rows"].empty()) throw PlanError("rows", "expected a non-empty list");
  for (size_t i = 0; i < plan["rows"].size(); ++i)
    parse_row(plan["rows"][i], "rows[" + std::to_string(i) + "]", p.cases);
  return p;
}

json read_plan_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw PlanError("(file)", "cannot read '" + path + "'");
  try {
    return json::parse(in);
  } catch (const json::parse_error& e) {
    throw PlanError("(file)", "'" + path + "' is not JSON: " + e.what());
  }
}

}  // namespace synapse::bench

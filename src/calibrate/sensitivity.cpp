#include "calibrate/sensitivity.h"

#include <unistd.h>

#include <cstdio>
#include <fstream>

#include "eval/kl_base_file.h"
#include "eval/kl_divergence.h"
#include "calibrate/session_evaluator.h"
#include "calibrate/precision_groups.h"
#include "synapse/error.h"

namespace synapse::calibrate {
namespace {

struct Measured {
  double kl = 0, ppl = 0;
};

Measured compare(Model model, const SensitivityRun& run, const eval::KlBaseReader& base, std::vector<uint32_t> drop = {}) {
  exec::SessionOptions options = run.session;
  options.drop_layers = std::move(drop);
  SessionEvaluator evaluator(std::move(model), std::move(options));
  const eval::KlResult result = eval::kl_divergence(evaluator, base, run.bos, {});
  return {result.sums.kld.mean(), result.sums.nll.ppl()};
}

Encoding encoding_named(const std::string& name) {
  const std::optional<Encoding> e = encoding_from_name(name);
  if (!e) throw Error(ErrorKind::InvalidValue, "sensitivity table: unknown type '" + name + "'");
  return *e;
}

}  // namespace

SensitivityTable measure_sensitivity(const Model& model, const std::string& model_name, const SensitivityRun& run) {
  SensitivityTable table;
  table.model = model_name;
  const std::string base_path = run.scratch_dir + "/synapse-sensitivity-" + std::to_string(::getpid()) + ".kld";
  {
    SessionEvaluator reference(model, run.session);
    const eval::KlBaseHeader header{static_cast<uint32_t>(run.layout.n_ctx), static_cast<uint32_t>(reference.vocab()),
                              static_cast<uint32_t>(run.layout.n_chunks)};
    eval::KlBaseWriter writer(base_path, header, run.tokens);
    const eval::NllSums nll = eval::perplexity(reference, run.tokens, run.layout, run.bos, {}, &writer);
    writer.commit();
    table.ppl = nll.ppl();
    table.tokens = nll.count;
  }
  const eval::KlBaseReader base(base_path);
  ::unlink(base_path.c_str());  // mapped: the reader keeps it
  std::fprintf(stderr, "sensitivity: %s: PPL %.4f over %lld tokens\n", model_name.c_str(), table.ppl,
               static_cast<long long>(table.tokens));

  const std::string scratch = run.scratch_dir + "/synapse-sensitivity-" + std::to_string(::getpid()) + ".bin";
  if (!run.types.empty()) {
    for (const PrecisionGroup& group : precision_groups(model.graph)) {
      GroupSensitivity g{group.name, group.tensors, stored_bytes(model, group.tensors), {}};
      for (Encoding type : run.types) {
        SensitivityCandidate c{type};
        const Measured m = compare(with_encoding(model, group.tensors, type, scratch, &c.bytes), run, base);
        c.kl = m.kl;
        c.ppl = m.ppl;
        std::fprintf(stderr, "sensitivity: %-14s %-5s %10llu bytes  KL %.6f  PPL %.4f\n", group.name.c_str(),
                     encoding_info(type).name, static_cast<unsigned long long>(c.bytes), c.kl, c.ppl);
        g.candidates.push_back(c);
      }
      table.groups.push_back(std::move(g));
    }
  }
  if (run.layers) {
    for (uint32_t layer = 0; layer < model.info.n_layer; ++layer) {
      const Measured m = compare(model, run, base, {layer});
      table.layers.push_back({layer, m.kl, m.ppl});
      std::fprintf(stderr, "sensitivity: layer %u dropped: KL %.6f  PPL %.4f\n", layer, m.kl, m.ppl);
    }
  }
  return table;
}

nlohmann::json to_json(const SensitivityTable& table) {
  nlohmann::json groups = nlohmann::json::array(), layers = nlohmann::json::array();
  for (const GroupSensitivity& g : table.groups) {
    nlohmann::json candidates = nlohmann::json::array();
    for (const SensitivityCandidate& c : g.candidates)
      candidates.push_back({{"type", encoding_info(c.type).name}, {"bytes", c.bytes}, {"kl", c.kl}, {"ppl", c.ppl}});
    groups.push_back(
        {{"name", g.name}, {"tensors", g.tensors}, {"stored_bytes", g.stored_bytes}, {"candidates", candidates}});
  }
  for (const LayerSensitivity& l : table.layers) layers.push_back({{"layer", l.layer}, {"kl", l.kl}, {"ppl", l.ppl}});
  return {{"model", table.model}, {"ppl", table.ppl}, {"tokens", table.tokens}, {"groups", groups}, {"layers", layers}};
}

SensitivityTable sensitivity_from_json(const nlohmann::json& json) {
  try {
    SensitivityTable table;
    table.model = json.at("model").get<std::string>();
    table.ppl = json.at("ppl").get<double>();
    table.tokens = json.at("tokens").get<int64_t>();
    for (const auto& g : json.at("groups")) {
      GroupSensitivity group{g.at("name").get<std::string>(), g.at("tensors").get<std::vector<std::string>>(),
                             g.at("stored_bytes").get<uint64_t>(), {}};
      for (const auto& c : g.at("candidates"))
        group.candidates.push_back({encoding_named(c.at("type").get<std::string>()), c.at("bytes").get<uint64_t>(),
                                    c.at("kl").get<double>(), c.at("ppl").get<double>()});
      table.groups.push_back(std::move(group));
    }
    for (const auto& l : json.at("layers"))
      table.layers.push_back({l.at("layer").get<uint32_t>(), l.at("kl").get<double>(), l.at("ppl").get<double>()});
    return table;
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::InvalidValue, std::string("not a sensitivity table: ") + e.what());
  }
}

SensitivityTable read_sensitivity_table(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw Error(ErrorKind::Io, "cannot read the sensitivity table", Error::kNoOffset, path);
  try {
    return sensitivity_from_json(nlohmann::json::parse(in));
  } catch (const nlohmann::json::exception& e) {
    throw Error(ErrorKind::InvalidValue, std::string("not a sensitivity table: ") + e.what(), Error::kNoOffset, path);
  } catch (const Error& e) {
    throw Error(e.kind(), e.message(), e.offset(), path);
  }
}

std::string sensitivity_markdown(const SensitivityTable& table) {
  char line[256];
  std::string out = "reference: " + table.model + ", PPL " + std::to_string(table.ppl) + " over " +
                    std::to_string(table.tokens) + " tokens\n";
  if (!table.groups.empty()) {
    out += "\n| group | type | bytes | mean KL | PPL |\n|---|---|--:|--:|--:|\n";
    for (const GroupSensitivity& g : table.groups)
      for (const SensitivityCandidate& c : g.candidates) {
        std::snprintf(line, sizeof line, "| %s | %s | %llu | %.6f | %.4f |\n", g.name.c_str(),
                      encoding_info(c.type).name, static_cast<unsigned long long>(c.bytes), c.kl, c.ppl);
        out += line;
      }
  }
  if (!table.layers.empty()) {
    out += "\n| dropped layer | mean KL | PPL | Δppl |\n|--:|--:|--:|--:|\n";
    for (const LayerSensitivity& l : table.layers) {
      std::snprintf(line, sizeof line, "| %u | %.6f | %.4f | %+.4f |\n", l.layer, l.kl, l.ppl, l.ppl - table.ppl);
      out += line;
    }
  }
  return out;
}

}  // namespace synapse::calibrate

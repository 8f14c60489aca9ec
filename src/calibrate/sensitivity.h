// Per-region precision sensitivity (SPEC §12): how far a model's
// predictions move (mean KL divergence from the unquantized model over a
// text, and its perplexity) when only one precision group is re-encoded to
// a candidate type, and when only one layer is dropped. The table drives
// `synapse quantize --target-bytes` (profile_choice.h).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "encoding/encoding.h"
#include "eval/perplexity.h"
#include "exec/session.h"
#include "model/model.h"

namespace synapse::calibrate {

struct SensitivityCandidate {
  Encoding type;       // as asked for; tensors whose rows do not fit get llama.cpp's fallback
  uint64_t bytes = 0;  // the group's tensors in that type
  double kl = 0;       // mean KL(reference || run) per scored token
  double ppl = 0;
};

struct GroupSensitivity {
  std::string name;  // precision_groups.h
  std::vector<std::string> tensors;
  uint64_t stored_bytes = 0;  // as the measured file holds them
  std::vector<SensitivityCandidate> candidates;
};

struct LayerSensitivity {
  uint32_t layer = 0;
  double kl = 0;
  double ppl = 0;
};

struct SensitivityTable {
  std::string model;  // the file measured
  double ppl = 0;     // its own perplexity over the text
  int64_t tokens = 0;  // scored tokens
  std::vector<GroupSensitivity> groups;
  std::vector<LayerSensitivity> layers;
};

nlohmann::json to_json(const SensitivityTable& table);
// Throws Error(InvalidValue) for a table that is not one to_json wrote.
SensitivityTable sensitivity_from_json(const nlohmann::json& json);
// The table `synapse sensitivity -o` wrote at `path`. Throws Error(Io) when
// it cannot be read, Error(InvalidValue) naming the path for anything else.
SensitivityTable read_sensitivity_table(const std::string& path);
// For people: one row per group and type, then one per dropped layer.
std::string sensitivity_markdown(const SensitivityTable& table);

struct SensitivityRun {
  std::span<const int32_t> tokens;  // the text's, BOS in front where the vocabulary adds it
  eval::ChunkLayout layout;
  std::optional<int32_t> bos;
  std::vector<Encoding> types;  // candidates per group; none: groups are not measured
  bool layers = false;          // also drop each layer in turn
  exec::SessionOptions session;  // how every run computes
  std::string scratch_dir;       // for the reference log-probabilities and re-encoded weights
};

// Runs the model as it is once, then once per group and type and once per
// layer, on stderr saying each as it ends. Throws what the runs throw.
SensitivityTable measure_sensitivity(const Model& model, const std::string& model_name, const SensitivityRun& run);

}  // namespace synapse::calibrate

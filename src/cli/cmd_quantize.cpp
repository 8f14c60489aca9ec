// synapse quantize: re-encode a GGUF model to another file type with
// llama.cpp's per-tensor rules, optionally weighted by an importance matrix
// and with per-tensor type overrides (the bytes llama-quantize writes), or
// with the precision profile that best fits a file size (--target-bytes).
#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "calibrate/precision_groups.h"
#include "calibrate/size_target.h"
#include "cli/command.h"
#include "kernels/cpu/core_count.h"
#include "memory/memory_budget.h"
#include "progress/progress.h"
#include "quantize/quant_types.h"
#include "quantize/quantize_model.h"
#include "quantize/tensor_type_override.h"
#include "synth/synth_names.h"

namespace synapse::cli {
namespace {

struct QuantizeArgs {
  quant::QuantizeOptions opts;
  std::string type;
  std::vector<std::string> tensor_types;
  std::string profile;
  std::string target_bytes;
  std::string sensitivity;
  std::string profile_out;
};

// Bytes, or binary K/M/G/T multiples (memory_budget.h's sizes, not its shares).
uint64_t parse_target_bytes(const std::string& text) {
  std::optional<memory::BudgetSpec> spec;
  try {
    spec = memory::parse_budget(text);
  } catch (const Error&) {
  }
  if (!spec || spec->percent > 0.0)
    throw Error(ErrorKind::Usage, "--target-bytes '" + text + "' is not a size (e.g. 700M, 2G, 1500000000)");
  return spec->bytes;
}

// The profile for --target-bytes, said on stderr group by group.
calibrate::SizeTarget choose_for_size(const QuantizeArgs& args) {
  const uint64_t target = parse_target_bytes(args.target_bytes);
  const calibrate::SizeTarget t =
      calibrate::fit_to_size(args.opts, calibrate::read_sensitivity_table(args.sensitivity), target);
  for (size_t g = 0; g < t.table.groups.size(); ++g) {
    const calibrate::GroupSensitivity& group = t.table.groups[g];
    const calibrate::SensitivityCandidate& c = group.candidates[t.choice.picks[g]];
    std::fprintf(stderr, "target: %-16s %-5s %12llu bytes, KL %.6f\n", group.name.c_str(), encoding_info(c.type).name,
                 static_cast<unsigned long long>(c.bytes), c.kl);
  }
  std::fprintf(stderr,
               "target: predicted KL %.6f (the sum over %zu groups); file %llu bytes of %llu (%llu outside the "
               "groups)\n",
               t.choice.kl, t.table.groups.size(), static_cast<unsigned long long>(t.file_bytes),
               static_cast<unsigned long long>(target), static_cast<unsigned long long>(t.fixed_bytes));
  return t;
}

void write_text(const std::string& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  if (!(out << text) || !out.flush()) throw Error(ErrorKind::Io, "cannot write the profile", Error::kNoOffset, path);
}

int run_quantize(QuantizeArgs args) {
  args.opts.type = quant::find_quant_type(args.type);
  if (args.opts.type == nullptr) synth::throw_unknown("type", args.type, quant::quant_type_names());
  args.opts.overrides = quant::overrides_from(args.tensor_types, args.profile);
  const auto names_region = [](const quant::TensorTypeOverride& o) { return o.pattern.starts_with("region:"); };
  if (std::any_of(args.opts.overrides.begin(), args.opts.overrides.end(), names_region))
    args.opts.overrides = calibrate::expand_region_overrides(args.opts.overrides, load_model(args.opts.input).graph);
  if (!args.opts.overrides.empty() && !quant::is_quantized(*args.opts.type))
    std::fprintf(stderr, "quantize: note: %s is not a quantized type; per-tensor types do not apply to it (as in "
                         "llama.cpp)\n", args.opts.type->name);
  std::optional<calibrate::SizeTarget> target;
  if (!args.target_bytes.empty()) {
    target = choose_for_size(args);
    args.opts.overrides = target->overrides;
  }
  // One line per tensor, as llama-quantize logs them (SYNAPSE_PROGRESS=0: none).
  const ProgressOutput progress = stderr_progress();
  const quant::QuantizeSummary s = quant::quantize_model(args.opts, [&](const quant::TensorDone& t) {
    if (!progress.sink) return;
    std::string how = t.weighted ? " (imatrix)" : "";
    if (t.override) {
      how.append(" (override ").append(t.override->pattern).append("=");
      how.append(encoding_info(t.override->type).name).append(")");
    }
    char line[1024];
    std::snprintf(line, sizeof line, "quantize: [%zu/%zu] %s: %s -> %s%s\n", t.index + 1, t.count, t.name.c_str(),
                  encoding_info(t.from).name, encoding_info(t.to).name, how.c_str());
    progress.sink(line);
  });
  if (target && !args.profile_out.empty()) write_text(args.profile_out, target->profile);
  std::printf("wrote %s: type %s (llama_ftype %u), %zu tensors (%zu re-encoded", args.opts.output.c_str(),
              args.opts.type->name, args.opts.type->file_type, s.tensors, s.converted);
  if (!args.opts.imatrix_file.empty()) std::printf(", %zu with the imatrix", s.weighted);
  std::printf("), %llu -> %llu tensor bytes", static_cast<unsigned long long>(s.input_bytes),
              static_cast<unsigned long long>(s.output_bytes));
  if (target)
    std::printf("; file %llu bytes, predicted KL %.6f",
                static_cast<unsigned long long>(std::filesystem::file_size(args.opts.output)), target->choice.kl);
  std::printf("\n");
  return kExitOk;
}

std::function<int()> setup_quantize(CLI::App& app) {
  auto args = std::make_shared<QuantizeArgs>();
  app.add_option("input", args->opts.input, "GGUF file to read (F32, F16, BF16, or quantized with "
                                            "--allow-requantize)")
      ->required();
  app.add_option("output", args->opts.output, "GGUF file to write")->required();
  app.add_option("type", args->type,
                 "file type: " + synth::join_names(quant::quant_type_names()) +
                     " (any case; q4_k = Q4_K_S, q5_k = Q5_K_S)")
      ->required();
  app.add_option("-t,--threads", args->opts.threads, "threads encoding rows (default: one per core)")
      ->check(CLI::Range(0, cpu::kMaxThreads));
  app.add_flag("--pure", args->opts.pure,
               "no type mix: every quantizable weight gets TYPE's own encoding (llama-quantize --pure)");
  app.add_option("--imatrix", args->opts.imatrix_file,
                 "importance matrix (llama.cpp's imatrix tool's GGUF or legacy .dat file): weighs the rounding of "
                 "each tensor it has an entry for (llama-quantize --imatrix)");
  app.add_flag("--allow-requantize", args->opts.allow_requantize,
               "re-encode tensors already stored in a quantized encoding (llama-quantize --allow-requantize)");
  CLI::Option* tensor_type =
      app.add_option("--tensor-type", args->tensor_types,
                     "PATTERN=TYPE, repeatable: weights whose name PATTERN (a regular expression) is found in get "
                     "TYPE (a ggml type: q8_0, q4_K, f16, ...) instead of the mix's (llama-quantize --tensor-type)");
  CLI::Option* profile = app.add_option(
      "--profile", args->profile,
      "precision profile: a file of PATTERN=TYPE items (blanks or newlines between them, # comments), read after "
      "the --tensor-type flags (llama-quantize --tensor-type-file)");
  CLI::Option* target = app.add_option(
      "--target-bytes", args->target_bytes,
      "SIZE (bytes, or K/M/G/T binary multiples: 700M): the output file at most SIZE bytes, with one type per "
      "group of the --sensitivity table chosen for the least predicted KL divergence");
  CLI::Option* sensitivity =
      app.add_option("--sensitivity", args->sensitivity, "table from `synapse sensitivity -o` (for --target-bytes)");
  CLI::Option* profile_out = app.add_option("--profile-out", args->profile_out,
                                            "write the profile --target-bytes chose (usable as --profile)");
  target->needs(sensitivity)->excludes(tensor_type)->excludes(profile);
  sensitivity->needs(target);
  profile_out->needs(target);
  app.footer(
      "\nTensors get llama.cpp's type mix for the file type (e.g. Q6_K output, more bits for attn_v and\n"
      "ffn_down in some layers for q4_k_m) and its fallbacks for rows that are not whole blocks; norms,\n"
      "1-D tensors and routers keep their stored type. With --imatrix, q4_0, q4_1, q5_0, q5_1 and the\n"
      "K-quants fit each block's scales weighted by the importance of its columns (q8_0, f16, bf16 ignore\n"
      "it), q4_0 / q5_0 give ffn_down q4_1 / q5_1 in the first eighth of the layers, and the file records\n"
      "quantize.imatrix.* keys. The output is byte for byte llama-quantize's.\n"
      "\nPer-tensor types (--tensor-type, --profile) work as llama-quantize's: patterns are lower-cased and\n"
      "searched for in each quantizable weight's name, the first match wins, its type replaces the mix's\n"
      "(also with --pure) and still falls back where rows are not whole blocks; an overridden tensor does\n"
      "not count in the mix's layer counters; f16, bf16 and f32 files ignore them.\n"
      "\n--target-bytes SIZE --sensitivity TABLE.json picks one type per group of the table for the least\n"
      "summed KL with the whole file within SIZE (the rest as TYPE and --pure give it); it cannot be\n"
      "combined with --tensor-type or --profile.\n"
      "\nExamples:\n"
      "  synapse quantize model-f16.gguf model-q4_k_m.gguf q4_k_m\n"
      "  synapse quantize model-f32.gguf model-q8_0.gguf Q8_0 -t 8\n"
      "  synapse quantize model-f16.gguf model-q4_k.gguf q4_k --pure   # Q4_K everywhere it fits\n"
      "  synapse quantize model-f16.gguf model-q4_k_m.gguf q4_k_m --imatrix imatrix.gguf\n"
      "  synapse quantize model-f16.gguf model-mix.gguf q4_k_m --tensor-type attn_v=q8_0 \\\n"
      "      --tensor-type 'blk\\.0\\.=q6_K'\n"
      "  synapse quantize model-f16.gguf model-700m.gguf q4_k_m --target-bytes 700M --sensitivity table.json\n");
  return [args] { return run_quantize(*args); };
}

Register quantize_reg{{"quantize", "re-encode a GGUF model to another type with llama.cpp's per-tensor rules", setup_quantize}};

}  // namespace
}  // namespace synapse::cli

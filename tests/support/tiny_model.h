// A tiny synthetic model written into a test's temporary folder.
#pragma once

#include <string>

#include "support/temp_dir.h"
#include "synth/synth.h"

namespace synapse::test {

// Writes `synapse synth --arch ARCH --preset tiny --type TYPE` to DIR/NAME
// and returns its path.
inline std::string write_tiny_model(const TempDir& dir, const std::string& arch = "llama",
                                    const std::string& type = "q8_0", const std::string& name = "tiny.gguf") {
  SynthOptions options;
  options.arch = arch;
  options.preset = "tiny";
  options.type = type;
  const std::string path = dir.file(name);
  synth_model(options, path);
  return path;
}

// The tiny `arch` model with n_layer layers in f32, from `seed`, at
// DIR/ARCH-N.gguf; returns its path.
inline std::string write_tiny_layers(const TempDir& dir, const std::string& arch, uint32_t n_layer, uint64_t seed) {
  SynthOptions options;
  options.arch = arch;
  options.n_layer = n_layer;
  options.seed = seed;
  const std::string path = dir.file(arch + "-" + std::to_string(n_layer) + ".gguf");
  synth_model(options, path);
  return path;
}

}  // namespace synapse::test

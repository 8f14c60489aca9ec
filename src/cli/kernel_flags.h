// Flags that choose how a session computes: -t/--threads (as llama.cpp)
// and --cpu-target (auto, scalar, avx2, avx512, avx512vnni, or reference
// for the scalar reference kernel, the oracle). llama.cpp's -ngl/
// --n-gpu-layers is taken and ignored with a note, so that its command
// lines run as they are.
#pragma once

#include <string>

#include "exec/session.h"

namespace CLI {
class App;
}

namespace synapse::cli {

struct KernelFlags {
  int threads = 0;  // 0: cpu::default_thread_count(), one per physical core available
  std::string target = "auto";
};

void add_kernel_flags(CLI::App& app, KernelFlags& flags);

// The thread count after defaults.
int thread_count(const KernelFlags& flags);

// Session options binding the chosen kernels. Throws Error(Usage) for a
// target this CPU cannot run.
exec::SessionOptions session_options(const KernelFlags& flags);

}  // namespace synapse::cli

#include "cli/kernel_flags.h"

#include <CLI/CLI.hpp>

#include <cstdio>

#include "cli/command.h"
#include "exec/cpu_region_kernel.h"
#include "kernels/cpu/core_count.h"
#include "synapse/error.h"

namespace synapse::cli {

namespace {
const RegisterDashAlias gpu_layers_alias{"-ngl", "--n-gpu-layers"};
}  // namespace

void add_kernel_flags(CLI::App& app, KernelFlags& flags) {
  app.add_option("-t,--threads", flags.threads, "threads (default: one per physical core available to the process)")
      ->check(CLI::Range(1, cpu::kMaxThreads));
  app.add_option_function<std::string>(
         "--n-gpu-layers",
         [name = app.get_name()](const std::string&) {
           std::fprintf(stderr, "synapse %s: --n-gpu-layers ignored: Synapse computes on the CPU\n", name.c_str());
         },
         "-ngl: taken for llama.cpp's command lines and ignored (Synapse computes on the CPU)")
      ->type_name("N");
  app.add_option("--cpu-target", flags.target,
                 "kernels: auto, scalar, avx2, avx512, avx512vnni, or reference (the scalar oracle)");
}

int thread_count(const KernelFlags& flags) {
  return flags.threads > 0 ? flags.threads : cpu::default_thread_count();
}

exec::SessionOptions session_options(const KernelFlags& flags) {
  exec::SessionOptions options;
  if (flags.target == "reference") return options;
  exec::CpuKernelOptions cpu{thread_count(flags), cpu::best_cpu_target()};
  if (flags.target != "auto") {
    const std::optional<cpu::CpuTarget> target = cpu::cpu_target_from_name(flags.target);
    if (!target) throw Error(ErrorKind::Usage, "unknown --cpu-target '" + flags.target + "'");
    if (!cpu::cpu_supports(*target))
      throw Error(ErrorKind::Usage, "this CPU cannot run --cpu-target " + flags.target);
    cpu.target = *target;
  }
  options.kernels = exec::cpu_kernel_registry(cpu);
  return options;
}

}  // namespace synapse::cli

// The default thread count of the CPU kernels: one thread per physical core
// this process may use. SMT siblings share a core's execution units and
// its memory bandwidth, so a second thread on a core slows the products
// down; CPUs outside the affinity mask (taskset, a cgroup cpuset) cannot be
// used, and a cgroup CPU quota (cpu.max, or cpu.cfs_quota_us in cgroup v1)
// caps how many can run at once. The memory a process may use is read the
// same way (its cgroup's limit). The system's files are read through a
// FileReader so the logic is tested on fake ones.
#pragma once

#include <functional>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace synapse::cpu {

// The text of a file, or nothing when it cannot be read.
using FileReader = std::function<std::optional<std::string>(const std::string& path)>;

// CPU numbers of a sysfs CPU list ("0-3,8,10-11"); nothing when malformed.
std::optional<std::vector<int>> parse_cpu_list(std::string_view list);

// CPUs' worth of time per period a cgroup v2 cpu.max line allows: "max
// 100000" is no limit (nothing), "150000 100000" is 1.5.
std::optional<double> parse_cpu_max(std::string_view line);

// The same from cgroup v1's cpu.cfs_quota_us and cpu.cfs_period_us: a quota
// of -1 is no limit.
std::optional<double> parse_cfs_quota(std::string_view quota, std::string_view period);

// Physical cores among `cpus`: CPUs that list each other in
// /sys/devices/system/cpu/cpuN/topology/thread_siblings_list count once
// (a CPU whose list cannot be read counts as a core of its own).
int count_physical_cores(std::span<const int> cpus, const FileReader& read);

// The tightest CPU quota of the process's cgroup (from /proc/self/cgroup)
// and its ancestors, v2 or v1; nothing when unlimited or unknown.
std::optional<double> cgroup_cpu_quota(const FileReader& read);

// The tightest memory limit in bytes of the process's cgroup and its
// ancestors: v2 memory.max ("max" is none) or v1 memory.limit_in_bytes (v1
// writes a huge number for none, which callers compare with the machine's
// memory); nothing when unlimited or unknown.
std::optional<uint64_t> cgroup_memory_limit(const FileReader& read);

// Physical cores among `allowed`, capped by the cgroup quota rounded down
// (a thread throttled mid-op stalls every thread of a fork/join step), at
// least 1.
int available_cores(std::span<const int> allowed, const FileReader& read);

// available_cores for this process: its affinity mask and the real files.
int default_thread_count();

// The most threads a command line may ask for (-t): more only thrash, and
// tens of thousands exhaust the system's threads.
inline constexpr int kMaxThreads = 1024;

// The memory this process may use: the machine's physical memory, or its
// cgroup's limit where that is lower.
uint64_t process_memory_limit();

}  // namespace synapse::cpu

#include "kernels/cpu/core_count.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <fstream>
#include <initializer_list>
#include <set>
#include <sstream>

namespace synapse::cpu {
namespace {

std::string_view trim(std::string_view s) {
  const auto blank = [](char c) { return c == ' ' || c == '\n' || c == '\t' || c == '\r'; };
  while (!s.empty() && blank(s.front())) s.remove_prefix(1);
  while (!s.empty() && blank(s.back())) s.remove_suffix(1);
  return s;
}

// A whole string as an integer; nothing when it is not one.
std::optional<long long> parse_int(std::string_view s) {
  s = trim(s);
  long long value = 0;
  const auto [end, error] = std::from_chars(s.data(), s.data() + s.size(), value);
  if (error != std::errc() || end != s.data() + s.size() || s.empty()) return std::nullopt;
  return value;
}

std::optional<double> quota_of(long long quota, long long period) {
  if (quota <= 0 || period <= 0) return std::nullopt;
  return static_cast<double>(quota) / static_cast<double>(period);
}

std::optional<std::string> read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Calls visit(dir) for root + path and each ancestor up to root.
template <class Visit>
void walk_up(const std::string& root, std::string path, const Visit& visit) {
  for (;;) {
    visit(path == "/" ? root : root + path);
    if (path.empty() || path == "/") return;
    const size_t slash = path.rfind('/');
    path = slash == 0 || slash == std::string::npos ? "/" : path.substr(0, slash);
  }
}

void keep_tightest(std::optional<double>& tightest, std::optional<double> quota) {
  if (quota && (!tightest || *quota < *tightest)) tightest = quota;
}

}  // namespace

std::optional<std::vector<int>> parse_cpu_list(std::string_view list) {
  std::vector<int> cpus;
  list = trim(list);
  while (!list.empty()) {
    const size_t comma = list.find(',');
    const std::string_view item = list.substr(0, comma);
    list = comma == std::string_view::npos ? std::string_view() : list.substr(comma + 1);
    const size_t dash = item.find('-');
    const auto first = parse_int(item.substr(0, dash));
    const auto last = dash == std::string_view::npos ? first : parse_int(item.substr(dash + 1));
    if (!first || !last || *first < 0 || *last < *first) return std::nullopt;
    for (long long cpu = *first; cpu <= *last; ++cpu) cpus.push_back(static_cast<int>(cpu));
  }
  return cpus;
}

std::optional<double> parse_cpu_max(std::string_view line) {
  line = trim(line);
  const size_t space = line.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const auto quota = parse_int(line.substr(0, space));  // "max" is no number: no limit
  const auto period = parse_int(line.substr(space + 1));
  return quota && period ? quota_of(*quota, *period) : std::nullopt;
}

std::optional<double> parse_cfs_quota(std::string_view quota, std::string_view period) {
  const auto q = parse_int(quota), p = parse_int(period);
  return q && p ? quota_of(*q, *p) : std::nullopt;
}

int count_physical_cores(std::span<const int> cpus, const FileReader& read) {
  std::set<int> allowed(cpus.begin(), cpus.end());
  std::set<int> counted;  // CPUs whose core has been counted
  int cores = 0;
  for (int cpu : allowed) {
    if (counted.count(cpu)) continue;
    ++cores;
    counted.insert(cpu);
    const auto text =
        read("/sys/devices/system/cpu/cpu" + std::to_string(cpu) + "/topology/thread_siblings_list");
    const auto siblings = text ? parse_cpu_list(*text) : std::nullopt;
    if (siblings) counted.insert(siblings->begin(), siblings->end());
  }
  return cores;
}

// Calls visit_v2(dir) for the process's cgroup v2 directory and its
// ancestors, and visit_v1(dir) for those of its v1 hierarchy with
// `controller` under each of `v1_roots` (from /proc/self/cgroup).
template <class VisitV2, class VisitV1>
void visit_cgroups(const FileReader& read, const char* controller, std::initializer_list<const char*> v1_roots,
                   const VisitV2& visit_v2, const VisitV1& visit_v1) {
  const auto cgroups = read("/proc/self/cgroup");
  if (!cgroups) return;
  const std::string wanted = std::string(",") + controller + ",";
  std::istringstream lines(*cgroups);
  for (std::string line; std::getline(lines, line);) {
    // "id:controllers:path"; cgroup v2 is "0::path".
    const size_t first = line.find(':'), second = line.find(':', first + 1);
    if (first == std::string::npos || second == std::string::npos) continue;
    std::string controllers(1, ',');  // ",cpu,cpuacct,": each controller between commas
    controllers.append(line, first + 1, second - first - 1).push_back(',');
    const std::string path = line.substr(second + 1);
    if (controllers == ",,") {
      walk_up("/sys/fs/cgroup", path, visit_v2);
    } else if (controllers.find(wanted) != std::string::npos) {
      for (const char* root : v1_roots) walk_up(root, path, visit_v1);
    }
  }
}

std::optional<double> cgroup_cpu_quota(const FileReader& read) {
  std::optional<double> tightest;
  visit_cgroups(
      read, "cpu", {"/sys/fs/cgroup/cpu", "/sys/fs/cgroup/cpu,cpuacct"},
      [&](const std::string& dir) {
        if (const auto max = read(dir + "/cpu.max")) keep_tightest(tightest, parse_cpu_max(*max));
      },
      [&](const std::string& dir) {
        const auto quota = read(dir + "/cpu.cfs_quota_us"), period = read(dir + "/cpu.cfs_period_us");
        if (quota && period) keep_tightest(tightest, parse_cfs_quota(*quota, *period));
      });
  return tightest;
}

std::optional<uint64_t> cgroup_memory_limit(const FileReader& read) {
  std::optional<uint64_t> tightest;
  const auto keep = [&](const std::optional<std::string>& text) {
    const auto bytes = text ? parse_int(*text) : std::nullopt;  // v2's "max" is no number: no limit
    if (bytes && *bytes > 0 && (!tightest || static_cast<uint64_t>(*bytes) < *tightest))
      tightest = static_cast<uint64_t>(*bytes);
  };
  visit_cgroups(
      read, "memory", {"/sys/fs/cgroup/memory"}, [&](const std::string& dir) { keep(read(dir + "/memory.max")); },
      [&](const std::string& dir) { keep(read(dir + "/memory.limit_in_bytes")); });
  return tightest;
}

int available_cores(std::span<const int> allowed, const FileReader& read) {
  int cores = count_physical_cores(allowed, read);
  if (const auto quota = cgroup_cpu_quota(read))
    cores = std::min(cores, static_cast<int>(std::floor(*quota)));
  return std::max(1, cores);
}

int default_thread_count() {
  cpu_set_t mask;
  if (sched_getaffinity(0, sizeof(mask), &mask) != 0) return 1;
  std::vector<int> allowed;
  for (int cpu = 0; cpu < CPU_SETSIZE; ++cpu)
    if (CPU_ISSET(cpu, &mask)) allowed.push_back(cpu);
  return available_cores(allowed, read_file);
}

uint64_t process_memory_limit() {
  const auto pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
  const uint64_t physical = pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
  const std::optional<uint64_t> limit = cgroup_memory_limit(read_file);
  return limit && (physical == 0 || *limit < physical) ? *limit : physical;
}

}  // namespace synapse::cpu

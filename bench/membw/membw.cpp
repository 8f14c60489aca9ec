// synapse-membw [-t T] [-s SIZE] [-r R] [-o text|json]: sustained read
// bandwidth, the ceiling for token generation (which reads every weight once
// per token). T threads each sum their own slice of a buffer much larger than
// the last-level cache; a repetition is timed from a common start to the last
// thread's finish. Prints the median over R repetitions, whether transparent
// huge pages are enabled, and the share of the buffer in 2 MiB pages.
//
// The buffer is advised into 2 MiB pages, the pages decode reads its
// weights in (MappedFile). Before, with THP on "madvise", it sat in 4 KiB
// pages and read a quarter slower than the weights could be: on a Zen 4
// EPYC core 21-26 GB/s where the same loop read 27-32 in 2 MiB pages, so
// decode read "more than membw".
#include <algorithm>
#include <barrier>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "memory/huge_page_buffer.h"

namespace {

// Eight independent vector sums, eight vectors a loop: few instructions
// per byte, so the out-of-order window holds many lines' loads at once.
// One core's bandwidth is bounded by the loads it keeps in flight: a loop
// of one 32-byte add per iteration read 27-30 GB/s from a Zen 5 core
// where this loop reads 35-37. The tail (under eight vectors) is summed word by
// word. memcpy loads: the buffer holds words, not vectors.
#define SYNAPSE_SUM_BODY(kVectorBytes)                                           \
  typedef uint64_t Vector __attribute__((vector_size(kVectorBytes)));            \
  constexpr size_t kWords = kVectorBytes / sizeof(uint64_t);                     \
  Vector acc[8] = {};                                                            \
  size_t i = 0;                                                                  \
  for (; i + 8 * kWords <= n; i += 8 * kWords) {                                 \
    for (int v = 0; v < 8; ++v) {                                                \
      Vector x;                                                                  \
      std::memcpy(&x, p + i + v * kWords, sizeof(x));                            \
      acc[v] += x;                                                               \
    }                                                                            \
  }                                                                              \
  uint64_t total = 0;                                                            \
  for (int v = 0; v < 8; ++v)                                                    \
    for (size_t w = 0; w < kWords; ++w) total += acc[v][w];                      \
  for (; i < n; ++i) total += p[i];                                              \
  return total;

__attribute__((target("avx512f"))) uint64_t sum_words_avx512(const uint64_t* p, size_t n) { SYNAPSE_SUM_BODY(64) }
__attribute__((target("avx2"))) uint64_t sum_words_avx2(const uint64_t* p, size_t n) { SYNAPSE_SUM_BODY(32) }
uint64_t sum_words_baseline(const uint64_t* p, size_t n) { SYNAPSE_SUM_BODY(16) }
#undef SYNAPSE_SUM_BODY

uint64_t sum_words(const uint64_t* p, size_t n) {
  static const bool avx512 = __builtin_cpu_supports("avx512f");
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx512 ? sum_words_avx512(p, n) : avx2 ? sum_words_avx2(p, n) : sum_words_baseline(p, n);
}

// "1G", "512M", "64K", "1GiB", or bytes.
size_t parse_size(const std::string& text) {
  size_t used = 0;
  const unsigned long long n = std::stoull(text, &used);
  std::string unit = text.substr(used);
  if (unit.ends_with("iB") || unit.ends_with("ib")) unit.resize(unit.size() - 2);
  if (unit.ends_with("B") || unit.ends_with("b")) unit.pop_back();
  if (unit.empty()) return n;
  switch (unit[0] | 0x20) {
    case 'k': if (unit.size() == 1) return n << 10; break;
    case 'm': if (unit.size() == 1) return n << 20; break;
    case 'g': if (unit.size() == 1) return n << 30; break;
  }
  throw CLI::ValidationError("-s", "size '" + text + "' is not bytes or N[K|M|G]");
}

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  const size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

struct Args {
  unsigned threads = 1;
  std::string size_text = "1G";
  unsigned reps = 5;
  std::string output = "text";
};

// GB/s (1e9 bytes) of each repetition, timed by thread 0 between two
// barriers: from all threads starting to the last one finishing.
std::vector<double> measure(uint64_t* buffer, size_t words, const Args& args) {
  const size_t per_thread = words / args.threads / 4 * 4;
  std::vector<uint64_t> sums(args.threads);
  std::vector<double> seconds(args.reps + 1);  // [0]: the untimed warm-up
  std::barrier sync(static_cast<std::ptrdiff_t>(args.threads));
  auto read = [&](unsigned t) {
    uint64_t* slice = buffer + t * per_thread;
    // Each thread writes its own slice first, so pages are resident (and,
    // on NUMA machines, local to the thread that reads them).
    for (size_t i = 0; i < per_thread; ++i) slice[i] = i ^ t;
    for (unsigned r = 0; r <= args.reps; ++r) {
      sync.arrive_and_wait();
      const auto begin = std::chrono::steady_clock::now();
      sums[t] += sum_words(slice, per_thread);
      sync.arrive_and_wait();
      if (t == 0) seconds[r] = std::chrono::duration<double>(std::chrono::steady_clock::now() - begin).count();
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 0; t < args.threads; ++t) pool.emplace_back(read, t);
  for (auto& thread : pool) thread.join();

  const double bytes = static_cast<double>(per_thread) * args.threads * sizeof(uint64_t);
  std::vector<double> gbps;
  for (unsigned r = 1; r <= args.reps; ++r) gbps.push_back(bytes / seconds[r] / 1e9);
  // Using the sums keeps the reads observable, so they are not optimized away.
  uint64_t total = 0;
  for (uint64_t s : sums) total += s;
  if (total == 42) std::fprintf(stderr, "(checksum %llu)\n", static_cast<unsigned long long>(total));
  return gbps;
}

}  // namespace

int main(int argc, char** argv) {
  Args args;
  CLI::App app{"synapse-membw: sustained memory read bandwidth"};
  app.add_option("-t,--threads", args.threads, "threads")->check(CLI::Range(1, 1024))->capture_default_str();
  app.add_option("-s,--size", args.size_text, "buffer size: bytes or N[K|M|G]")->capture_default_str();
  app.add_option("-r,--reps", args.reps, "timed repetitions")->check(CLI::Range(1, 1000))->capture_default_str();
  app.add_option("-o,--output", args.output, "output format")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
  size_t size = 0;
  try {
    app.parse(argc, argv);
    size = parse_size(args.size_text);
    if (size / sizeof(uint64_t) / args.threads < 4) throw CLI::ValidationError("-s", "buffer too small");
  } catch (const CLI::ParseError& e) {
    return app.exit(e) == 0 ? 0 : 2;  // help: 0; bad flags: 2, as synapse
  } catch (const std::exception&) {
    std::fprintf(stderr, "synapse-membw: -s: '%s' is not a size\n", args.size_text.c_str());
    return 2;
  }

  std::optional<synapse::memory::HugePageBuffer> buffer;
  try {
    buffer.emplace(size);
  } catch (const std::exception&) {
    std::fprintf(stderr, "synapse-membw: cannot allocate %zu bytes\n", size);
    return 1;
  }
  const std::vector<double> gbps = measure(reinterpret_cast<uint64_t*>(buffer->data()), size / sizeof(uint64_t), args);
  const double huge_share = buffer->huge_share();
  buffer.reset();

  const std::string thp = synapse::memory::transparent_huge_page_mode();
  if (args.output == "json") {
    const nlohmann::json j = {{"threads", args.threads}, {"size_bytes", size},  {"reps", args.reps},
                              {"samples_gbps", gbps},    {"median_gbps", median(gbps)},
                              {"thp", thp},              {"huge_page_share", huge_share}};
    std::printf("%s\n", j.dump().c_str());
  } else {
    std::printf("read bandwidth: %.2f GB/s median (min %.2f, max %.2f), %u thread%s, %zu MiB, %u reps\n",
                median(gbps), *std::min_element(gbps.begin(), gbps.end()),
                *std::max_element(gbps.begin(), gbps.end()), args.threads, args.threads == 1 ? "" : "s",
                size >> 20, args.reps);
    std::printf("transparent huge pages: %s; buffer in 2 MiB pages: ", thp.c_str());
    if (huge_share < 0) {
      std::printf("unknown\n");
    } else {
      std::printf("%.0f%%\n", 100 * huge_share);
    }
  }
  return 0;
}

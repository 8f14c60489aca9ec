#include "peer/teacher_forced_logits.h"

#include <gtest/gtest.h>

#include <stdexcept>

#include "support/command_runner.h"
#include "support/test_files.h"

namespace synapse::test {

const Tolerance& tolerance_of(const std::string& type) {
  for (const Tolerance& t : kTolerances)
    if (type == t.type) return t;
  throw std::invalid_argument("no tolerance stated for " + type);
}

std::vector<std::string> token_ids(size_t count, uint32_t vocab, uint64_t seed) {
  std::vector<std::string> ids;
  uint64_t state = seed;
  for (size_t i = 0; i < count; ++i) {
    uint64_t z = (state += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    ids.push_back(std::to_string((z ^ (z >> 31)) % vocab));
  }
  return ids;
}

std::string joined(const std::vector<std::string>& ids) {
  std::string s;
  for (const auto& id : ids) s += (s.empty() ? "" : " ") + id;
  return s;
}

std::vector<float> our_logits(const std::string& model, const std::vector<std::string>& ids, size_t ubatch,
                              const std::string& dump, const OurRun& run) {
  std::vector<std::string> args = {"run", "-m", model, "--tokens", joined(ids), "-n", "0", "--ignore-eos",
                                   "--ubatch-size", std::to_string(ubatch), "--dump-logits", dump,
                                   "--cache-type-k", "f32", "--cache-type-v", "f32"};
  if (run.ctx != 0) args.insert(args.end(), {"-c", std::to_string(run.ctx)});
  if (run.threads != 0) args.insert(args.end(), {"-t", std::to_string(run.threads)});
  const CommandResult r = run_synapse(args, /*with_stderr=*/true);  // its timings only matter when it fails
  EXPECT_EQ(r.exit_code, 0) << "synapse run failed: " << r.out;
  return read_floats(dump);
}

std::vector<float> peer_logits(const std::string& model, const std::vector<std::string>& ids, size_t batch,
                               const std::string& dump) {
  std::vector<std::string> args = {"logits", model, "--fa", "off", "--kv", "f32", "-t", "1",
                                   "-b", std::to_string(batch), "--dump", dump};
  args.insert(args.end(), ids.begin(), ids.end());
  const CommandResult r = run_peer(args);
  EXPECT_EQ(r.exit_code, 0) << "synapse-peer logits failed";
  return read_floats(dump);
}

}  // namespace synapse::test

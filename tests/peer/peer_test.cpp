// synapse-peer, the llama.cpp harness: its error handling always, and with
// the peer installed its struct layouts and its results on stories260K
// against the stored llama.cpp references.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include <nlohmann/json.hpp>

#include "support/command_runner.h"

namespace synapse::test {
namespace {

// A stored greedy run: "prompt_ids: ..." then "next_ids: ..." lines.
struct GreedyReference {
  std::vector<int> prompt;
  std::vector<int> next;
};

std::vector<int> parse_ids(const std::string& text) {
  std::istringstream in(text);
  return {std::istream_iterator<int>(in), std::istream_iterator<int>()};
}

GreedyReference read_greedy_reference(const std::filesystem::path& path) {
  GreedyReference ref;
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    const auto colon = line.find(':');
    if (colon == std::string::npos) continue;
    const std::string key = line.substr(0, colon);
    if (key == "prompt_ids") ref.prompt = parse_ids(line.substr(colon + 1));
    if (key == "next_ids") ref.next = parse_ids(line.substr(colon + 1));
  }
  return ref;
}

std::vector<std::string> as_args(const std::vector<int>& ids) {
  std::vector<std::string> args;
  for (int id : ids) args.push_back(std::to_string(id));
  return args;
}

std::string read_bytes(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

TEST(PeerHarness, MissingLibrariesExitWith3) {
  const CommandResult r = run_peer({"--lib", "/nonexistent/peer/lib", "selftest"});
  EXPECT_EQ(r.exit_code, kPeerExitNoLibrary);
  EXPECT_EQ(r.out, "");
}

TEST(PeerHarness, BadFlagsExitWith2) {
  EXPECT_EQ(run_peer({"logits"}).exit_code, 2);
  EXPECT_EQ(run_peer({"greedy", "model.gguf", "1"}).exit_code, 2);  // -n missing
  EXPECT_EQ(run_peer({"bench", "model.gguf", "-t", "0"}).exit_code, 2);
  EXPECT_EQ(run_peer({"no-such-command"}).exit_code, 2);
}

TEST(PeerHarness, SelftestPasses) {
  SYNAPSE_SKIP_UNLESS_PEER();
  const CommandResult r = run_peer({"selftest"});
  EXPECT_EQ(r.exit_code, 0) << r.out;
  EXPECT_EQ(r.out.find("FAILED"), std::string::npos) << r.out;
  EXPECT_TRUE(r.out.ends_with("\nok\n")) << r.out;
}

TEST(PeerHarness, BadModelExitsWith1) {
  SYNAPSE_SKIP_UNLESS_PEER();
  EXPECT_EQ(run_peer({"logits", "/nonexistent.gguf", "1"}).exit_code, 1);
  EXPECT_EQ(run_peer({"logits", SYNAPSE_SOURCE_DIR "/CMakeLists.txt", "1"}).exit_code, 1);
}

class PeerHarnessStories260K : public ::testing::Test {
 protected:
  void SetUp() override {
    SYNAPSE_SKIP_UNLESS_PEER();
    for (const auto& path : {model_, reference_ids_}) {
      if (!std::filesystem::exists(path)) GTEST_SKIP() << "test data absent: " << path;
    }
    reference_ = read_greedy_reference(reference_ids_);
    ASSERT_EQ(reference_.prompt, std::vector<int>{1});
    ASSERT_GE(reference_.next.size(), 32u);
  }

  std::filesystem::path model_ = shared_data("gguf/stories260K-f32.gguf");
  std::filesystem::path reference_ids_ =
      shared_data("reference/llamacpp/s260-f32.greedy_noprompt.ids");
  GreedyReference reference_;
};

TEST_F(PeerHarnessStories260K, GreedyFromBosMatchesReference) {
  const CommandResult r = run_peer({"greedy", model_.string(), "-n", "32", "1"});
  ASSERT_EQ(r.exit_code, 0);
  const std::vector<int> expected(reference_.next.begin(), reference_.next.begin() + 32);
  EXPECT_EQ(parse_ids(r.out), expected);
}

TEST_F(PeerHarnessStories260K, LogitsArgmaxMatchesReference) {
  // BOS then the reference continuation: position i must predict next[i].
  std::vector<int> tokens = {1};
  tokens.insert(tokens.end(), reference_.next.begin(), reference_.next.begin() + 31);
  std::vector<std::string> args = {"logits", model_.string()};
  for (const auto& id : as_args(tokens)) args.push_back(id);
  const CommandResult r = run_peer(args);
  ASSERT_EQ(r.exit_code, 0);

  std::istringstream lines(r.out);
  std::string line;
  size_t pos = 0;
  while (std::getline(lines, line)) {
    const auto row = nlohmann::json::parse(line);
    ASSERT_EQ(row.at("pos").get<size_t>(), pos);
    EXPECT_EQ(row.at("argmax").get<int>(), reference_.next[pos]) << "at position " << pos;
    ASSERT_EQ(row.at("top").size(), 5u);
    EXPECT_EQ(row.at("top")[0][0].get<int>(), row.at("argmax").get<int>());
    ++pos;
  }
  EXPECT_EQ(pos, tokens.size());
}

// Batches of one token are decode steps: each row still predicts the
// reference continuation, and is the one-batch row up to summation order
// (flash attention off and an F32 KV cache; with llama.cpp's defaults the
// rows differ by up to 5e-3).
// A batch size that does not divide the tokens covers a short last batch.
TEST_F(PeerHarnessStories260K, LogitsInSmallerBatchesAreTheOneBatchRows) {
  std::vector<int> tokens = {1};
  tokens.insert(tokens.end(), reference_.next.begin(), reference_.next.begin() + 31);
  const auto logits_rows = [&](const std::string& batch) {
    const auto dump = std::filesystem::path(SYNAPSE_BINARY_DIR) / ("peer_test_s260_b" + batch + ".f32");
    std::vector<std::string> args = {"logits", model_.string(), "--fa", "off", "--kv", "f32", "--dump", dump.string()};
    if (!batch.empty()) args.insert(args.end(), {"-b", batch});
    for (const auto& id : as_args(tokens)) args.push_back(id);
    const CommandResult r = run_peer(args);
    EXPECT_EQ(r.exit_code, 0);
    std::istringstream lines(r.out);
    std::string line;
    size_t pos = 0;
    while (std::getline(lines, line)) {
      const auto row = nlohmann::json::parse(line);
      EXPECT_EQ(row.at("pos").get<size_t>(), pos);
      EXPECT_EQ(row.at("argmax").get<int>(), reference_.next[pos]) << "-b " << batch << " at position " << pos;
      ++pos;
    }
    EXPECT_EQ(pos, tokens.size());
    const std::string bytes = read_bytes(dump);
    std::filesystem::remove(dump);
    std::vector<float> rows(bytes.size() / sizeof(float));
    std::memcpy(rows.data(), bytes.data(), rows.size() * sizeof(float));
    return rows;
  };
  const std::vector<float> one_batch = logits_rows("");
  ASSERT_EQ(one_batch.size(), tokens.size() * 512);  // stories260K: 512 tokens
  for (const std::string batch : {"1", "7"}) {
    const std::vector<float> rows = logits_rows(batch);
    ASSERT_EQ(rows.size(), one_batch.size()) << "-b " << batch;
    float worst = 0;
    for (size_t i = 0; i < rows.size(); ++i) worst = std::max(worst, std::abs(rows[i] - one_batch[i]));
    EXPECT_LT(worst, 1e-3f) << "-b " << batch;
  }
}

// The stored references were made with the AVX2 ("haswell") CPU backend,
// flash attention off and an F32 KV cache; with those the logits of every
// step are the same bits.
TEST_F(PeerHarnessStories260K, ReproducesReferenceLogitsBitForBit) {
  const auto reference_logits =
      shared_data("reference/llamacpp/s260-f32.greedy_noprompt.logits.f32");
  if (!std::filesystem::exists(reference_logits)) GTEST_SKIP() << "absent: " << reference_logits;
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma")) {
    GTEST_SKIP() << "the haswell CPU variant needs AVX2 and FMA";
  }
  const std::string expected = read_bytes(reference_logits);
  const size_t steps = expected.size() / (512 * sizeof(float));  // stories260K: 512 tokens
  const auto dump = std::filesystem::path(SYNAPSE_BINARY_DIR) / "peer_test_s260_logits.f32";
  const CommandResult r =
      run_peer({"--cpu", "haswell", "greedy", model_.string(), "--fa", "off", "--kv", "f32", "-n",
                std::to_string(steps), "--dump", dump.string(), "1"});
  ASSERT_EQ(r.exit_code, 0);
  const std::string actual = read_bytes(dump);
  std::filesystem::remove(dump);
  ASSERT_EQ(actual.size(), expected.size());
  EXPECT_TRUE(actual == expected);
  EXPECT_EQ(parse_ids(r.out), std::vector<int>(reference_.next.begin(),
                                               reference_.next.begin() + static_cast<long>(steps)));
}

TEST_F(PeerHarnessStories260K, TokenizesTheStoryOpening) {
  // The reference story opens "Once upon a time" = 403 407 261 378.
  const CommandResult with_bos = run_peer({"tokenize", model_.string(), "Once upon a time"});
  ASSERT_EQ(with_bos.exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(with_bos.out), nlohmann::json({1, 403, 407, 261, 378}));
  const CommandResult no_bos =
      run_peer({"tokenize", model_.string(), "Once upon a time", "--no-bos"});
  ASSERT_EQ(no_bos.exit_code, 0);
  EXPECT_EQ(nlohmann::json::parse(no_bos.out), nlohmann::json({403, 407, 261, 378}));
}

TEST_F(PeerHarnessStories260K, DequantOfF32IsTheStoredFloats) {
  const CommandResult r = run_peer({"dequant", model_.string(), "blk.0.attn_q.weight"});
  ASSERT_EQ(r.exit_code, 0);
  ASSERT_EQ(r.out.size(), 64u * 64u * sizeof(float));
  // The same tensor in the Q8_0 file: within its quantization step.
  const auto q8 = shared_data("gguf/stories260K-q8_0.gguf");
  if (!std::filesystem::exists(q8)) GTEST_SKIP() << "absent: " << q8;
  const CommandResult rq = run_peer({"dequant", q8.string(), "blk.0.attn_q.weight"});
  ASSERT_EQ(rq.exit_code, 0);
  ASSERT_EQ(rq.out.size(), r.out.size());
  std::vector<float> exact(64 * 64), quantized(64 * 64);
  std::memcpy(exact.data(), r.out.data(), r.out.size());
  std::memcpy(quantized.data(), rq.out.data(), rq.out.size());
  float max_abs = 0, max_err = 0;
  for (size_t i = 0; i < exact.size(); ++i) {
    max_abs = std::max(max_abs, std::abs(exact[i]));
    max_err = std::max(max_err, std::abs(exact[i] - quantized[i]));
  }
  EXPECT_GT(max_err, 0.0f);              // really dequantized, not a copy
  EXPECT_LE(max_err, max_abs / 127.0f);  // half a Q8_0 step of the largest block, with margin
}

TEST_F(PeerHarnessStories260K, BenchPrintsOneJsonLinePerTest) {
  const CommandResult r =
      run_peer({"bench", model_.string(), "--pp", "16", "--tg", "4", "-r", "2", "-t", "1"});
  ASSERT_EQ(r.exit_code, 0);
  std::istringstream lines(r.out);
  std::string line;
  std::vector<std::string> tests;
  while (std::getline(lines, line)) {
    const auto row = nlohmann::json::parse(line);
    tests.push_back(row.at("test").get<std::string>());
    EXPECT_EQ(row.at("n_threads").get<int>(), 1);
    EXPECT_EQ(row.at("tps").size(), 2u);
    EXPECT_GT(row.at("median_tps").get<double>(), 0.0);
    // llama.cpp maps the file: a tg line gives the share of that mapping
    // in 2 MiB pages, as synapse bench does for its own.
    if (tests.back() == "tg4") {
      ASSERT_TRUE(row.contains("weights_in_2m_pages"));
      EXPECT_GE(row.at("weights_in_2m_pages").get<double>(), 0.0);
      EXPECT_LE(row.at("weights_in_2m_pages").get<double>(), 1.0);
    } else {
      EXPECT_FALSE(row.contains("weights_in_2m_pages"));
    }
  }
  EXPECT_EQ(tests, (std::vector<std::string>{"pp16", "tg4"}));
}

}  // namespace
}  // namespace synapse::test

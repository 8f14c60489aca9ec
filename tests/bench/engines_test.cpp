// bench/run's engine commands and the reading of their JSON lines.
#include "engines.h"

#include <gtest/gtest.h>

namespace synapse::bench {
namespace {

BenchCase tiny_case() {
  BenchCase c;
  c.model = "m.gguf";
  c.threads = 2;
  c.n_prompt = 16;
  c.n_gen = 8;
  return c;
}

TEST(BenchRunEngines, CommandsRunOneRepetitionAfterTheWrap) {
  Plan plan;
  plan.wrap = {"nice"};
  plan.peer_args = {"--fa", "off"};
  const BuildPrograms programs("b");
  EXPECT_EQ(engine_command(Engine::Synapse, programs, tiny_case(), plan),
            (std::vector<std::string>{"nice", "b/synapse", "bench", "-m", "m.gguf", "-p", "16", "-n", "8", "-d", "0",
                                      "-t", "2", "-r", "1", "-o", "jsonl"}));
  EXPECT_EQ(engine_command(Engine::LlamaCpp, programs, tiny_case(), plan),
            (std::vector<std::string>{"nice", "b/bench/peer/synapse-peer", "bench", "m.gguf", "--pp", "16", "--tg", "8",
                                      "-d", "0", "-t", "2", "-r", "1", "--fa", "off"}));
}

TEST(BenchRunEngines, ADepthNamesTheTestsAsLlamaBenchDoes) {
  BenchCase c = tiny_case();
  c.n_depth = 4096;
  EXPECT_EQ(c.tests(), (std::vector<std::string>{"pp16 @ d4096", "tg8 @ d4096"}));
  const std::vector<TestRate> rates = parse_engine_output(
      Engine::Synapse,
      "{\"avg_ts\":10,\"n_gen\":0,\"n_prompt\":16,\"n_depth\":4096}\n"
      "{\"avg_ts\":5,\"n_gen\":8,\"n_prompt\":0,\"n_depth\":4096}\n",
      c);
  EXPECT_EQ(rates[1].test, "tg8 @ d4096");
}

TEST(BenchRunEngines, ReadsEachEnginesLines) {
  const std::vector<TestRate> synapse =
      parse_engine_output(Engine::Synapse,
                          "{\"avg_ts\":100.5,\"decode_weight_bytes\":0,\"n_gen\":0,\"n_prompt\":16}\n"
                          "{\"avg_ts\":50.25,\"decode_weight_bytes\":1234,\"n_gen\":8,\"n_prompt\":0,"
                          "\"weights_in_2m_pages\":0.75}\n",
                          tiny_case());
  ASSERT_EQ(synapse.size(), 2u);
  EXPECT_EQ(synapse[0].test, "pp16");
  EXPECT_DOUBLE_EQ(synapse[0].tps, 100.5);
  EXPECT_EQ(synapse[1].test, "tg8");
  EXPECT_EQ(synapse[1].decode_weight_bytes, 1234u);
  EXPECT_DOUBLE_EQ(synapse[1].huge_page_share, 0.75);
  EXPECT_LT(synapse[0].huge_page_share, 0);  // not reported: unknown

  const std::vector<TestRate> peer = parse_engine_output(
      Engine::LlamaCpp,
      "{\"median_tps\":90,\"test\":\"pp16\"}\nnot json\n"
      "{\"median_tps\":40,\"test\":\"tg8\",\"weights_in_2m_pages\":0.5}\n",
      tiny_case());
  ASSERT_EQ(peer.size(), 2u);
  EXPECT_DOUBLE_EQ(peer[1].tps, 40);
  EXPECT_DOUBLE_EQ(peer[1].huge_page_share, 0.5);
  EXPECT_LT(peer[0].huge_page_share, 0);
}

TEST(BenchRunEngines, AMissingTestOrFieldIsAnError) {
  EXPECT_THROW(parse_engine_output(Engine::LlamaCpp, "{\"median_tps\":90,\"test\":\"pp16\"}\n", tiny_case()),
               std::runtime_error);
  EXPECT_THROW(parse_engine_output(Engine::LlamaCpp, "{\"tps\":[90],\"test\":\"pp16\"}\n", tiny_case()),
               std::runtime_error);
}

}  // namespace
}  // namespace synapse::bench

// synapse-mpi under mpirun on loopback (skipped where OpenMPI is not
// installed): 2 and 3 ranks give single-process `synapse run`'s tokens for
// dense and MoE families, one sequence or several (--parallel); each rank
// traces its part; ranks of different splits refuse each other; a rank that
// dies ends the job with an error; bad ranges are usage errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <future>
#include <thread>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <vector>

#include "support/command_runner.h"
#include "support/free_port.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"
#include "support/test_files.h"

namespace synapse {
namespace {

#ifdef SYNAPSE_MPI_PATH
constexpr bool kHaveMpi = true;
const std::string kMpi = SYNAPSE_MPI_PATH;
const std::string kMpiexec = SYNAPSE_MPIEXEC;
#else
constexpr bool kHaveMpi = false;
const std::string kMpi, kMpiexec;
#endif

#define SKIP_WITHOUT_MPI() \
  if (!kHaveMpi) GTEST_SKIP() << "synapse-mpi was not built (OpenMPI absent): MPI tests skipped"

const std::string kRun = "run --tokens '1 17 300 42 7' -n 24 --temp 0 --ids --ignore-eos --rank-timeout 20";

// mpirun with loopback-friendly settings: root allowed, more ranks than
// cores. Under the sanitizer build the ranks skip leak detection: OpenMPI
// leaves its own allocations at exit.
std::string mpirun(int ranks, const std::string& transport = "--mca btl self,tcp") {
  return "env ASAN_OPTIONS=detect_leaks=0 " + test::shell_quote(kMpiexec) + " --allow-run-as-root --oversubscribe " +
         transport + " -np " + std::to_string(ranks) + " ";
}


class MpiRun : public ::testing::TestWithParam<const char*> {};

TEST_P(MpiRun, TwoAndThreeRanksGiveTheSingleProcessTokens) {
  SKIP_WITHOUT_MPI();
  const test::TempDir dir;
  const std::string model = test::shell_quote(test::write_tiny_layers(dir, GetParam(), 4, 13));
  const test::CommandResult single = test::run_command(test::shell_quote(SYNAPSE_CLI_PATH) + " " + kRun + " -m " + model + " 2>/dev/null");
  ASSERT_EQ(single.exit_code, 0);
  const std::vector<int32_t> expected = test::parse_ids(test::last_line(single.out));
  ASSERT_EQ(expected.size(), 24u);
  for (int ranks : {2, 3}) {
    for (const char* split : {"--split bytes", "--split layer"}) {
      const std::string err = dir.file("stderr.txt");
      const test::CommandResult r = test::run_command(mpirun(ranks) + test::shell_quote(kMpi) + " " + kRun + " " +
                                                      split + " -m " + model + " 2>" + test::shell_quote(err));
      ASSERT_EQ(r.exit_code, 0) << r.out << test::run_command("cat " + test::shell_quote(err)).out;
      EXPECT_EQ(test::parse_ids(test::last_line(r.out)), expected) << ranks << " ranks, " << split;
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Families, MpiRun, ::testing::Values("qwen2", "llama", "olmoe"));

// The "[sequence i] ids" lines of a --parallel run.
std::string sequence_lines(const std::string& out) {
  std::string lines;
  size_t at = 0;
  while ((at = out.find("[sequence ", at)) != std::string::npos) {
    const size_t end = out.find('\n', at);
    lines += out.substr(at, end - at) + "\n";
    at = end;
  }
  return lines;
}

TEST(MpiRunParallel, MicroBatchedSequencesGiveTheSingleProcessTokensAndATracePerRank) {
  SKIP_WITHOUT_MPI();
  const test::TempDir dir;
  const std::string model = test::shell_quote(test::write_tiny_layers(dir, "qwen2", 4, 13));
  const std::string run = "run --tokens '1 17 300 42 7' -n 12 -np 4 --temp 0.8 --seed 5 --ids --ignore-eos "
                          "--rank-timeout 20 -m " + model;
  const test::CommandResult single =
      test::run_command(test::shell_quote(SYNAPSE_CLI_PATH) + " " + run + " 2>/dev/null");
  ASSERT_EQ(single.exit_code, 0);
  const std::string expected = sequence_lines(single.out);
  ASSERT_EQ(std::count(expected.begin(), expected.end(), '\n'), 4);
  const std::string trace = dir.file("trace.jsonl");
  for (int ranks : {2, 3}) {
    const test::CommandResult r =
        test::run_command(mpirun(ranks) + test::shell_quote(kMpi) + " " + run + " --trace-regions " +
                          test::shell_quote(trace) + " 2>&1");
    ASSERT_EQ(r.exit_code, 0) << r.out;
    EXPECT_EQ(sequence_lines(r.out), expected) << ranks << " ranks";
    for (int rank = 0; rank < ranks; ++rank)  // each says what its memory holds
      EXPECT_NE(r.out.find("rank " + std::to_string(rank) + ", layers "), std::string::npos) << r.out;
  }
  // The last run's ranks each wrote a trace; synapse trace reads them together.
  const test::CommandResult summary =
      test::run_command(test::shell_quote(SYNAPSE_CLI_PATH) + " trace " + test::shell_quote(trace) + " 2>&1");
  ASSERT_EQ(summary.exit_code, 0) << summary.out;
  for (const char* line : {"rank 0: ", "rank 2: ", "hop 0->1: ", "hop 1->2: ", "hop 2->0: ", "link round trip"})
    EXPECT_NE(summary.out.find(line), std::string::npos) << line << "\n" << summary.out;
}

TEST(MpiBench, PipelinedTestsReportLlamaBenchRecordsAndTheWiresMode) {
  SKIP_WITHOUT_MPI();
  const test::TempDir dir;
  const std::string model = test::shell_quote(test::write_tiny_layers(dir, "llama", 4, 13));
  const test::CommandResult r =
      test::run_command(mpirun(2) + test::shell_quote(kMpi) + " bench -m " + model +
                        " -p 16 -n 8 -r 2 -o jsonl --wire f16 --rank-timeout 20 2>" + test::shell_quote(dir.file("err")));
  ASSERT_EQ(r.exit_code, 0) << r.out;
  std::vector<nlohmann::json> records;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) records.push_back(nlohmann::json::parse(line));
  ASSERT_EQ(records.size(), 2u) << r.out;  // rank 0 alone prints
  EXPECT_EQ(records[0]["n_prompt"], 16);
  EXPECT_EQ(records[1]["n_gen"], 8);
  for (const nlohmann::json& record : records) {
    EXPECT_EQ(record["samples_ns"].size(), 2u);
    EXPECT_GT(record["avg_ts"].get<double>(), 0);
    EXPECT_EQ(record["numerical_mode"], "QualityBounded");
  }
  const std::string err = test::run_command("cat " + test::shell_quote(dir.file("err"))).out;
  EXPECT_NE(err.find("numerical mode: QualityBounded (--wire f16"), std::string::npos) << err;
}

// A server started in the background; killed (with its ranks) at the end.
class BackgroundServer {
 public:
  BackgroundServer(const std::string& command, const std::string& log) : port_(test::free_port()) {
    pid_ = test::run_command("(" + command + " --port " + std::to_string(port_) + " >" + test::shell_quote(log) +
                             " 2>&1 & echo $!)")
               .out;
    pid_.erase(pid_.find_last_not_of(" \n") + 1);
  }
  ~BackgroundServer() { test::run_command("kill -TERM " + pid_ + " 2>/dev/null; sleep 1; kill -KILL " + pid_ + " 2>/dev/null"); }
  bool wait_ready() const {
    for (int i = 0; i < 600; ++i) {
      if (test::run_command("curl -s -o /dev/null -w '%{http_code}' " + url("/health")).out == "200") return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
  // The text of a greedy completion of `prompt`.
  std::string complete(const std::string& prompt) const {
    const nlohmann::json body = {{"prompt", prompt}, {"max_tokens", 16}, {"temperature", 0}};
    const std::string reply = test::run_command("curl -s " + url("/v1/completions") +
                                                " -H 'Content-Type: application/json' -d " +
                                                test::shell_quote(body.dump()))
                                  .out;
    const nlohmann::json json = nlohmann::json::parse(reply, nullptr, false);
    if (json.is_discarded() || !json.contains("choices")) return "no completion: " + reply;
    return json["choices"][0]["text"].get<std::string>();
  }

 private:
  int port_;
  std::string pid_;
};

// Eight clients at once on a server over 2 ranks (a step per rank in
// flight, frames larger than MPI sends at once both ways) get the
// completions a single-process server gives them.
TEST(MpiServe, TwoRanksServeTheSingleProcessCompletions) {
  SKIP_WITHOUT_MPI();
  const test::TempDir dir;
  const std::string model = test::shell_quote(test::write_tiny_model(dir, "qwen2"));
  const std::string flags = " serve -m " + model + " -np 8 -c 256 -t 1 --ignore-eos";
  const BackgroundServer single(test::shell_quote(SYNAPSE_CLI_PATH) + flags, dir.file("single.log"));
  // Shared memory sending at once only what fits 1 KiB: a larger frame
  // waits for its receiver, so two ranks sending each other one must not
  // wait on each other.
  const std::string shared_memory =
      "--mca btl self,vader --mca btl_vader_eager_limit 1024 --mca btl_vader_single_copy_mechanism none";
  const BackgroundServer ranks(mpirun(2, shared_memory) + test::shell_quote(kMpi) + flags + " --rank-timeout 20",
                               dir.file("mpi.log"));
  ASSERT_TRUE(single.wait_ready());
  ASSERT_TRUE(ranks.wait_ready()) << test::run_command("cat " + test::shell_quote(dir.file("mpi.log"))).out;
  const std::vector<std::string> prompts = {"Hello",    "Once upon a time", "The answer is", "Hello",
                                            "A B C D",  "one two three",    "x",             "Once upon"};
  std::vector<std::future<std::string>> answers;
  for (const std::string& prompt : prompts)
    answers.push_back(std::async(std::launch::async, [&ranks, prompt] { return ranks.complete(prompt); }));
  for (size_t i = 0; i < prompts.size(); ++i) {
    const std::string expected = single.complete(prompts[i]);
    EXPECT_FALSE(expected.empty());
    EXPECT_EQ(answers[i].get(), expected) << prompts[i];
  }
}

TEST(MpiRunErrors, RanksOfDifferentSplitsRefuseEachOther) {
  SKIP_WITHOUT_MPI();
  const test::TempDir dir;
  const std::string model = test::shell_quote(test::write_tiny_layers(dir, "qwen2", 4, 13));
  const std::string rank = test::shell_quote(kMpi) + " " + kRun + " -m " + model;
  const test::CommandResult r = test::run_command(mpirun(1) + rank + " --ranks-layers 0-1,2-3 : -np 1 " + rank +
                                                  " --ranks-layers 0-2,3-3 2>&1");
  EXPECT_NE(r.exit_code, 0);
  EXPECT_NE(r.out.find("plan fingerprint"), std::string::npos) << r.out;
}

TEST(MpiRunErrors, ARankThatDiesEndsTheJobWithAnError) {
  SKIP_WITHOUT_MPI();
  const test::TempDir dir;
  const std::string model = test::shell_quote(test::write_tiny_layers(dir, "llama", 4, 13));
  const auto start = std::chrono::steady_clock::now();
  const test::CommandResult r = test::run_command("timeout 60 " + mpirun(1) + test::shell_quote(kMpi) + " " + kRun +
                                                  " -m " + model + " : -np 1 sh -c 'sleep 1; kill -9 $$' 2>&1");
  EXPECT_NE(r.exit_code, 0) << r.out;
  EXPECT_NE(r.exit_code, 124) << "the job hung until timeout(1) ended it";
  EXPECT_NE(r.out.find("rank 1"), std::string::npos) << r.out;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(30));
}

TEST(MpiRunErrors, RangesThatDoNotFitAreUsageErrors) {
  SKIP_WITHOUT_MPI();
  const test::TempDir dir;
  const std::string model = test::shell_quote(test::write_tiny_layers(dir, "qwen2", 4, 13));
  const test::CommandResult r = test::run_command(mpirun(2) + test::shell_quote(kMpi) + " " + kRun + " -m " + model +
                                                  " --ranks-layers 0-1,2-9 2>&1");
  EXPECT_EQ(r.exit_code, 2) << r.out;
  EXPECT_NE(r.out.find("the model has 4 layers"), std::string::npos) << r.out;
  // Without mpirun's ranks, the pipeline flags say how to use them.
  const test::CommandResult single = test::run_command(test::shell_quote(SYNAPSE_CLI_PATH) + " " + kRun + " -m " +
                                                       model + " --ranks-layers 0-1,2-3 2>&1");
  EXPECT_EQ(single.exit_code, 2);
  EXPECT_NE(single.out.find("mpirun"), std::string::npos) << single.out;
}

}  // namespace
}  // namespace synapse

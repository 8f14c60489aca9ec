// `synapse serve` as users run it: a process listening on loopback, driven
// with curl, the official OpenAI client (npm) and the chat page in headless
// Chromium; SIGTERM ends it cleanly. The npm and browser parts skip, saying
// why, where tests/serve/node/install.sh or Debian's chromium is missing.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "support/command_runner.h"
#include "support/free_port.h"
#include "support/temp_dir.h"
#include "support/tiny_model.h"

namespace synapse::test {
namespace {

namespace fs = std::filesystem;

class ServeProcess {
 public:
  ServeProcess(const std::string& model, const std::string& log) : port_(free_port()) {
    pid_ = ::fork();
    if (pid_ == 0) {
      const std::string port = std::to_string(port_);
      std::freopen(log.c_str(), "w", stderr);
      ::execl(SYNAPSE_CLI_PATH, SYNAPSE_CLI_PATH, "serve", "-m", model.c_str(), "--port", port.c_str(), "-np", "4",
              "-c", "512", "-t", "1", "-n", "48", "--ignore-eos", static_cast<char*>(nullptr));
      ::_exit(127);
    }
  }
  ~ServeProcess() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      ::waitpid(pid_, nullptr, 0);
    }
  }
  std::string url(const std::string& path) const { return "http://127.0.0.1:" + std::to_string(port_) + path; }
  int port() const { return port_; }
  // Until /health answers 200 (at most 60 s).
  bool wait_ready() const {
    for (int i = 0; i < 600; ++i) {
      if (run_command("curl -s -o /dev/null -w '%{http_code}' " + url("/health")).out == "200") return true;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return false;
  }
  // SIGTERM, then the exit code (-1 when it did not exit within 20 s).
  int terminate() {
    ::kill(pid_, SIGTERM);
    for (int i = 0; i < 200; ++i) {
      int status = 0;
      if (::waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return -1;
  }

 private:
  int port_;
  pid_t pid_ = -1;
};

std::string curl_post(const ServeProcess& server, const std::string& path, const std::string& body) {
  return run_command("curl -sN " + server.url(path) + " -H 'Content-Type: application/json' -d " + shell_quote(body))
      .out;
}

// The folder tests/serve/node/install.sh filled, with the test scripts
// copied beside node_modules (ES modules resolve packages from their own
// folder); empty when not installed.
std::string node_folder() {
  const fs::path dest = fs::path(SYNAPSE_BINARY_DIR) / "node";
  if (!fs::exists(dest / "INSTALLED")) return {};
  for (const char* script : {"openai_client.mjs", "chat_page.mjs"})
    fs::copy_file(fs::path(SYNAPSE_SOURCE_DIR) / "tests/serve/node" / script, dest / script,
                  fs::copy_options::overwrite_existing);
  return dest.string();
}

class ServeCli : public ::testing::Test {
 protected:
  void SetUp() override {
    if (run_command("command -v curl >/dev/null").exit_code != 0) GTEST_SKIP() << "curl is not installed";
    server_ = std::make_unique<ServeProcess>(write_tiny_model(dir_, "qwen2"), dir_.file("serve.log"));
    ASSERT_TRUE(server_->wait_ready()) << "the server did not become ready; see " << dir_.file("serve.log");
  }
  // Runs a node script of tests/serve/node against the server.
  CommandResult node(const std::string& script) {
    return run_command("node " + shell_quote(node_folder() + "/" + script) + " " + std::to_string(server_->port()));
  }

  TempDir dir_;
  std::unique_ptr<ServeProcess> server_;
};

TEST_F(ServeCli, AnswersCurlThenStopsOnSigterm) {
  const ServeProcess& server = *server_;
  const nlohmann::json chat = nlohmann::json::parse(curl_post(
      server, "/v1/chat/completions",
      R"({"messages": [{"role": "user", "content": "Hello"}], "max_tokens": 6, "temperature": 0})"));
  EXPECT_EQ(chat["object"], "chat.completion");
  EXPECT_EQ(chat["usage"]["completion_tokens"], 6);
  const std::string stream = curl_post(server, "/v1/completions",
                                       R"({"prompt": "Once", "max_tokens": 4, "stream": true, "temperature": 0})");
  EXPECT_NE(stream.find("\"finish_reason\":\"length\""), std::string::npos) << stream;
  EXPECT_NE(stream.find("data: [DONE]\n\n"), std::string::npos);
  EXPECT_NE(run_command("curl -s " + server.url("/metrics")).out.find("synapse_tokens_generated_total 10"),
            std::string::npos);
  EXPECT_NE(run_command("curl -s " + server.url("/")).out.find("<title>Synapse chat</title>"), std::string::npos);
  EXPECT_EQ(server_->terminate(), 0);
}

TEST_F(ServeCli, TheOfficialOpenAIClientGetsChatStreamAndCompletions) {
  if (node_folder().empty())
    GTEST_SKIP() << "the npm test packages are not installed (tests/serve/node/install.sh " << SYNAPSE_BINARY_DIR
                 << "/node)";
  const CommandResult client = node("openai_client.mjs");
  EXPECT_EQ(client.exit_code, 0) << client.out;
}

TEST_F(ServeCli, TheChatPageStreamsAnAnswerInHeadlessChromium) {
  if (node_folder().empty())
    GTEST_SKIP() << "the npm test packages are not installed (tests/serve/node/install.sh " << SYNAPSE_BINARY_DIR
                 << "/node)";
  if (!fs::exists("/usr/bin/chromium")) GTEST_SKIP() << "chromium is not installed (Debian package chromium)";
  const CommandResult page = node("chat_page.mjs");
  EXPECT_EQ(page.exit_code, 0) << page.out;
}

}  // namespace
}  // namespace synapse::test

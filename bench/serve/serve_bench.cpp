// synapse-serve-bench: C concurrent streaming clients, each asking a running
// `synapse serve` (or any OpenAI-compatible server) for --tokens tokens of a
// text completion, for each C of --clients. Reports per C the aggregate
// tokens/s, and p50/p99 of the time to first token and the inter-token
// latency, as seen by the clients.
#include <httplib.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <nlohmann/json.hpp>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct ClientRun {
  double ttft = 0;                 // seconds to the first token
  std::vector<double> gaps;        // seconds between tokens
  int tokens = 0;
  bool ok = false;
};

// One streamed completion; a token is an event whose choice has no finish reason.
ClientRun stream_one(const std::string& host, int port, const std::string& body) {
  ClientRun run;
  httplib::Client client(host, port);
  client.set_read_timeout(600);
  httplib::Request req;
  req.method = "POST";
  req.path = "/v1/completions";
  req.body = body;
  req.set_header("Content-Type", "application/json");
  const Clock::time_point start = Clock::now();
  Clock::time_point last = start;
  std::string pending;
  req.content_receiver = [&](const char* data, size_t size, uint64_t, uint64_t) {
    pending.append(data, size);
    for (size_t end; (end = pending.find("\n\n")) != std::string::npos; pending.erase(0, end + 2)) {
      if (pending.find("\"finish_reason\":null") >= end) continue;
      const Clock::time_point now = Clock::now();
      if (run.tokens++ == 0) run.ttft = std::chrono::duration<double>(now - start).count();
      else run.gaps.push_back(std::chrono::duration<double>(now - last).count());
      last = now;
    }
    return true;
  };
  const httplib::Result res = client.send(req);
  run.ok = res && res->status == 200;
  return run;
}

double percentile(std::vector<double> v, double p) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  return v[std::min(v.size() - 1, static_cast<size_t>(p * static_cast<double>(v.size() - 1) + 0.5))];
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"concurrent streaming clients against an OpenAI-compatible server"};
  std::string host = "127.0.0.1", prompt = "Once upon a time";
  int port = 8080, tokens = 128;
  std::vector<int> clients = {1, 4, 8, 16};
  app.add_option("--host", host);
  app.add_option("--port", port);
  app.add_option("--clients", clients, "concurrency levels")->delimiter(',');
  app.add_option("-n,--tokens", tokens, "tokens per request");
  app.add_option("-p,--prompt", prompt);
  CLI11_PARSE(app, argc, argv);

  std::printf("| clients | tokens | seconds | aggregate tok/s | TTFT p50 ms | TTFT p99 ms | ITL p50 ms | ITL p99 ms |\n");
  std::printf("|---|---|---|---|---|---|---|---|\n");
  for (int c : clients) {
    std::vector<ClientRun> runs(static_cast<size_t>(c));
    std::vector<std::thread> threads;
    const std::string body = nlohmann::json{{"prompt", prompt}, {"max_tokens", tokens}, {"stream", true},
                                            {"ignore_eos", true}, {"temperature", 0.8}}.dump();
    const Clock::time_point start = Clock::now();
    for (int i = 0; i < c; ++i)
      threads.emplace_back([&, i] { runs[static_cast<size_t>(i)] = stream_one(host, port, body); });
    for (std::thread& t : threads) t.join();
    const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
    std::vector<double> ttft, gaps;
    int total = 0, failed = 0;
    for (const ClientRun& r : runs) {
      failed += r.ok ? 0 : 1;
      total += r.tokens;
      ttft.push_back(r.ttft);
      gaps.insert(gaps.end(), r.gaps.begin(), r.gaps.end());
    }
    std::printf("| %d | %d | %.2f | %.1f | %.0f | %.0f | %.1f | %.1f |%s\n", c, total, seconds, total / seconds,
                1e3 * percentile(ttft, 0.5), 1e3 * percentile(ttft, 0.99), 1e3 * percentile(gaps, 0.5),
                1e3 * percentile(gaps, 0.99), failed ? (" " + std::to_string(failed) + " failed").c_str() : "");
    std::fflush(stdout);
  }
  return 0;
}

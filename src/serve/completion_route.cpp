#include "serve/completion_route.h"

#include "generate/chat_session.h"
#include "serve/client_socket.h"
#include "serve/openai_json.h"
#include "synapse/error.h"

namespace synapse::serve {
namespace {

// How often a waiting answer checks its client and the clock.
constexpr std::chrono::milliseconds kPoll{100};

std::vector<int32_t> prompt_tokens(const CompletionRequest& request, const ServedModel& model) {
  const char* field = request.endpoint == Endpoint::ChatCompletions ? "messages" : "prompt";
  std::vector<int32_t> ids;
  try {
    if (request.endpoint == Endpoint::ChatCompletions) {
      ids = render_chat_prompt(*model.chat_template, *model.tokenizer, request.messages);
    } else if (const auto* text = std::get_if<std::string>(&request.prompt)) {
      // As llama-server does: BOS per the vocabulary, special tokens matched.
      ids = model.tokenizer->encode(*text, /*add_special=*/true, /*parse_special=*/true);
    } else {
      ids = std::get<std::vector<int32_t>>(request.prompt);
    }
  } catch (const Error& e) {
    throw RequestError(400, field, std::string("cannot make a prompt of '") + field + "': " + e.message());
  }
  if (ids.empty()) throw RequestError(400, field, std::string("'") + field + "' gives no tokens");
  for (int32_t id : ids)
    if (id >= model.n_vocab)
      throw RequestError(400, field, "token id " + std::to_string(id) + " is outside the vocabulary (" +
                                         std::to_string(model.n_vocab) + " ids)");
  if (static_cast<int64_t>(ids.size()) >= model.n_ctx)
    throw RequestError(400, field, "the prompt is " + std::to_string(ids.size()) +
                                       " tokens; the context holds " + std::to_string(model.n_ctx) +
                                       " (serve -c sets it)");
  return ids;
}

std::string event(const nlohmann::json& data) { return "data: " + to_wire(data) + "\n\n"; }

// The status and message of a job that did not finish normally.
std::pair<int, std::string> failure(const Job& job, const ServerOptions& options) {
  switch (job.finish_reason()) {
    case FinishReason::Timeout:
      return {504, "the request ran longer than the server's --timeout (" + std::to_string(options.timeout_seconds) +
                       " s)"};
    case FinishReason::Shutdown: return {503, "the server is shutting down"};
    case FinishReason::Cancelled: return {499, "the request was cancelled"};
    default: return {500, "generation failed: " + job.error()};
  }
}

bool finished_normally(FinishReason reason) { return reason == FinishReason::Stop || reason == FinishReason::Length; }

// Counts a stream from before its job is submitted until its response is
// destroyed, so that a stop() ending the job waits for its final event
// (counted only after submit, a job ended before the count would lose it).
class StreamInFlight {
 public:
  explicit StreamInFlight(std::atomic<int>& count) : count_(count) { ++count_; }
  ~StreamInFlight() { --count_; }
  StreamInFlight(const StreamInFlight&) = delete;
  StreamInFlight& operator=(const StreamInFlight&) = delete;

 private:
  std::atomic<int>& count_;
};

}  // namespace

void answer_completion(const httplib::Request& req, httplib::Response& res, Endpoint endpoint,
                       const ServedModel& model, const ServerOptions& options, std::atomic<int>& in_flight) {
  auto request = std::make_shared<const CompletionRequest>(parse_completion_request(req.body, endpoint, options.sampling));
  JobRequest job_request;
  job_request.prompt = prompt_tokens(*request, model);
  job_request.sampling = request->sampling;
  job_request.max_tokens = request->max_tokens.value_or(options.n_predict);
  job_request.stop = request->stop;
  job_request.ignore_eos = request->ignore_eos || options.ignore_eos;
  job_request.logprobs = request->logprobs;
  job_request.top_logprobs = request->top_logprobs;
  job_request.deadline = Clock::now() + std::chrono::seconds(options.timeout_seconds);
  auto stream_in_flight = request->stream ? std::make_shared<StreamInFlight>(in_flight) : nullptr;
  std::shared_ptr<Job> job = model.engine->submit(std::move(job_request));
  if (!job) throw RequestError(429, "", "every slot is busy and the queue is full; retry later");
  auto writer = std::make_shared<CompletionWriter>(*request, *model.tokenizer, model.name, model.numerical_mode);

  if (!request->stream) {
    // A client that leaves cancels its request, as a stream's does.
    const ClientSocket client(req.remote_addr, req.remote_port, req.local_port);
    std::vector<TokenOut> outputs;
    while (!job->take(outputs, kPoll))
      if (client.gone()) job->cancel();
    if (!finished_normally(job->finish_reason())) {
      const auto [status, message] = failure(*job, options);
      throw RequestError(status, "", message);
    }
    res.set_content(to_wire(writer->whole(outputs, job->finish_reason(), job->usage())), "application/json");
    return;
  }

  res.set_header("Cache-Control", "no-cache");
  res.set_chunked_content_provider(
      "text/event-stream",
      [request, job, writer, &options](size_t, httplib::DataSink& sink) {
        const auto send = [&sink](const std::string& text) { return sink.write(text.data(), text.size()); };
        if (writer->chat() && !send(event(writer->opening_chunk()))) {
          job->cancel();
          return false;
        }
        std::vector<TokenOut> outputs;
        for (bool done = false; !done;) {
          outputs.clear();
          done = job->take(outputs, kPoll);
          for (const TokenOut& token : outputs)
            if ((!token.text.empty() || token.id >= 0) && !send(event(writer->chunk(token)))) {
              job->cancel();  // the client went away: its sequence is dropped at the next step
              return false;
            }
          if (!done && !sink.is_writable()) {
            job->cancel();
            return false;
          }
        }
        const FinishReason reason = job->finish_reason();
        if (finished_normally(reason)) {
          send(event(writer->closing_chunk(reason)));
          if (request->include_usage) send(event(writer->usage_chunk(job->usage())));
        } else {
          const auto [status, message] = failure(*job, options);
          send(event(error_body(status, message)));
        }
        send("data: [DONE]\n\n");
        sink.done();
        return true;
      },
      [stream_in_flight](bool) mutable { stream_in_flight.reset(); });
}

}  // namespace synapse::serve

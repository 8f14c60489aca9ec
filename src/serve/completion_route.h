// POST /v1/completions and /v1/chat/completions: a request becomes a job of
// the batch engine, answered whole or streamed as server-sent events.
#pragma once

#include <httplib.h>

#include <atomic>

#include "serve/http_server.h"
#include "serve/request.h"

namespace synapse::serve {

// Answers one completion request. Throws RequestError for what the client
// must mend (the caller turns it into the status and error object).
// `in_flight` counts the answer until its stream (if any) has ended.
void answer_completion(const httplib::Request& req, httplib::Response& res, Endpoint endpoint,
                       const ServedModel& model, const ServerOptions& options, std::atomic<int>& in_flight);

}  // namespace synapse::serve

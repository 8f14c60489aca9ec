// libFuzzer target: parse arbitrary request bodies as `synapse serve` does.
// The first byte picks the endpoint (even: completions, odd: chat); the
// rest is the body. Any outcome but a RequestError (crash, hang, another
// exception) is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "serve/request.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  using synapse::serve::Endpoint;
  const Endpoint endpoint = data[0] % 2 == 0 ? Endpoint::Completions : Endpoint::ChatCompletions;
  const std::string_view body(reinterpret_cast<const char*>(data + 1), size - 1);
  try {
    synapse::serve::parse_completion_request(body, endpoint, synapse::SamplingParams{});
  } catch (const synapse::serve::RequestError&) {
  }
  return 0;
}

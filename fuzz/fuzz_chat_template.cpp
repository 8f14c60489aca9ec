// libFuzzer target: parse and render arbitrary Jinja. Input is the template
// source, optionally followed by a NUL and the text of a user message. Any
// outcome but a synapse::Error (crash, hang, other exception) is a bug.
#include <cstddef>
#include <cstdint>
#include <string_view>

#include "chat/jinja_eval.h"
#include "chat/jinja_parser.h"
#include "synapse/error.h"

using namespace synapse::chat::jinja;

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::string_view input(reinterpret_cast<const char*>(data), size);
  const size_t split = input.find('\0');
  const std::string_view source = input.substr(0, split);
  const std::string content(split == std::string_view::npos ? "Hello" : input.substr(split + 1));
  // Tighter than the defaults so each input finishes in milliseconds.
  RenderLimits limits;
  limits.max_output_bytes = 1 << 20;
  limits.max_steps = 20'000;
  limits.max_call_depth = 16;
  limits.max_built_bytes = 16 << 20;
  try {
    const Template parsed = parse_template(source);
    Dict system;
    system.set("role", "system");
    system.set("content", "You are terse.");
    Dict user;
    user.set("role", "user");
    user.set("content", content);
    const std::vector<std::pair<std::string, Value>> variables = {
        {"messages", Value(List{Value(std::move(system)), Value(std::move(user))})},
        {"add_generation_prompt", true},
        {"bos_token", "<s>"},
        {"eos_token", "</s>"},
    };
    Evaluator(limits, "2024-07-26").render(parsed, variables);
  } catch (const synapse::Error&) {
  }
  return 0;
}

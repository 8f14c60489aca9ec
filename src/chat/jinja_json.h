// The tojson filter as transformers defines it: Python json.dumps with
// ensure_ascii=False by default, optional indent and sort_keys.
#pragma once

#include <optional>
#include <string>

#include "chat/jinja_value.h"

namespace synapse::chat::jinja {

struct JsonOptions {
  std::optional<int64_t> indent;  // none: one line with ", " and ": "
  bool sort_keys = false;
  bool ensure_ascii = false;
};

// Throws std::invalid_argument for values JSON cannot hold (undefined, functions).
std::string to_json(const Value& value, const JsonOptions& options);

}  // namespace synapse::chat::jinja

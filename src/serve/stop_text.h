// Stop strings over streamed text: text goes out as soon as no stop string
// can begin in it, and a stop string found ends the text just before it
// (neither it nor anything after it is sent), as OpenAI's `stop` does.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace synapse::serve {

class StopText {
 public:
  explicit StopText(std::vector<std::string> stops) : stops_(std::move(stops)) {}

  // Appends generated text; returns what can be sent now. After a stop
  // string is found, stopped() is true and later pushes return nothing.
  std::string push(std::string_view text);
  // The text held back (the start of a stop string that never completed),
  // at the end of the generation.
  std::string flush();
  bool stopped() const { return stopped_; }

 private:
  std::vector<std::string> stops_;
  std::string pending_;
  bool stopped_ = false;
};

}  // namespace synapse::serve

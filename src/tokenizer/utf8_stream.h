// Holds back the bytes of an unfinished UTF-8 sequence until it completes,
// so streamed token text never splits a code point.
#pragma once

#include <string>

namespace synapse {

class Utf8Stream {
 public:
  // Appends bytes; returns the text that is complete so far.
  std::string push(const std::string& bytes);
  // Whatever is left (an invalid tail is emitted as is).
  std::string flush();

 private:
  std::string pending_;
};

}  // namespace synapse

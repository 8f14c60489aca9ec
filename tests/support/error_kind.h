// The kind of the synapse::Error a call throws, for tests of bad input.
#pragma once

#include <gtest/gtest.h>

#include <functional>

#include "synapse/error.h"

namespace synapse::test {

// The kind f() throws; a test failure (and Cancelled) when it throws none.
inline ErrorKind error_kind(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.kind();
  }
  ADD_FAILURE() << "no synapse::Error";
  return ErrorKind::Cancelled;
}

}  // namespace synapse::test

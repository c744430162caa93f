// The message of the luong::Error a callable throws, for tests that check what an error says.
#pragma once
#include <string>
#include <utility>

#include "framework/core/error.h"

namespace luong::testing {

// e.what() of the luong::Error `f` throws, or "(no error)" when it returns normally.
template <class F>
std::string error_of(F&& f) {
  try {
    std::forward<F>(f)();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace luong::testing

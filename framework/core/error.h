// One exception type for the whole engine, and the CHECK macro that builds its message.
#pragma once
#include <sstream>
#include <stdexcept>
#include <string>
#include <utility>

namespace luong {

// Every error luong raises. The message names the thing that is wrong (op, shapes, file, key, rank).
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Concatenates anything streamable into one string: str("shape ", a, " vs ", b).
template <class... Args>
std::string str(Args&&... args) {
  std::ostringstream os;
  (os << ... << std::forward<Args>(args));
  return os.str();
}

namespace detail {
[[noreturn]] void fail_check(const char* file, int line, const char* cond, const std::string& msg);
}  // namespace detail

}  // namespace luong

// LUONG_CHECK(cond, "message parts", ...): throws luong::Error naming the failed condition and place.
#define LUONG_CHECK(cond, ...)                                                          \
  do {                                                                                  \
    if (!(cond)) ::luong::detail::fail_check(__FILE__, __LINE__, #cond, ::luong::str(__VA_ARGS__)); \
  } while (0)

// Throws luong::Error with the message alone (for user-facing errors where the condition text is noise).
#define LUONG_FAIL(...) throw ::luong::Error(::luong::str(__VA_ARGS__))

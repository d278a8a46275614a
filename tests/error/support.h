// What every user-mistake test needs: run the mistake, catch the
// blocc::Error it must raise, and say where the message must point.
//
// A test marks the line of its one mistake by assigning __LINE__ in the same
// expression, so that the expected line cannot drift when code moves:
//
//   static int line;
//   auto k = bl::kernel("k", [](bl::Ptr<float> out) {
//     auto c = (line = __LINE__, bl::arange(0, 16) + bl::arange(0, 32));
//     ...
//   });
//   std::string msg = error_of([&] { k[{1}](out_buffer); });
//   EXPECT_THAT(msg, HasSubstr(at(line)));  // "this_test.cpp:12: error: "
#pragma once

#include "poison.h"

#include <blocc/blocc.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <source_location>
#include <string>
#include <vector>

namespace blocc::error_testing {

/// Runs `f`, which must throw blocc::Error, and returns the message. Any
/// other outcome fails the test (and returns "", which matches nothing).
template <typename F> std::string error_of(F &&f) {
  try {
    f();
  } catch (const blocc::Error &e) {
    return e.what();
  } catch (const std::exception &e) {
    ADD_FAILURE() << "expected a blocc::Error, got another exception: "
                  << e.what();
    return {};
  }
  ADD_FAILURE() << "expected a blocc::Error, but nothing was thrown";
  return {};
}

/// "file_test.cpp:LINE" for the test file that calls it (the base name, as
/// blocc prints source locations).
inline std::string
where(int line, std::source_location here = std::source_location::current()) {
  std::string file = here.file_name();
  auto slash = file.find_last_of('/');
  if (slash != std::string::npos)
    file = file.substr(slash + 1);
  return file + ":" + std::to_string(line);
}

/// The prefix of a trace-time error raised at `line` of the calling file:
/// "file_test.cpp:LINE: error: ".
inline std::string
at(int line, std::source_location here = std::source_location::current()) {
  return where(line, here) + ": error: ";
}

// Every element one recognisable bit pattern, so that a write by a kernel
// that should not have run shows up (untouched).
using poison::bytes::poisoned;
using poison::bytes::untouched;

/// Launches one program of `k`, a kernel of (x, out, extra...) that makes
/// one mistake, on `n` ones and `n` poisoned floats; returns the message of
/// the error it must raise, and checks that `out` stayed poisoned.
template <typename... Extra>
std::string run_x_out(auto &k, size_t n, Extra... extra) {
  std::vector<float> x(n, 1.f);
  auto out = poisoned<float>(n);
  std::string msg = error_of([&] { k[{1}](x, out, extra...); });
  EXPECT_TRUE(untouched(out)) << "the kernel wrote its output";
  return msg;
}

/// The same for a kernel of (out, extra...).
template <typename... Extra>
std::string run_out(auto &k, size_t n, Extra... extra) {
  auto out = poisoned<float>(n);
  std::string msg = error_of([&] { k[{1}](out, extra...); });
  EXPECT_TRUE(untouched(out)) << "the kernel wrote its output";
  return msg;
}

} // namespace blocc::error_testing

// Where an operation came from in the user's source, so that every message
// about it can name the user's line.
#pragma once

#include <string>

namespace blocc::ir {

struct Location {
  std::string file; // empty: unknown
  int line = 0;

  bool known() const { return !file.empty(); }
  /// "kernel.cpp:12", or "" when unknown. Only the file's base name is
  /// printed: build directories differ between machines, lines do not.
  std::string str() const;
  friend bool operator==(const Location &, const Location &) = default;
};

} // namespace blocc::ir

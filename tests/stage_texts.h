// What BLOCC_DUMP prints for a set of stage texts (jit/stages.h):
// each stage's header line, then its text. The inspection tests of both
// backends compare a launch's output with it.
#pragma once

#include <blocc/blocc.h>

#include <string>

namespace blocc::testing {

inline std::string dump_text(const Stages &stages) {
  std::string text;
  for (const Stages::Text &t : stages.texts)
    text += stages.header(t.stage) + "\n" + t.text;
  return text;
}

} // namespace blocc::testing

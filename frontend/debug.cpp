// Run-time debugging (tl.device_print, tl.device_assert), traced to Print
// and Assert ops. What they do when the kernel runs is the executor's: the
// reference interpreter prints one line per element,
//   pid (x, y, z) idx (i, j) <prefix> <value>
// and fails an assertion with a blocc::Error naming the message, the
// kernel, the program id, the assert's source line and the first false
// lane (backends/interpreter/README.md). Unlike Triton, where device_assert
// is compiled only in debug mode, blocc always keeps assertions.
// (bl::static_assert_, checked at trace time, lives with the creation ops.)
#include "semantics.h"

namespace blocc {

using detail::user_error;
using ir::OpCode;
using ir::Scalar;

void device_print(const std::string &prefix, const std::vector<Tensor> &values,
                  bool hex, SourceLoc loc) {
  detail::reject_in_combine("bl::device_print", loc,
                            "print the result after the reduction or scan");
  // One printed line per element is the format's contract: a prefix that
  // breaks the line (or holds bytes a terminal shows as garbage) would
  // garble every line after it.
  for (char c : prefix)
    if (c < 0x20 || c > 0x7e)
      user_error(loc, "bl::device_print: the prefix \"" + prefix +
                          "\" holds a character that is not printable "
                          "ASCII (code " +
                          std::to_string(static_cast<unsigned char>(c)) +
                          "); use letters, digits, punctuation and spaces "
                          "on one line");
  std::vector<ir::Value *> operands;
  for (const Tensor &v : values)
    operands.push_back(v.value(loc));
  ir::Attributes attrs{{"prefix", prefix}};
  if (hex)
    attrs["hex"] = int64_t{1};
  detail::TraceContext::current(loc).at(loc).create(OpCode::Print, operands, {},
                                                    attrs);
}

void device_assert(Operand condition, const std::string &message) {
  detail::reject_in_combine("bl::device_assert", condition.loc(),
                            "check the operands before the reduction or scan, "
                            "or the result after it");
  if (detail::natural_dtype(condition) != Scalar::I1)
    user_error(condition.loc(),
               "bl::device_assert: the condition must be boolean (i1), got " +
                   condition.describe() +
                   "; compare it, e.g. x != 0 or offsets < n");
  ir::Value *cond = detail::as_dtype(condition, Scalar::I1);
  detail::TraceContext::current(condition.loc())
      .at(condition.loc())
      .create(OpCode::Assert, {cond}, {}, {{"message", message}});
}

} // namespace blocc

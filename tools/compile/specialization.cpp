#include "tools/compile/specialization.h"

namespace blocc::compile {

std::string Specialization::signature() const {
  std::string s;
  for (const Parameter &p : parameters)
    s += (s.empty() ? "" : ", ") + p.entry;
  return s;
}

std::vector<const Parameter *> Specialization::runtime_parameters() const {
  std::vector<const Parameter *> runtime;
  for (const Parameter &p : parameters)
    if (p.kind != Parameter::Kind::Constant)
      runtime.push_back(&p);
  return runtime;
}

} // namespace blocc::compile

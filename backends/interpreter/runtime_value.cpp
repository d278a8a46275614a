#include "backends/interpreter/runtime_value.h"

namespace blocc::interp {

RuntimeValue::RuntimeValue(ir::Type t)
    : type(t), bits(static_cast<size_t>(t.num_elements()), 0) {
  if (t.is_pointer())
    provenance.assign(bits.size(), kNoProvenance);
}

std::vector<int64_t> unflatten(int64_t flat,
                               const std::vector<int64_t> &shape) {
  std::vector<int64_t> index(shape.size(), 0);
  for (int i = static_cast<int>(shape.size()) - 1; i >= 0; --i) {
    index[i] = flat % shape[i];
    flat /= shape[i];
  }
  return index;
}

int64_t flatten(const std::vector<int64_t> &index,
                const std::vector<int64_t> &shape) {
  int64_t flat = 0;
  for (size_t i = 0; i < shape.size(); ++i)
    flat = flat * shape[i] + index[i];
  return flat;
}

std::string index_str(const std::vector<int64_t> &index) {
  std::string s = "(";
  for (size_t i = 0; i < index.size(); ++i)
    s += (i ? ", " : "") + std::to_string(index[i]);
  return s + ")";
}

} // namespace blocc::interp

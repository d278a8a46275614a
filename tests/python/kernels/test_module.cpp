// A pybind11 module exporting kernels with blocc::python::export_kernel,
// for tests/python/test_export_kernel.py: a kernel named at bl::kernel, one
// named only at export, one never named (positional arguments only), and
// functions that export wrongly named kernels when called (so that the
// module itself imports).
#include <blocc/blocc.h>
#include <blocc/python.h>

namespace bl = blocc;

namespace {

auto fill_body = [](bl::Ptr<int> out, bl::i32 value, bl::i32 n,
                    bl::Const<int> BLOCK) {
  auto i = bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
  bl::store(out + i, bl::full({BLOCK.value()}, 0, bl::int32) + value, i < n);
};

auto fill_named =
    bl::kernel("fill_named", {"out", "value", "n", "BLOCK"}, fill_body);
auto fill_named_at_export = bl::kernel("fill_named_at_export", fill_body);
auto fill_unnamed = bl::kernel("fill_unnamed", fill_body);
auto fill_bad_names =
    bl::kernel("fill_bad_names", {"out", "value", "n", "2BLOCK"}, fill_body);
auto fill_option_name = bl::kernel(
    "fill_option_name", {"out", "value", "n", "num_warps"}, fill_body);
auto fill_to_rename = bl::kernel("fill_to_rename", fill_body);

} // namespace

PYBIND11_MODULE(blocc_test_module, m) {
  blocc::python::export_kernel(m, fill_named);
  blocc::python::export_kernel(m, fill_named_at_export,
                               {"out", "value", "n", "BLOCK"});
  blocc::python::export_kernel(m, fill_unnamed);
  m.def("export_bad_names",
        [m]() mutable { blocc::python::export_kernel(m, fill_bad_names); });
  m.def("export_option_name",
        [m]() mutable { blocc::python::export_kernel(m, fill_option_name); });
  m.def("export_wrong_count", [m]() mutable {
    blocc::python::export_kernel(m, fill_to_rename, {"out", "value"});
  });
}

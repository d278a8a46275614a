// Your own kernels in your own pybind11 module, one line per kernel:
//
//   import my_extension
//   my_extension.leaky_relu[grid](x, out, x.size, slope=0.1, BLOCK=1024)
//
// Build: pybind11_add_module linking `blocc::blocc` (tutorials/python/
// CMakeLists.txt). export_kernel adds a blocc.Kernel to the module, so the
// module imports `blocc` when it loads.
#include <blocc/blocc.h>
#include <blocc/python.h>

namespace bl = blocc;

// x where x > 0, slope * x elsewhere, for any float32 array.
auto leaky_relu =
    bl::kernel("leaky_relu", {"x", "out", "n", "slope", "BLOCK"},
               [](bl::Ptr<float> x, bl::Ptr<float> out, bl::i32 n,
                  bl::f32 slope, bl::Const<int> BLOCK) {
                 auto offsets =
                     bl::program_id(0) * BLOCK + bl::arange(0, BLOCK);
                 auto mask = offsets < n;
                 auto v = bl::load(x + offsets, mask);
                 bl::store(out + offsets, bl::where(v > 0, v, slope * v), mask);
               });

PYBIND11_MODULE(my_extension, m) {
  m.doc() = "blocc's tutorial of kernels exported from a pybind11 module";
  blocc::python::export_kernel(m, leaky_relu);
}

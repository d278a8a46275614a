// A pybind11 module exporting kernels with blocc::python::export_kernel,
// for tests/python/test_export_kernel.py: a kernel named at bl::kernel, one
// named only at export, one never named (positional arguments only), and
// functions that export wrongly named kernels when called (so that the
// module itself imports). Also DeviceArray, GPU memory with the CUDA array
// interface, so that tests/python/test_gpu.py needs neither PyTorch nor
// CuPy.
#include <blocc/blocc.h>
#include <blocc/python.h>

#include <pybind11/numpy.h>

#include <memory>
#include <string>
#include <vector>

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

/// A copy of a contiguous numpy array in GPU memory.
class DeviceArray {
public:
  DeviceArray(const pybind11::array &host, int device, bool read_only)
      : dtype_(host.dtype()), read_only_(read_only) {
    if (!(host.flags() & pybind11::array::c_style))
      throw std::invalid_argument(
          "DeviceArray: the array must be C-contiguous");
    for (pybind11::ssize_t d = 0; d < host.ndim(); ++d)
      shape_.push_back(host.shape(d));
    memory_ = std::make_unique<blocc::DeviceAllocation>(
        std::max<size_t>(host.nbytes(), 1), device);
    memory_->copy_from_host(host.data(), host.nbytes());
  }
  pybind11::dict interface() const {
    pybind11::dict cai;
    pybind11::tuple shape(shape_.size());
    for (size_t d = 0; d < shape_.size(); ++d)
      shape[d] = shape_[d];
    cai["shape"] = shape;
    cai["typestr"] = dtype_.attr("str");
    cai["data"] = pybind11::make_tuple(memory_->address(), read_only_);
    cai["strides"] = pybind11::none();
    cai["version"] = 3;
    cai["stream"] = 1; // the work that wrote it is on the legacy stream
    return cai;
  }
  pybind11::array to_host() const {
    pybind11::array host(dtype_, shape_);
    memory_->copy_to_host(host.mutable_data(), host.nbytes());
    return host;
  }
  int device() const { return memory_->device(); }

private:
  pybind11::dtype dtype_;
  std::vector<pybind11::ssize_t> shape_;
  bool read_only_;
  std::unique_ptr<blocc::DeviceAllocation> memory_;
};

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
  pybind11::class_<DeviceArray>(m, "DeviceArray")
      .def(pybind11::init<const pybind11::array &, int, bool>(),
           pybind11::arg("host"), pybind11::arg("device") = 0,
           pybind11::arg("read_only") = false)
      .def_property_readonly("__cuda_array_interface__",
                             &DeviceArray::interface)
      .def_property_readonly("device", &DeviceArray::device)
      .def("numpy", &DeviceArray::to_host);
}

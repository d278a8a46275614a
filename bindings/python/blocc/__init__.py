"""blocc from Python: kernels written in C++ with blocc, called on numpy
arrays the way Triton kernels are called.

    import numpy as np
    import blocc
    from blocc.kernels import add

    x, y = np.random.rand(2, 98432).astype(np.float32)
    out = np.empty_like(x)
    grid = lambda meta: (blocc.cdiv(x.size, meta["BLOCK"]),)
    add[grid](x, y, out, x.size, BLOCK=1024)

Kernels: ``blocc.kernels`` (the tutorials' kernels), ``blocc.load_library``
(a shared library of your kernels) and ``blocc::python::export_kernel``
(your own pybind11 module). Inspection: ``kernel.asm(...)``. Benchmarks:
``blocc.testing.do_bench``. GPUs: ``blocc.cuda``. The compile cache:
``blocc.cache``. Autotuning: ``blocc.autotune`` and ``blocc.Config``.
"""

import os as _os

from . import _blocc
from ._blocc import Error, Kernel

__version__ = _blocc.__version__

__all__ = [
    "Error",
    "Kernel",
    "Config",
    "autotune",
    "KernelLibrary",
    "cdiv",
    "next_power_of_2",
    "load_library",
    "host_backend",
    "backends",
    "get_include",
    "get_cmake_dir",
]


def cdiv(a, b):
    """Ceiling division, for grids: ``cdiv(n, BLOCK)`` programs cover n."""
    return -(a // -b)


def next_power_of_2(n):
    """The smallest power of two >= n (1 for n <= 1), for block sizes."""
    n = int(n)
    return 1 if n <= 1 else 1 << (n - 1).bit_length()


def host_backend(backend="auto"):
    """What runs launches on host arrays, in words:
    'CPU backend (x86_64-pc-linux-gnu znver4, 512-bit vectors; 2 threads)' or
    'reference interpreter'. ``backend`` as the launch option."""
    return _blocc._host_backend(backend)


def backends():
    """The backends this build of blocc has:
    {'interpreter': True, 'cpu': bool, 'gpu': bool} ('gpu': the compiler;
    running needs a GPU too, see blocc.cuda.is_available())."""
    return {
        "interpreter": True,
        "cpu": _blocc._cpu_backend_built(),
        "gpu": _blocc._gpu_backend_built(),
    }


class KernelLibrary:
    """The kernels of a shared library (``blocc.load_library``), as
    attributes (``lib.scale``) and items (``lib["scale"]``)."""

    def __init__(self, path, kernels, blocc_version):
        self.path = path
        self.kernels = dict(kernels)
        self.blocc_version = blocc_version

    def __getattr__(self, name):
        try:
            return self.__dict__["kernels"][name]
        except KeyError:
            raise AttributeError(
                f"library {self.__dict__.get('path')!r} exports no kernel "
                f"named {name!r} (it exports: {', '.join(self.kernels) or 'none'})"
            ) from None

    def __getitem__(self, name):
        return self.kernels[name]

    def __iter__(self):
        return iter(self.kernels.values())

    def __len__(self):
        return len(self.kernels)

    def __dir__(self):
        return list(super().__dir__()) + list(self.kernels)

    def __repr__(self):
        return f"<blocc.KernelLibrary {self.path!r}: {', '.join(self.kernels)}>"


def load_library(path):
    """Loads the kernels a shared library exports with
    ``BLOCC_EXPORT_KERNELS(...)`` (``#include <blocc/export.h>``) and returns
    them as a KernelLibrary. A path with no '/' is searched like dlopen's
    (LD_LIBRARY_PATH, ...) unless a file of that name exists here. The
    library stays loaded for the rest of the process."""
    path = _os.fspath(path)
    if _os.path.exists(path):
        path = _os.path.abspath(path)
    kernels, version = _blocc._load_library(path)
    return KernelLibrary(path, kernels, version)


def get_include():
    """The directory of blocc's C++ headers in an installed package
    (<blocc/blocc.h>, <blocc/export.h>, <blocc/python.h>)."""
    return _sdk_path("include")


def get_cmake_dir():
    """The directory of blocc's CMake package in an installed package, for
    building your own kernel library or pybind11 module against it:
    ``find_package(blocc CONFIG)`` with ``blocc_DIR`` set to it, then link
    ``blocc::blocc`` (tutorials/python/CMakeLists.txt)."""
    return _sdk_path(_os.path.join("lib", "cmake", "blocc"))


def _sdk_path(relative):
    # Beside the extension module: an editable install keeps this file in
    # the source tree, and the module and the SDK in site-packages.
    path = _os.path.join(_os.path.dirname(_os.path.abspath(_blocc.__file__)), relative)
    if not _os.path.isdir(path):
        raise Error(
            f"this blocc has no C++ SDK ({path} does not exist): pip install "
            "installs it; in blocc's own CMake build, link the target "
            "blocc::blocc directly")
    return path


def _kernel_from_capsule(capsule, owner=None):
    # blocc::python::export_kernel (blocc/python.h) calls this.
    return _blocc._kernel_from_capsule(capsule, owner)


from . import cache, cuda, kernels, testing  # noqa: E402  (need the names above)
from .autotuning import Config, autotune  # noqa: E402

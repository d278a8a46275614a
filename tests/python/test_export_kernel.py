"""Kernels exported from a user's pybind11 module with
blocc::python::export_kernel (tests/python/kernels/test_module.cpp)."""

import re

import numpy as np
import pytest

import blocc
import blocc_test_module as module
from conftest import poisoned


def fill(kernel, *args, **kwargs):
    out = poisoned(70, np.int32)
    kernel[(3,)](out, *args, **kwargs)
    return out


def test_exported_kernels_are_blocc_kernels():
    for name in ["fill_named", "fill_named_at_export", "fill_unnamed"]:
        kernel = getattr(module, name)
        assert isinstance(kernel, blocc.Kernel)
        assert kernel.name == name
        assert kernel.definition_site.startswith("test_module.cpp:")


def test_named_kernels_take_keywords():
    for kernel in [module.fill_named, module.fill_named_at_export]:
        out = fill(kernel, value=-9, n=65, BLOCK=32)
        assert (out[:65] == -9).all() and (out[65:] == np.iinfo(np.int32).max).all()
        assert [p[0] for p in kernel.params] == ["out", "value", "n", "BLOCK"]


def test_unnamed_kernels_take_positions_only():
    kernel = module.fill_unnamed
    assert kernel.signature == ("fill_unnamed(bl::Ptr<i32>, bl::i32, bl::i32, "
                                "bl::Const<i32>)")
    assert (fill(kernel, 4, 70, 32) == 4).all()
    with pytest.raises(blocc.Error, match="kernel 'fill_unnamed' has no parameter named 'n'"):
        fill(kernel, 4, n=70)
    with pytest.raises(blocc.Error, match=re.escape(
            "kernel 'fill_unnamed', argument 2 (bl::i32): expected a scalar")):
        fill(kernel, "4", 70, 32)


def test_bad_names_are_reported_at_export():
    with pytest.raises(blocc.Error, match="the name '2BLOCK' of parameter 4 is not an identifier"):
        module.export_bad_names()
    with pytest.raises(blocc.Error, match="argument 4 'num_warps' .* is named like the launch "
                                          "option 'num_warps'"):
        module.export_option_name()
    with pytest.raises(blocc.Error, match="kernel 'fill_to_rename' .* has 4 parameters, but "
                                          "2 names were given"):
        module.export_wrong_count()


def test_kernel_from_a_foreign_capsule_is_refused():
    import ctypes
    capsule = ctypes.pythonapi.PyCapsule_New
    capsule.restype = ctypes.py_object
    capsule.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
    with pytest.raises(blocc.Error, match="expected a capsule named 'blocc.kernel_v1'"):
        blocc._kernel_from_capsule(capsule(1, b"something.else", None))

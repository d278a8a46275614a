"""Arrays through every protocol blocc reads (the buffer protocol, DLPack,
the CUDA array interface), on a machine with or without a GPU: host
memory through DLPack runs on the CPU backend without copies; malformed or
unsupported arrays are a blocc.Error naming the argument."""

import numpy as np
import pytest

import blocc
from blocc.kernels import add
from conftest import poisoned


class DLPackOnly:
    """An array that offers nothing but DLPack (as a torch CPU tensor or a
    JAX array does)."""

    def __init__(self, array, device=None):
        self.array = array
        self.device = device

    def __dlpack__(self, stream=None):
        return self.array.__dlpack__(stream=stream)

    def __dlpack_device__(self):
        return self.device or self.array.__dlpack_device__()


class FakeCudaArray:
    def __init__(self, **interface):
        self.__cuda_array_interface__ = dict(
            shape=(100,), typestr="<f4", data=(0xDEAD0000, False), version=3,
            strides=None, stream=None)
        self.__cuda_array_interface__.update(interface)


def test_dlpack_host_arrays_without_copies(rng):
    n = 1001
    x, y = rng.standard_normal((2, n), dtype=np.float32)
    out = poisoned(n, np.float32)
    add[(blocc.cdiv(n, 256),)](DLPackOnly(x), DLPackOnly(y), DLPackOnly(out), n, BLOCK=256)
    np.testing.assert_array_equal(out, (x.astype(np.float64) + y).astype(np.float32))


def test_dlpack_errors(rng):
    x = rng.standard_normal(200, dtype=np.float32)
    out = poisoned(100, np.float32)
    with pytest.raises(blocc.Error, match=r"argument 1 'x' \(bl::Ptr<f32>\): "
                                          r".*DLPackOnly\[float32\] is not contiguous "
                                          r"\(strides in bytes: \(8,\)\)"):
        add[(1,)](DLPackOnly(x[::2]), x[:100], out, 100, BLOCK=128)
    with pytest.raises(blocc.Error, match=r"argument 2 'y' \(bl::Ptr<f32>\): expected f32 "
                                          r"elements, got .*DLPackOnly\[float64\]"):
        add[(1,)](x[:100], DLPackOnly(x[:100].astype(np.float64)), out, 100, BLOCK=128)
    with pytest.raises(blocc.Error, match="argument 1 'x'.*DLPackOnly is a DLPack array on "
                                          "device type 14; blocc takes CPU and CUDA memory"):
        add[(1,)](DLPackOnly(x[:100], device=(14, 0)), x[:100], out, 100, BLOCK=128)
    assert np.isnan(out).all()


@pytest.mark.parametrize("interface,match", [
    (dict(typestr=">f4"), "typestr '>f4' is not a little-endian element type"),
    (dict(mask=object()), "is a masked array"),
    (dict(typestr="<c8"), r"FakeCudaArray\[<c8\] on cuda:\d+ has elements blocc has no type for"),
])
def test_cuda_array_interface_errors(interface, match):
    if "c8" in interface.get("typestr", "") and not blocc.cuda.is_available():
        match = "argument 1 'x'"  # without a driver, finding the GPU fails first
    out = poisoned(100, np.float32)
    with pytest.raises(blocc.Error, match=match):
        add[(1,)](FakeCudaArray(**interface), out, out, 100, BLOCK=128)
    assert np.isnan(out).all()


def test_cuda_array_interface_needs_the_driver_or_real_memory():
    # 0xDEAD0000 is no memory the driver knows, and without a driver no
    # pointer's GPU can be found: either way, an error naming the argument.
    out = poisoned(100, np.float32)
    with pytest.raises(blocc.Error, match=r"^kernel 'add', argument 1 'x' \(bl::Ptr<f32>\): "):
        add[(1,)](FakeCudaArray(), out, out, 100, BLOCK=128)
    assert np.isnan(out).all()


def test_stream_option_forms():
    class Stream:
        cuda_stream = 0

    x = np.ones(8, np.float32)
    out = poisoned(8, np.float32)
    for stream in [None, 0, Stream()]:  # host launches ignore the stream
        add[(1,)](x, x, out, 8, BLOCK=8, stream=stream)
    assert (out == 2).all()

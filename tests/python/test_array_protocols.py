"""Arrays through every protocol blocc reads (the buffer protocol, DLPack,
the CUDA array interface), on a machine with or without a GPU: host
memory through DLPack runs on the CPU backend without copies; malformed or
unsupported arrays are a blocc.Error naming the argument."""

import ctypes

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


class DLPackVersioned(DLPackOnly):
    """An array offering DLPack 1.0 (__dlpack__(max_version=...)), as numpy
    >= 2.1 does; it records what it was asked for."""

    def __init__(self, array):
        super().__init__(array)
        self.requests = []

    def __dlpack__(self, **kwargs):
        self.requests.append(kwargs)
        return self.array.__dlpack__(**kwargs)


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLManagedTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.c_void_p), ("byte_offset", ctypes.c_uint64),
                ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


_DLTENSOR = b"dltensor"
_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]


class FakeCudaDLPack:
    """A DLPack float32 vector claiming to live on a GPU (no memory behind
    it: the launches given it must fail before anything runs)."""

    def __init__(self, n, gpu=0):
        self.gpu = gpu
        self.shape = (ctypes.c_int64 * 1)(n)
        self.tensor = DLManagedTensor(data=0xDEAD0000, device=DLDevice(2, gpu), ndim=1,
                                      dtype=DLDataType(2, 32, 1), shape=self.shape)

    def __dlpack__(self, stream=None):
        return _capsule_new(ctypes.addressof(self.tensor), _DLTENSOR, None)

    def __dlpack_device__(self):
        return (2, self.gpu)


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


@pytest.mark.skipif(np.lib.NumpyVersion(np.__version__) < "2.1.0",
                    reason="numpy < 2.1 exports no DLPack 1.0 (read-only) tensors")
def test_dlpack_read_only_output(rng):
    n = 257
    x, y = rng.standard_normal((2, n), dtype=np.float32)
    frozen = poisoned(n, np.float32)
    frozen.flags.writeable = False
    with pytest.raises(blocc.Error, match=r"^kernel 'add', argument 3 'out' \(bl::Ptr<f32>\): "
                                          r".*DLPackVersioned\[float32\] is read-only, but the "
                                          r"kernel writes through it; pass a writable array$"):
        add[(blocc.cdiv(n, 128),)](DLPackVersioned(x), DLPackVersioned(y),
                                   DLPackVersioned(frozen), n, BLOCK=128)
    assert np.isnan(frozen).all()
    # Read-only inputs are fine; the producers were asked for DLPack 1.0
    # and their own memory.
    x.flags.writeable = y.flags.writeable = False
    arrays = [DLPackVersioned(x), DLPackVersioned(y), DLPackVersioned(poisoned(n, np.float32))]
    add[(blocc.cdiv(n, 128),)](*arrays, n, BLOCK=128)
    np.testing.assert_array_equal(arrays[2].array, (x.astype(np.float64) + y).astype(np.float32))
    assert all(a.requests == [{"max_version": (1, 0), "copy": False}] for a in arrays)


def test_gpu_mistakes_in_python_terms(rng):
    # The GPU launch's checks come before the GPU is used: no GPU needed.
    # Their advice names Python's ways, not C++'s (blocc::DeviceBuffer,
    # Backend::Gpu, to_host()).
    x = rng.standard_normal(100, dtype=np.float32)
    out = poisoned(100, np.float32)
    messages = []
    for args, options, match in [
        ((x, x, out), dict(backend="gpu"),
         r"argument 1 'x' \(bl::Ptr<f32>\): numpy.ndarray\[float32\] is host memory, but "
         r"the launch runs on the GPU; pass GPU memory \(a CUDA tensor, .*"
         r"torch.from_numpy\(a\).cuda\(\) copies a numpy array to the GPU\)$"),
        ((FakeCudaDLPack(100), x, out), dict(backend="cpu"),
         r"argument 1 'x' .*FakeCudaDLPack\[float32\] on cuda:0 lives on GPU 0, but the "
         r"launch asks for the CPU backend, which runs on host memory; launch with "
         r"backend='gpu' or 'auto', or copy the data to the host \(tensor.cpu\(\)\)$"),
        ((FakeCudaDLPack(100), FakeCudaDLPack(100, gpu=1), out), {},
         r"argument 2 'y' .* lives on GPU 1, but kernel 'add', argument 1 'x' "
         r"\(bl::Ptr<f32>\) lives on GPU 0; a kernel runs on one GPU: copy the arrays to "
         r"one device$"),
    ]:
        with pytest.raises(blocc.Error, match=match) as error:
            add[(1,)](*args, 100, BLOCK=128, **options)
        messages.append(str(error.value))
    assert not any(word in m for m in messages for word in ["blocc::", "Backend::", "to_host"])
    assert np.isnan(out).all()


@pytest.mark.parametrize("interface,match", [
    (dict(typestr=">f4"), "typestr '>f4' is not a little-endian element type"),
    (dict(mask=object()), "is a masked array"),
    # Reported before the driver is asked where the (fake) memory lives.
    (dict(typestr="<c8"), r"argument 1 'x' .*FakeCudaArray\[<c8\] has elements blocc has no type for"),
])
def test_cuda_array_interface_errors(interface, match):
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

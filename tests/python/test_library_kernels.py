"""Kernels of a user's shared library (blocc.load_library): every element
type, scalar conversions, checked mode, trace errors, and the library
loader's own errors."""

import array
import ctypes.util

import numpy as np
import pytest

import blocc
from conftest import poisoned

DTYPES = {
    "bool": np.bool_, "i8": np.int8, "u8": np.uint8, "i16": np.int16,
    "u16": np.uint16, "i32": np.int32, "u32": np.uint32, "i64": np.int64,
    "u64": np.uint64, "f16": np.float16, "f32": np.float32, "f64": np.float64,
}


def random_array(rng, n, dtype):
    dtype = np.dtype(dtype)
    if dtype == np.bool_:
        return rng.integers(0, 2, n).astype(np.bool_)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        values = rng.integers(info.min, info.max, n, dtype=dtype, endpoint=True)
        values[:2] = [info.min, info.max][: min(n, 2)] if n >= 2 else values[:2]
        return values
    return rng.standard_normal(n).astype(dtype)


def test_library_lists_its_kernels(test_library):
    names = set(test_library.kernels)
    assert {f"copy_{t}" for t in DTYPES} <= names
    assert {"store_scalars", "spin", "read_past_end", "bad_mask"} <= names
    assert test_library.blocc_version == blocc.__version__
    assert test_library["spin"] is test_library.spin
    with pytest.raises(AttributeError, match="exports no kernel named 'nope'"):
        test_library.nope
    # Loading again gives the same kernels.
    again = blocc.load_library(test_library.path)
    assert again.spin.signature == test_library.spin.signature


@pytest.mark.parametrize("name", DTYPES)
@pytest.mark.parametrize("n", [1, 31, 1000])
def test_copy_every_element_type(test_library, rng, name, n):
    dtype = DTYPES[name]
    x = random_array(rng, n, dtype)
    storage = poisoned(n + 17, dtype)
    getattr(test_library, f"copy_{name}")[(blocc.cdiv(n, 256),)](x, storage, n, BLOCK=256)
    np.testing.assert_array_equal(storage[:n], x)
    np.testing.assert_array_equal(storage[n:], poisoned(17, dtype))


def test_any_buffer_protocol_object(test_library, rng):
    values = rng.integers(-1000, 1000, 77).tolist()
    x = array.array("i", values)
    out = bytearray(4 * 77)
    test_library.copy_i32[(1,)](x, memoryview(out).cast("i"), 77, BLOCK=128)
    assert array.array("i", bytes(out)).tolist() == values


def test_misaligned_arrays_are_their_own_specialization(test_library, rng):
    x = rng.standard_normal(1001).astype(np.float32)
    out = poisoned(1001, np.float32)
    before = test_library.copy_f32.num_specializations
    test_library.copy_f32[(4,)](x[1:], out[1:], 1000, BLOCK=256)
    np.testing.assert_array_equal(out[1:], x[1:])
    assert np.isnan(out[0])
    assert test_library.copy_f32.num_specializations == before + 1


def store_scalars(lib, *args, **kwargs):
    out = poisoned(6, np.float64)
    lib.store_scalars[(1,)](out, *args, **kwargs)
    return out.tolist()


def test_scalars_by_position_and_keyword(test_library):
    want = [-123456.0, float(np.float32(0.1)), 2.0**40 + 1, np.pi, 7.0, 2.5]
    assert store_scalars(test_library, -123456, 0.1, 2**40 + 1, np.pi, 7, 2.5) == want
    assert store_scalars(test_library, d_f64=np.pi, c_i64=2**40 + 1, b_f32=0.1,
                         a_i32=-123456, F=2.5, K=7) == want


def test_numpy_scalars_and_bools(test_library):
    got = store_scalars(test_library, np.int16(-5), np.float32(1.5), np.uint32(7),
                        np.float16(0.5), True, np.float64(-3.25))
    assert got == [-5.0, 1.5, 7.0, 0.5, 1.0, -3.25]
    # An int where a float is expected is converted; a float where an int
    # is expected is an error.
    assert store_scalars(test_library, 1, 2, 3, 4, 5, 6) == [1, 2, 3, 4, 5, 6]
    with pytest.raises(blocc.Error, match=r"argument 6 'K' \(bl::Const<i32>\): expected "
                                          r"an integer, got the float 5\.5$"):
        store_scalars(test_library, 1, 2, 3, 4, 5.5, 6)
    # Floats of a new value are a new specialization of a constant.
    before = test_library.store_scalars.num_specializations
    assert store_scalars(test_library, 1, 2, 3, 4, 5, 6.5)[5] == 6.5
    assert test_library.store_scalars.num_specializations == before + 1


def test_checked_mode_reports_out_of_bounds(test_library, rng, monkeypatch):
    n = 50
    x = rng.standard_normal(n).astype(np.float32)
    for options in [dict(check=True), dict(check="bounds"), dict(check="races"),
                    dict(backend="interpreter")]:
        out = poisoned(n, np.float32)
        with pytest.raises(blocc.Error, match="kernel 'read_past_end', program .* "
                                              "out-of-bounds load: lane 49"):
            test_library.read_past_end[(1,)](x, out, n, BLOCK=64, **options)
    monkeypatch.setenv("BLOCC_CHECK", "1")
    with pytest.raises(blocc.Error, match="out-of-bounds load"):
        test_library.read_past_end[(1,)](x, out, n, BLOCK=64)
    # check=False overrides BLOCC_CHECK; reading within the array is fine.
    out = poisoned(n, np.float32)
    test_library.read_past_end[(1,)](x, out, n - 1, BLOCK=64, check=False)
    np.testing.assert_array_equal(out[: n - 1], x[1:])


def test_trace_errors_name_the_kernels_line(test_library):
    x = np.zeros(16, np.float32)
    with pytest.raises(blocc.Error, match=r"^test_kernels\.cpp:\d+: error: bl::store: "
                                          r"shapes \[16\] and \[32\] cannot be broadcast"):
        test_library.bad_mask[(1,)](x, BLOCK=16)
    assert (x == 0).all()


def test_load_library_errors(tmp_path):
    with pytest.raises(blocc.Error, match=r"blocc.load_library\('.*/missing.so'\): .*"
                                          "No such file"):
        blocc.load_library(tmp_path / "missing.so")
    not_a_library = tmp_path / "text.so"
    not_a_library.write_text("hello")
    with pytest.raises(blocc.Error, match="text.so.*(invalid ELF|too short|file too short)"):
        blocc.load_library(not_a_library)
    libm = ctypes.util.find_library("m")
    with pytest.raises(blocc.Error, match="exports no kernels .*BLOCC_EXPORT_KERNELS"):
        blocc.load_library(libm)

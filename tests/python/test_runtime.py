"""The package's runtime queries: backends, GPUs, the compile cache, and
Triton's helpers."""

import os

import numpy as np
import pytest

import blocc
from blocc.kernels import add


def test_version_and_helpers():
    assert blocc.__version__.count(".") == 2
    assert [blocc.cdiv(n, 4) for n in (0, 1, 4, 5, 9)] == [0, 1, 1, 2, 3]
    assert [blocc.next_power_of_2(n) for n in (0, 1, 2, 3, 781, 1024, 1025)] == \
        [1, 1, 2, 4, 1024, 1024, 2048]


def test_backends():
    built = blocc.backends()
    assert built["interpreter"] is True
    assert blocc.host_backend("interpreter") == "reference interpreter"
    if built["cpu"]:
        assert blocc.host_backend("cpu").startswith("CPU backend (")
        assert blocc.host_backend().startswith("CPU backend (")
    else:
        with pytest.raises(blocc.Error, match="CPU backend is not part of this build"):
            blocc.host_backend("cpu")
    with pytest.raises(blocc.Error, match="names no host backend"):
        blocc.host_backend("gpu")


def test_gpu_queries_agree():
    count = blocc.cuda.device_count()
    assert blocc.cuda.is_available() == (count > 0)
    if count == 0:
        assert blocc.cuda.unavailable_reason() != ""
        with pytest.raises(blocc.Error):
            blocc.cuda.get_device_name(0)
    else:
        assert blocc.cuda.unavailable_reason() == ""
        for ordinal in range(count):
            assert blocc.cuda.get_device_name(ordinal)
            major, minor = blocc.cuda.get_device_capability(ordinal)
            assert major >= 5 and minor >= 0
            assert blocc.cuda.get_device_properties(ordinal)["multiprocessors"] > 0


@pytest.mark.skipif(not blocc.backends()["cpu"], reason="the disk cache is the CPU backend's")
def test_cache_directory_and_clear(tmp_path, monkeypatch):
    assert blocc.cache.directory() == os.environ.get("BLOCC_CACHE_DIR")
    monkeypatch.setenv("BLOCC_CACHE_DIR", os.environ.get("BLOCC_CACHE_DIR", ""))
    where = tmp_path / "cache"
    blocc.cache.set_directory(where)
    assert blocc.cache.directory() == str(where)
    # A specialization no test used: compiled now, stored in the directory.
    x = np.ones(3, np.float32)
    out = np.zeros(3, np.float32)
    add[(1,)](x, x, out, 3, BLOCK=1 << 13)
    assert (out == 2).all()
    entries = list(where.glob("*.blocc"))
    assert len(entries) >= 1
    assert blocc.cache.clear() == len(entries)
    assert list(where.glob("*.blocc")) == []
    assert blocc.cache.clear() == 0
    blocc.cache.set_directory(None)
    assert blocc.cache.directory() is None
    assert blocc.cache.clear() == 0


def test_cpp_sdk_location():
    # pip install puts the C++ SDK beside the package; the build tree's
    # package has none (its users link blocc::blocc in the build).
    try:
        include = blocc.get_include()
    except blocc.Error as e:
        assert "no C++ SDK" in str(e) and "pip install" in str(e)
        with pytest.raises(blocc.Error, match=r"no C\+\+ SDK"):
            blocc.get_cmake_dir()
        return
    assert os.path.isfile(os.path.join(include, "blocc", "blocc.h"))
    assert os.path.isfile(os.path.join(include, "blocc", "python.h"))
    assert os.path.isfile(os.path.join(blocc.get_cmake_dir(), "blocc-config.cmake"))

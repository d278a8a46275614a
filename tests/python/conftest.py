"""Shared fixtures of the Python binding tests (run by CTest's `python`
test, which sets the environment: PYTHONPATH to the build tree's package,
BLOCC_PYTHON_TEST_LIBRARY, BLOCC_PYTHON_TUTORIAL_BUILD_DIR, and a
compile cache directory of its own).

Inputs are random and differ in every run; BLOCC_TEST_SEED=<the seed in
the report header> repeats a run's inputs.
"""

import os
import random
import zlib

import numpy as np
import pytest

import blocc

SEED = int(os.environ.get("BLOCC_TEST_SEED") or random.SystemRandom().randrange(2**32))


def pytest_report_header(config):
    return [f"BLOCC_TEST_SEED={SEED}", f"blocc {blocc.__version__}: {blocc.host_backend()}"]


@pytest.fixture
def rng(request):
    """A generator of its own per test, from the run's seed."""
    return np.random.default_rng([SEED, zlib.crc32(request.node.nodeid.encode())])


def _environment_path(name):
    path = os.environ.get(name)
    if not path:
        pytest.fail(f"${name} is not set: run these tests through CTest "
                    "(ctest -R '^python$'), which builds and names what they load")
    return path


@pytest.fixture(scope="session")
def test_library():
    """tests/python/kernels/test_kernels.cpp, loaded with blocc.load_library."""
    return blocc.load_library(_environment_path("BLOCC_PYTHON_TEST_LIBRARY"))


@pytest.fixture(scope="session")
def tutorial_build_dir():
    return _environment_path("BLOCC_PYTHON_TUTORIAL_BUILD_DIR")


def poisoned(shape, dtype):
    """An output array filled with values no kernel computes here."""
    out = np.empty(shape, dtype)
    if np.issubdtype(out.dtype, np.floating):
        out.fill(np.nan)
    elif out.dtype == np.bool_:
        out.fill(True)
    else:
        out.fill(np.iinfo(out.dtype).max)
    return out


def pytest_sessionfinish(session, exitstatus):
    # A run in which every test was skipped tested nothing: fail it.
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    passed = len(reporter.stats.get("passed", [])) if reporter else 0
    if exitstatus == 0 and passed == 0:
        print("\nconftest: no test passed (all skipped?): failing the run")
        session.exitstatus = 1

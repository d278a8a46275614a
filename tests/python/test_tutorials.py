"""The Python tutorials (tutorials/python) run and pass."""

import os
import subprocess
import sys

import pytest

TUTORIALS = os.path.join(os.path.dirname(__file__), "..", "..", "tutorials", "python")


@pytest.mark.parametrize("script,needs_build_dir", [
    ("01_vector_add.py", False),
    ("02_fused_softmax.py", False),
    ("04_low_memory_dropout.py", False),
    ("load_library.py", True),
    ("export_kernel.py", True),
])
def test_tutorial(script, needs_build_dir, tutorial_build_dir):
    args = [sys.executable, os.path.join(TUTORIALS, script)]
    if script == "load_library.py":
        args.append(os.path.join(tutorial_build_dir, "libmy_kernels.so"))
    elif needs_build_dir:
        args.append(tutorial_build_dir)
    result = subprocess.run(args, capture_output=True, text=True, timeout=600)
    name = os.path.splitext(script)[0]
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.rstrip().endswith(f"{name}: PASSED"), result.stdout

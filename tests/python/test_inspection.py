"""kernel.asm: the text of each compilation stage of a specialization
(blocc's IR as traced and after the generic passes, the GPU layouts, LLVM
IR, PTX, x86 assembly), compiled without running (PTX without a GPU); and
BLOCC_DUMP, which prints the same texts as a launch compiles."""

import os
import re
import shutil
import subprocess
import sys

import numpy as np
import pytest

import blocc
from blocc.kernels import add, softmax

needs_gpu_compiler = pytest.mark.skipif(
    not blocc.backends()["gpu"], reason="blocc was built without the GPU backend")


def test_ir_names_the_parameters():
    text = add.asm(n=98432, BLOCK=1024, target=None)
    assert list(text) == ["traced", "ir"]
    assert text["ir"].startswith("func @add(%x: ptr<f32> {divisibility = 16}, "
                                 "%y: ptr<f32> {divisibility = 16}")
    assert "%n: i32 {divisibility = 16}" in text["ir"]
    assert "arange {end = 1024, start = 0}" in text["ir"]
    assert 'loc("vector_add.h"' in text["ir"]


def test_ir_follows_the_specialization():
    x = np.zeros(100, np.float32)
    text = add.asm(x[1:], x, x, 97, BLOCK=64, target=None)["ir"]
    assert "%x: ptr<f32>," in text  # misaligned: no divisibility
    assert "%n: i32)" in text  # 97 is not a multiple of 16
    assert "arange {end = 64" in text


@pytest.mark.skipif(not blocc.backends()["cpu"], reason="no CPU backend in this build")
def test_cpu_llvm_ir():
    text = add.asm(n=4096, BLOCK=256)
    assert list(text) == ["traced", "ir", "llir", "asm"]
    assert "define " in text["llir"] and "fadd" in text["llir"]
    assert "add.blocc:" in text["asm"]


@needs_gpu_compiler
@pytest.mark.parametrize("arch", ["sm_80", "sm_90"])
def test_ptx_without_a_gpu(arch, tmp_path):
    text = softmax.asm(x_row_stride=1024, out_row_stride=1024, n_rows=64,
                       n_cols=1000, BLOCK=1024, target=arch, num_warps=8)
    assert list(text) == ["traced", "ir", "layouts", "llir", "ptx"]
    assert text["layouts"].startswith("// layouts of softmax for 8 warps:\n"
                                      "//   #blocked0 = blocked<")
    assert "stores from #blocked0" in text["layouts"]
    assert f".target {arch}" in text["ptx"]
    assert ".entry softmax(" in text["ptx"]
    assert ".maxntid 256" in text["ptx"]  # 8 warps
    assert "nvvm" in text["llir"] or "ptx_kernel" in text["llir"]
    if shutil.which("ptxas"):
        ptx = tmp_path / "softmax.ptx"
        ptx.write_text(text["ptx"])
        subprocess.run(["ptxas", f"-arch={arch}", str(ptx), "-o", str(tmp_path / "out.cubin")],
                       check=True)


@needs_gpu_compiler
@pytest.mark.parametrize("stages", [2, 3, 4])
def test_ptx_follows_num_stages(stages):
    # A pipelined matmul loop waits for all but the copies of the stages
    # still ahead of the one it reads: num_stages - 2 groups.
    from blocc.kernels import matmul
    ptx = matmul.asm(None, None, None, 512, 512, 512, 512, 1, 512, 1, 512, 1,
                     BLOCK_M=128, BLOCK_N=128, BLOCK_K=64, GROUP_M=8,
                     target="sm_90a", num_warps=4, num_stages=stages)["ptx"]
    assert f"cp.async.wait_group {stages - 2};" in ptx


@needs_gpu_compiler
def test_inspection_errors():
    with pytest.raises(blocc.Error, match="sm_70.*sm_80, sm_86, sm_89, sm_90, sm_90a"):
        add.asm(n=1, BLOCK=64, target="sm_70")
    with pytest.raises(blocc.Error, match="num_warps must be a power of two from 1 to 32"):
        add.asm(n=1, BLOCK=64, target="sm_90", num_warps=64)
    with pytest.raises(blocc.Error, match="target=3: expected 'cpu', a GPU architecture"):
        add.asm(n=1, BLOCK=64, target=3)
    with pytest.raises(blocc.Error, match="missing argument 'n'"):
        add.asm(BLOCK=64)
    with pytest.raises(blocc.Error, match="no parameter named 'check'"):
        add.asm(n=1, BLOCK=64, check=True)


def dumped(code, stages):
    """What BLOCC_DUMP=`stages` prints on stderr while a fresh Python runs
    `code`: {(stage, kernel): text}, from its '// ===== blocc:' headers."""
    env = dict(os.environ, BLOCC_DUMP=stages, BLOCC_CACHE_DIR="off")
    run = subprocess.run([sys.executable, "-c", code], env=env, text=True,
                         capture_output=True, check=True)
    parts = re.split(r"^// ===== blocc: (\w+) of kernel '(\w+)'.*\n", run.stderr,
                     flags=re.M)
    assert parts[0] == "", run.stderr
    return {(parts[i], parts[i + 1]): parts[i + 2] for i in range(1, len(parts), 3)}


@pytest.mark.skipif(not blocc.backends()["cpu"], reason="no CPU backend in this build")
def test_blocc_dump_prints_what_asm_returns():
    code = ("import numpy as np\n"
            "from blocc.kernels import add\n"
            "x = np.ones(5000, np.float32)\n"
            "add[(5,)](x, x, x, 5000, BLOCK=1024)\n")
    printed = dumped(code, "asm,ir,llir")
    want = add.asm(n=5000, BLOCK=1024, target="cpu")
    assert list(printed) == [("ir", "add"), ("llir", "add"), ("asm", "add")]
    for (stage, _), text in printed.items():
        assert text == want[stage], stage


def test_blocc_dump_names_the_valid_stages():
    code = ("import numpy as np\n"
            "from blocc.kernels import add\n"
            "x = np.ones(10, np.float32)\n"
            "add[(1,)](x, x, x, 10, BLOCK=64)\n")
    env = dict(os.environ, BLOCC_DUMP="ir,ttgir")
    run = subprocess.run([sys.executable, "-c", code], env=env, text=True,
                         capture_output=True)
    assert run.returncode != 0
    assert ("BLOCC_DUMP='ir,ttgir': 'ttgir' is not a stage; expected a "
            "comma-separated list of traced, ir, layouts, llir, ptx, asm") in run.stderr

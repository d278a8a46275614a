"""The machine code of blocc's and Triton's tutorial kernels side by side,
without a GPU: each kernel compiled for sm_90a (blocc through kernel.asm,
Triton through triton.compile for a GPUTarget), assembled by ptxas and read
back with cuobjdump. Prints per kernel its registers and spills, and per
loop (a backward branch) its instructions, tensor-core MMAs (HGMMA), how
many groups they complete in (an HGMMA marked gsb0 ends one), warpgroup
fences (WARPGROUP.ARRIVE), barriers and copies. What it shows is where the
instructions go, not time: ratios still come from gpu_sweep.py on a GPU.

    python3 benchmarks/tutorials/sass_compare.py [--kernels attention,matmul,...]
        [--events]

With --events, each loop's MMAs, fences, waits, barriers and copies in
order instead, the other instructions between two of them counted.

Needs the blocc Python module, triton (pip install triton: it compiles
without a GPU), ptxas, and cuobjdump with nvdisasm (scripts/install-deps
fetches both into ~/.cache/blocc/cuda-tools, which this script also looks
in).
"""

import argparse
import collections
import importlib.util
import os
import re
import shutil
import subprocess
import sys
import tempfile

from blocc import kernels as B

HERE = os.path.dirname(os.path.abspath(__file__))
TOOLS = os.path.join(os.environ.get("XDG_CACHE_HOME",
                                    os.path.expanduser("~/.cache")),
                     "blocc", "cuda-tools")
os.environ["PATH"] = TOOLS + os.pathsep + os.environ["PATH"]


def triton_kernels():
    spec = importlib.util.spec_from_file_location(
        "triton_kernels", os.path.join(HERE, "triton_kernels.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def triton_ptx(fn, signature, constants, num_warps, num_stages, aligned=()):
    import triton
    from triton.backends.compiler import GPUTarget
    from triton.compiler import ASTSource
    attrs = {(i,): [["tt.divisibility", 16]] for i in aligned}
    source = ASTSource(fn=fn, signature=signature, constexprs=constants,
                       attrs=attrs)
    compiled = triton.compile(source, target=GPUTarget("cuda", 90, 32),
                              options={"num_warps": num_warps,
                                       "num_stages": num_stages})
    return compiled.asm["ptx"]


def machine_code(ptx):
    """(ptxas -v's report, cuobjdump -sass's listing) of `ptx` for sm_90a."""
    with tempfile.TemporaryDirectory() as tmp:
        source, cubin = os.path.join(tmp, "k.ptx"), os.path.join(tmp, "k.cubin")
        with open(source, "w") as f:
            f.write(ptx)
        report = subprocess.run(["ptxas", "-arch=sm_90a", "-v", source, "-o",
                                 cubin], capture_output=True, text=True,
                                check=True).stderr
        sass = subprocess.run(["cuobjdump", "-sass", cubin],
                              capture_output=True, text=True,
                              check=True).stdout
    return report, sass


def instructions(sass):
    """(address, opcode, text) of each instruction, predicates dropped."""
    out = []
    for line in sass.splitlines():
        m = re.match(r"\s*/\*([0-9a-f]{4,})\*/\s+(.*?);", line)
        if not m:
            continue
        words = m.group(2).split()
        if words and words[0].startswith("@"):
            words = words[1:]
        if words:
            out.append((int(m.group(1), 16), words[0], m.group(2)))
    return out


def loops(code):
    """The instructions of each loop: from a backward branch's target to
    the branch."""
    found = []
    for address, op, text in code:
        m = re.search(r"0x([0-9a-f]+)", text) if op.startswith("BRA") else None
        if m and int(m.group(1), 16) < address:
            start = int(m.group(1), 16)
            found.append([c for c in code if start <= c[0] <= address])
    return found


def summary(ptx):
    report, sass = machine_code(ptx)
    registers = re.search(r"Used (\d+) registers", report).group(1)
    spills = re.search(r"(\d+) bytes spill stores", report).group(1)
    lines = [f"  {registers} registers, {spills} bytes spilled"]
    for body in loops(instructions(sass)):
        ops = collections.Counter(op.split(".")[0] for _, op, _ in body)
        groups = sum(1 for _, op, text in body
                     if op.startswith("HGMMA") and "gsb0" in text)
        arrives = sum(1 for _, op, _ in body if op == "WARPGROUP.ARRIVE")
        lines.append(
            f"  loop of {len(body)} instructions: HGMMA {ops['HGMMA']} in "
            f"{groups} groups, {arrives} fences, BAR {ops['BAR']}, copies "
            f"LDGSTS {ops['LDGSTS']} LDG {ops['LDG']} STS {ops['STS']} "
            f"UTMALDG {ops['UTMALDG']}; MUFU {ops['MUFU']} FSETP "
            f"{ops['FSETP']} FADD {ops['FADD']} FMUL {ops['FMUL']} FFMA "
            f"{ops['FFMA']} integer {ops['IMAD'] + ops['IADD3'] + ops['LOP3']}")
    return "\n".join(lines)


# The instructions that order a loop's work: tensor-core MMAs and their
# fences and waits, barriers, copies into shared memory and their waits.
EVENTS = ("HGMMA", "WARPGROUP", "BAR", "LDGSTS", "LDGDEPBAR", "DEPBAR",
          "MEMBAR", "FENCE", "SYNCS", "UTMALDG")


def events(ptx):
    """Each loop's ordering instructions in order, the other instructions
    between two of them counted by opcode: where the MMAs wait, and what
    runs while they are in flight."""
    _, sass = machine_code(ptx)
    lines = []
    for body in loops(instructions(sass)):
        lines.append(f"  loop of {len(body)} instructions:")
        between = collections.Counter()
        for _, op, text in body:
            if op.split(".")[0] not in EVENTS:
                between[op.split(".")[0]] += 1
                continue
            if between:
                lines.append("      (" + ", ".join(
                    f"{n} {name}" for name, n in between.most_common()) + ")")
                between.clear()
            lines.append("    " + text)
    return "\n".join(lines)


def attention(T, dim, block_m, block_n, warps, stages):
    blocc_ptx = B.attention.asm(
        None, None, None, None, 4096, 0.125, HEAD_DIM=dim, CAUSAL=False,
        BLOCK_M=block_m, BLOCK_N=block_n, num_warps=warps,
        num_stages=stages, target="sm_90a")["ptx"]
    signature = {"q_ptr": "*fp16", "k_ptr": "*fp16", "v_ptr": "*fp16",
                 "out_ptr": "*fp16", "seq_len": "i32", "scale": "fp32",
                 "HEAD_DIM": "constexpr", "BLOCK_M": "constexpr",
                 "BLOCK_N": "constexpr", "CAUSAL": "constexpr"}
    constants = {"HEAD_DIM": dim, "BLOCK_M": block_m, "BLOCK_N": block_n,
                 "CAUSAL": False}
    return blocc_ptx, triton_ptx(T.attention, signature, constants, warps,
                                 stages, aligned=(0, 1, 2, 3, 4))


def attention_backward(kernel, T, dim, block_m, block_n, warps, stages):
    """One of the backward kernels (dkdv or dq), whose first arguments are
    q, k, v, dout, lse, delta and then the gradients it writes."""
    gradients = {"dkdv": ("dk_ptr", "dv_ptr"), "dq": ("dq_ptr",)}[kernel]
    blocc_kernel = getattr(B, "attention_bwd_" + kernel)
    blocc_ptx = blocc_kernel.asm(
        *([None] * (6 + len(gradients))), 4096, 0.125, HEAD_DIM=dim,
        CAUSAL=False, BLOCK_M=block_m, BLOCK_N=block_n, num_warps=warps,
        num_stages=stages, target="sm_90a")["ptx"]
    pointers = ["q_ptr", "k_ptr", "v_ptr", "dout_ptr"]
    signature = {name: "*fp16" for name in pointers}
    signature.update({"lse_ptr": "*fp32", "delta_ptr": "*fp32"})
    signature.update({name: "*fp16" for name in gradients})
    signature.update({"seq_len": "i32", "scale": "fp32",
                      "HEAD_DIM": "constexpr", "BLOCK_M": "constexpr",
                      "BLOCK_N": "constexpr", "CAUSAL": "constexpr"})
    constants = {"HEAD_DIM": dim, "BLOCK_M": block_m, "BLOCK_N": block_n,
                 "CAUSAL": False}
    return blocc_ptx, triton_ptx(
        getattr(T, "attention_bwd_" + kernel), signature, constants, warps,
        stages, aligned=tuple(range(6 + len(gradients))))


def matmul(T, block_m, block_n, block_k, warps, stages):
    n = 4096
    blocc_ptx = B.matmul.asm(
        None, None, None, n, n, n, n, 1, n, 1, n, 1, BLOCK_M=block_m,
        BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=8, num_warps=warps,
        num_stages=stages, target="sm_90a")["ptx"]
    signature = {"a_ptr": "*fp16", "b_ptr": "*fp16", "c_ptr": "*fp32",
                 "M": "i32", "N": "i32", "K": "i32", "stride_am": "i32",
                 "stride_ak": "constexpr", "stride_bk": "i32",
                 "stride_bn": "constexpr", "stride_cm": "i32",
                 "stride_cn": "constexpr", "BLOCK_M": "constexpr",
                 "BLOCK_N": "constexpr", "BLOCK_K": "constexpr",
                 "GROUP_M": "constexpr"}
    constants = {"stride_ak": 1, "stride_bn": 1, "stride_cn": 1,
                 "BLOCK_M": block_m, "BLOCK_N": block_n, "BLOCK_K": block_k,
                 "GROUP_M": 8}
    return blocc_ptx, triton_ptx(T.matmul, signature, constants, warps,
                                 stages, aligned=(0, 1, 2, 3, 4, 5, 6, 8, 10))


# name: (builder, its configurations)
KERNELS = {
    "attention": (attention, [(64, 64, 64, 4, 2), (64, 128, 64, 4, 2),
                              (128, 128, 128, 8, 3), (128, 64, 64, 4, 2)]),
    "matmul": (matmul, [(128, 256, 64, 8, 4), (128, 128, 64, 4, 3)]),
    # The sweep's fastest backward configurations on an H100.
    "attention_bwd_dkdv": (
        lambda T, *c: attention_backward("dkdv", T, *c),
        [(64, 32, 128, 4, 3), (128, 64, 128, 8, 2)]),
    "attention_bwd_dq": (
        lambda T, *c: attention_backward("dq", T, *c),
        [(64, 128, 32, 4, 3), (128, 128, 64, 8, 3)]),
}


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernels", default=",".join(KERNELS))
    parser.add_argument("--events", action="store_true",
                        help="each loop's MMAs, waits, barriers and copies "
                             "in order instead of the counts")
    args = parser.parse_args()
    report = events if args.events else summary
    missing = [t for t in ("ptxas", "cuobjdump", "nvdisasm")
               if not shutil.which(t)]
    if missing:
        sys.exit(f"sass_compare: not on PATH: {', '.join(missing)} (ptxas "
                 "from the CUDA toolkit; scripts/install-deps fetches the "
                 "others)")
    T = triton_kernels()
    for name in args.kernels.split(","):
        build, configs = KERNELS[name]
        for config in configs:
            blocc_ptx, peer_ptx = build(T, *config)
            print(f"{name} {config}")
            print(" blocc\n" + report(blocc_ptx))
            print(" triton\n" + report(peer_ptx))


if __name__ == "__main__":
    main()

"""The GPU IR says everything the lowering follows: for every kernel of
the .bir files in this directory, the PTX of its GPU IR, printed by
`blocc-opt --pipeline=gpu` and read back, is the PTX of the kernel lowered
directly, byte for byte, for sm_80 and sm_90, 4 and 8 warps, 1 and 3
stages.

Each kernel (a piece between `// -----` lines) is compared alone. Kernels
the direct path rejects (the error tests) are skipped. Kernels that are GPU
IR already (an engine, stages or layouts) get only their layouts
(gpu-assign-layouts, where they have none), as the backend gives them. Where the stages chosen leave too little shared memory, the
direct path compiles the kernel unpipelined: so is its GPU IR, chosen for
one stage.

usage: gpu_ir_roundtrip.py BLOCC_OPT DIRECTORY
"""
import concurrent.futures
import glob
import itertools
import os
import re
import subprocess
import sys

ARCHS = ["sm_80", "sm_90"]
WARPS = [4, 8]
STAGES = [1, 3]


def run(opt, args, text):
    done = subprocess.run([opt] + args + ["-"], input=text, text=True,
                          capture_output=True)
    return done.returncode, done.stdout, done.stderr


def pieces(path):
    with open(path) as f:
        text = f.read()
    for piece in re.split(r"^// -----$", text, flags=re.M):
        if "func @" in piece:
            yield piece


def check(opt, path, index, piece, arch, warps, stages):
    """"same" where both paths agree, "skipped" where the direct path
    rejects the kernel, else what differs."""
    options = [f"--arch={arch}", f"--num-warps={warps}"]
    rc, direct, _ = run(opt, ["--emit-ptx"] + options +
                        [f"--num-stages={stages}"], piece)
    if rc != 0:
        return "skipped"
    code = re.sub(r"//.*", "", piece)
    gpu_ir = re.search(r"\b(engine|num_stages|home|layouts?) = ", code)
    for chosen in [stages, 1]:
        passes = (["--pass=gpu-assign-layouts"] if gpu_ir
                  else ["--pipeline=gpu"])
        rc, text, err = run(opt, passes + options +
                            [f"--num-stages={chosen}"], piece)
        if rc != 0:
            return f"--pipeline=gpu failed: {err.strip()}"
        rc, staged, err = run(opt, ["--emit-ptx"] + options, text)
        if rc == 0:
            break
        if "shared memory" not in err or chosen == 1:
            return f"its GPU IR does not lower: {err.strip()}"
    if staged != direct:
        return "the PTX differs"
    return "same"


def main():
    opt, directory = sys.argv[1], sys.argv[2]
    jobs = []
    for path in sorted(glob.glob(os.path.join(directory, "*.bir"))):
        for index, piece in enumerate(pieces(path)):
            for arch, warps, stages in itertools.product(ARCHS, WARPS,
                                                         STAGES):
                jobs.append((path, index, piece, arch, warps, stages))
    counts = {"same": 0, "skipped": 0}
    with concurrent.futures.ThreadPoolExecutor(os.cpu_count()) as pool:
        results = pool.map(lambda job: check(opt, *job), jobs)
        for job, outcome in zip(jobs, results):
            if outcome in counts:
                counts[outcome] += 1
                continue
            path, index, _, arch, warps, stages = job
            print(f"{os.path.basename(path)} kernel {index} {arch} "
                  f"{warps} warps {stages} stages: {outcome}")
    failures = len(jobs) - counts["same"] - counts["skipped"]
    print(f"{counts['same']} kernels and configurations give the same PTX "
          f"both ways, {failures} do not, {counts['skipped']} are errors")
    # A run that compared nothing would pass whatever the GPU IR said.
    return 1 if failures or counts["same"] < 300 else 0

if __name__ == "__main__":
    sys.exit(main())

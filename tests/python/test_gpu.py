"""Kernels on GPU memory from Python: arrays with the CUDA array interface
(tests/python/kernels/test_module.cpp's DeviceArray, so that no PyTorch is
needed), PyTorch CUDA tensors (their current stream, stream=, CUDA graphs)
where torch is installed, do_bench with CUDA events. Skipped (reported as
skipped) without a GPU; run where one is by
`ctest -R '^python$'` (or pytest tests/python/test_gpu.py with CTest's
environment)."""

import importlib.util

import numpy as np
import pytest

import blocc
import blocc_test_module as module
from blocc.kernels import (add, attention, attention_bwd_dkdv, attention_bwd_dq,
                           attention_bwd_preprocess, attention_fwd_lse,
                           attention_ws,
                           matmul_persistent, matmul_persistent_tma, matmul_tma,
                           matmul_tma_bf16, matmul_tma_ws, matmul_tma_ws_bf16,
                           softmax)
from conftest import poisoned
from test_shipped_kernels import (assert_matmul_within_rounding,
                                  float64_attention_backward)

pytestmark = pytest.mark.skipif(
    not blocc.cuda.is_available() or not blocc.backends()["gpu"],
    reason=f"no GPU: {blocc.cuda.unavailable_reason() or 'blocc has no GPU backend'}")

needs_torch = pytest.mark.skipif(importlib.util.find_spec("torch") is None,
                                 reason="PyTorch is not installed")


@pytest.mark.parametrize("n", [1, 97, 98431])
def test_add_on_device_arrays(rng, n):
    x, y = rng.standard_normal((2, n), dtype=np.float32)
    dx, dy = module.DeviceArray(x), module.DeviceArray(y)
    dout = module.DeviceArray(poisoned(n + 8, np.float32))
    add[(blocc.cdiv(n, 1024),)](dx, dy, dout, n, BLOCK=1024)
    out = dout.numpy()
    np.testing.assert_array_equal(out[:n], (x.astype(np.float64) + y).astype(np.float32))
    assert np.isnan(out[n:]).all()


def test_softmax_on_device_arrays(rng):
    rows, cols = 37, 781
    x = rng.uniform(-20, 20, (rows, cols)).astype(np.float32)
    dout = module.DeviceArray(poisoned((rows, cols), np.float32))
    softmax[(rows,)](dout, module.DeviceArray(x), cols, cols, rows, cols, BLOCK=1024,
                     num_warps=4)
    x64 = x.astype(np.float64)
    e = np.exp(x64 - x64.max(axis=1, keepdims=True))
    want = e / e.sum(axis=1, keepdims=True)
    assert (np.abs(dout.numpy() - want) / want).max() <= 1e-5


def attention_reference(q, k, v, scale, causal):
    s = np.einsum("hid,hjd->hij", q.astype(np.float64), k.astype(np.float64))
    s *= scale
    if causal:
        s = np.where(np.tri(q.shape[1], dtype=bool), s, -np.inf)
    p = np.exp(s - s.max(-1, keepdims=True))
    return (p / p.sum(-1, keepdims=True)) @ v.astype(np.float64)


# Tutorial 06's attention on tensor cores over its configurations: blocks
# of queries and keys, warps, stages, head dimensions, causal or not (the
# CPU backend's test_attention checks the small shapes); every output
# element within the rounding of half inputs and output.
@pytest.mark.parametrize("block_m,block_n,warps", [(64, 64, 4), (128, 64, 8),
                                                   (64, 32, 4), (64, 128, 4),
                                                   (128, 128, 8)])
@pytest.mark.parametrize("dim", [64, 128])
@pytest.mark.parametrize("stages", [1, 2, 3])
@pytest.mark.parametrize("causal", [False, True])
def test_attention_on_tensor_cores(rng, block_m, block_n, warps, dim, stages,
                                   causal):
    check_attention(rng, attention, 4, 300, dim, causal, block_m, block_n,
                    warps, stages)


def check_attention(rng, kernel, heads, seq, dim, causal, block_m, block_n,
                    warps, stages, *rows, **constants):
    """`kernel` (attention, or attention_ws given `rows` and OVERLAP in
    `constants`) on fresh inputs against float64, within the rounding of
    half inputs and output."""
    q, k, v = (rng.uniform(-1, 1, (heads, seq, dim)).astype(np.float16)
               for _ in range(3))
    dout = module.DeviceArray(poisoned((heads, seq, dim), np.float16))
    scale = 1 / np.sqrt(dim)
    kernel[(blocc.cdiv(seq, block_m), heads)](
        module.DeviceArray(q), module.DeviceArray(k), module.DeviceArray(v),
        dout, seq, *rows, scale, HEAD_DIM=dim, BLOCK_M=block_m,
        BLOCK_N=block_n, CAUSAL=causal, num_warps=warps, num_stages=stages,
        **constants)
    np.testing.assert_allclose(dout.numpy().astype(np.float64),
                               attention_reference(q, k, v, scale, causal),
                               rtol=4e-3, atol=2e-3)


# attention_ws: the same forward pass, its unmasked key and value blocks
# read through tensor descriptors over all heads' rows; on an H100 TMA
# copies them, issued by a producer warpgroup where the accumulators are
# large (head dimension 128 on 8 warps; a loop of many blocks too, whose
# stages' phases wrap); 1 stage: no producer. Overlapped: each block's
# softmax runs while the previous block's second product is in flight, the
# first block and the last product outside the loop (a sequence of one
# block included).
@pytest.mark.parametrize("overlap", [False, True])
@pytest.mark.parametrize("block_m,block_n,warps", [(64, 64, 4), (128, 64, 8),
                                                   (64, 128, 4),
                                                   (128, 128, 8)])
@pytest.mark.parametrize("dim", [64, 128])
@pytest.mark.parametrize("stages", [1, 3])
@pytest.mark.parametrize("causal", [False, True])
@pytest.mark.parametrize("heads,seq", [(4, 300), (2, 2100), (3, 50)])
def test_warp_specialized_attention_on_tensor_cores(rng, overlap, block_m,
                                                    block_n, warps, dim,
                                                    stages, causal, heads,
                                                    seq):
    check_attention(rng, attention_ws, heads, seq, dim, causal, block_m,
                    block_n, warps, stages, heads * seq, OVERLAP=overlap)


# Tutorial 06's backward kernels on tensor cores in the GPU sweep's
# configurations (blocks of queries and keys, warps, stages: on an H100
# their chains of products run on warpgroup MMAs, the last product's left
# in flight into the next iteration), causal and not, over a sequence that
# no block divides; each gradient within the bound of its float64 value.
@pytest.mark.parametrize("dkdv,dq", [
    ((32, 64, 4, 2), (64, 32, 4, 2)), ((32, 64, 4, 3), (64, 64, 4, 2)),
    ((64, 128, 8, 2), (128, 64, 8, 3)), ((32, 128, 4, 3), (128, 32, 4, 3))])
@pytest.mark.parametrize("dim", [64, 128])
@pytest.mark.parametrize("causal", [False, True])
def test_attention_backward_on_tensor_cores(rng, dkdv, dq, dim, causal):
    heads, seq = 3, 300
    q, k, v, dout = (rng.uniform(-1, 1, (heads, seq, dim)).astype(np.float16)
                     for _ in range(4))
    scale = 1 / np.sqrt(dim)
    inputs = [module.DeviceArray(x) for x in (q, k, v, dout)]
    out = module.DeviceArray(poisoned((heads, seq, dim), np.float16))
    lse, delta = (module.DeviceArray(poisoned((heads, seq), np.float32))
                  for _ in range(2))
    grads = {name: module.DeviceArray(poisoned((heads, seq, dim), np.float16))
             for name in ("dq", "dk", "dv")}
    meta = dict(HEAD_DIM=dim, CAUSAL=causal)
    attention_fwd_lse[(blocc.cdiv(seq, 64), heads)](
        *inputs[:3], out, lse, seq, scale, BLOCK_M=64, BLOCK_N=64, num_warps=4,
        **meta)
    attention_bwd_preprocess[(blocc.cdiv(heads * seq, 64),)](
        out, inputs[3], delta, heads * seq, HEAD_DIM=dim, BLOCK_M=64)
    block_m, block_n, warps, stages = dkdv
    attention_bwd_dkdv[(blocc.cdiv(seq, block_n), heads)](
        *inputs, lse, delta, grads["dk"], grads["dv"], seq, scale,
        BLOCK_M=block_m, BLOCK_N=block_n, num_warps=warps, num_stages=stages,
        **meta)
    block_m, block_n, warps, stages = dq
    attention_bwd_dq[(blocc.cdiv(seq, block_m), heads)](
        *inputs, lse, delta, grads["dq"], seq, scale, BLOCK_M=block_m,
        BLOCK_N=block_n, num_warps=warps, num_stages=stages, **meta)
    _, _, want = float64_attention_backward(q, k, v, dout, scale, causal,
                                            out.numpy())
    for name, got in grads.items():
        expected, bound = want[name]
        error = np.abs(got.numpy().astype(np.float64) - expected)
        assert np.all(error <= bound), (
            f"{name}: largest error {np.nanmax(error / bound):.3g} of its bound")


# Tutorial 03's persistent matmul on tensor cores (on an H100, wgmma) in
# the GPU sweep's tile configurations and tutorial 03's: one program for
# every tile, counts that do not divide the tiles, and more programs than
# tiles; each program runs its pipelined K loop for tile after tile. Read
# through descriptors, the tiles of rows of a multiple of 16 bytes go by TMA
# (1104 x 336), the others through pointers (1100 x 333).
@pytest.mark.parametrize("block_m,block_n,block_k,warps,stages", [
    (128, 128, 64, 4, 3), (128, 256, 64, 8, 4), (64, 128, 64, 4, 4),
    (64, 64, 32, 4, 3), (128, 128, 32, 4, 3)])
@pytest.mark.parametrize("programs", [1, 7, 200])
@pytest.mark.parametrize("kernel", [matmul_persistent, matmul_persistent_tma],
                         ids=["pointers", "descriptors"])
@pytest.mark.parametrize("n,k", [(1100, 333), (1104, 336)])
def test_matmul_persistent_on_tensor_cores(rng, block_m, block_n, block_k,
                                           warps, stages, programs, kernel, n,
                                           k):
    m = 1000
    a = rng.uniform(-1, 1, (m, k)).astype(np.float16)
    b = rng.uniform(-1, 1, (k, n)).astype(np.float16)
    dc = module.DeviceArray(poisoned((m, n), np.float32))
    kernel[(programs,)](
        module.DeviceArray(a), module.DeviceArray(b), dc, m, n, k, k, 1, n, 1,
        n, 1, BLOCK_M=block_m, BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=8,
        num_warps=warps, num_stages=stages)
    assert_matmul_within_rounding(dc.numpy(), a, b)


# Tutorial 03's matmul through tensor descriptors on tensor cores: on an
# H100 the Tensor Memory Accelerator copies the tiles (sm_90a, warpgroup
# MMAs) whose rows it can copy; tails of M, N and K that its zero fill
# pads; a K whose rows are no multiple of 16 bytes (read through pointers).
# matmul_tma_ws: the same with a producer warpgroup issuing the copies
# (where the loop is pipelined and its tiles copied by TMA).
@pytest.mark.parametrize("block_m,block_n,block_k,warps,stages", [
    (128, 128, 64, 4, 3), (128, 256, 64, 8, 4), (64, 128, 64, 4, 4),
    (128, 128, 32, 4, 2), (128, 128, 64, 4, 1)])
@pytest.mark.parametrize("m,n,k", [(1000, 1104, 336), (512, 512, 512),
                                   (300, 200, 100)])
@pytest.mark.parametrize("bf16", [False, True])
@pytest.mark.parametrize("warp_specialize", [False, True])
def test_matmul_tma_on_tensor_cores(rng, block_m, block_n, block_k, warps,
                                    stages, m, n, k, bf16, warp_specialize):
    dtype = np.float32  # rounded to the input type below
    a = rng.uniform(-1, 1, (m, k)).astype(dtype)
    b = rng.uniform(-1, 1, (k, n)).astype(dtype)
    kernel = matmul_tma_ws if warp_specialize else matmul_tma
    if bf16:
        torch = pytest.importorskip("torch")
        ta = torch.from_numpy(a).to(torch.bfloat16).cuda()
        tb = torch.from_numpy(b).to(torch.bfloat16).cuda()
        a, b = ta.float().cpu().numpy(), tb.float().cpu().numpy()
        kernel = matmul_tma_ws_bf16 if warp_specialize else matmul_tma_bf16
        c = torch.full((m, n), float("nan"), device="cuda")
        args = (ta, tb, c)
    else:
        a, b = a.astype(np.float16), b.astype(np.float16)
        c = module.DeviceArray(poisoned((m, n), np.float32))
        args = (module.DeviceArray(a), module.DeviceArray(b), c)
    grid = (blocc.cdiv(m, block_m) * blocc.cdiv(n, block_n),)
    kernel[grid](*args, m, n, k, k, 1, n, 1, n, 1, BLOCK_M=block_m,
                 BLOCK_N=block_n, BLOCK_K=block_k, GROUP_M=8,
                 num_warps=warps, num_stages=stages)
    got = c.cpu().numpy() if bf16 else c.numpy()
    assert_matmul_within_rounding(got, a, b)


def test_device_errors(rng):
    x = rng.standard_normal(100, dtype=np.float32)
    dx = module.DeviceArray(x)
    out = poisoned(100, np.float32)
    with pytest.raises(blocc.Error, match=r"argument 3 'out' .*numpy.ndarray\[float32\] is "
                                          r"host memory, but the launch runs on the GPU; "
                                          r"pass GPU memory \(a CUDA tensor"):
        add[(1,)](dx, dx, out, 100, BLOCK=128)
    with pytest.raises(blocc.Error, match=r"argument 1 'x' .* lives on GPU 0, but the launch "
                                          r"asks for the CPU backend, which runs on host "
                                          r"memory; launch with backend='gpu' or 'auto'"):
        add[(1,)](dx, dx, module.DeviceArray(out), 100, BLOCK=128, backend="cpu")
    with pytest.raises(blocc.Error, match=r"argument 3 'out' .* is read-only, but the kernel "
                                          r"writes through it"):
        add[(1,)](dx, dx, module.DeviceArray(out, read_only=True), 100, BLOCK=128)
    assert np.isnan(out).all()


def test_two_gpus_are_an_error(rng):
    if blocc.cuda.device_count() < 2:
        pytest.skip("one GPU")
    x = rng.standard_normal(100, dtype=np.float32)
    with pytest.raises(blocc.Error, match="lives on GPU 1, but .* lives on GPU 0"):
        add[(1,)](module.DeviceArray(x, 0), module.DeviceArray(x, 1),
                  module.DeviceArray(x, 0), 100, BLOCK=128)


def test_do_bench_with_cuda_events(rng):
    n = 1 << 20
    x = module.DeviceArray(rng.standard_normal(n, dtype=np.float32))
    out = module.DeviceArray(np.zeros(n, np.float32))
    q = blocc.testing.do_bench(lambda: add[(n // 1024,)](x, x, out, n, BLOCK=1024),
                               device="cuda", quantiles=[0.5, 0.2, 0.8], rep=20)
    assert 0 < q[1] <= q[0] <= q[2] < 100


@needs_torch
def test_torch_tensors(rng):
    import torch
    n = 65537
    x = torch.randn(n, device="cuda")
    y = torch.randn(n, device="cuda", requires_grad=True)  # read as Triton does
    out = torch.full_like(x, float("nan"))
    add[lambda meta: (blocc.cdiv(n, meta["BLOCK"]),)](x, y, out, n, BLOCK=1024)
    torch.testing.assert_close(out, (x.double() + y.detach().double()).float(), rtol=0, atol=0)
    h = torch.randn(7, 300, dtype=torch.float32).cuda()
    hout = torch.empty_like(h)
    softmax[(7,)](hout, h, 300, 300, 7, 300, BLOCK=512)
    torch.testing.assert_close(hout, torch.softmax(h.double(), dim=1).float())


@needs_torch
def test_torch_profiler_shows_the_kernels_name():
    """The PTX entry is the kernel's own name, which CUPTI reports to
    torch.profiler (and Nsight)."""
    import torch
    from torch.profiler import ProfilerActivity, profile
    x = torch.randn(7, 300, device="cuda")
    out = torch.empty_like(x)
    softmax[(7,)](out, x, 300, 300, 7, 300, BLOCK=512)  # compiled and loaded
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as trace:
        softmax[(7,)](out, x, 300, 300, 7, 300, BLOCK=512)
        torch.cuda.synchronize()
    names = [event.key for event in trace.key_averages()]
    assert "softmax" in names, names


@needs_torch
def test_torch_cpu_tensors_run_on_the_cpu_backend():
    import torch
    x = torch.randn(1000)
    out = torch.empty_like(x)
    add[(1,)](x, x, out, 1000, BLOCK=1024)
    assert torch.equal(out, 2 * x)


@needs_torch
def test_torch_current_stream_and_stream_override():
    import torch
    n = 1 << 20
    x = torch.rand(n, device="cuda")
    side = torch.cuda.Stream()
    for use_override in (False, True):
        out = torch.full_like(x, float("nan"))
        torch.cuda.synchronize()
        # The default stream sleeps: a launch queued there would not have
        # run when the side stream copies its result.
        torch.cuda._sleep(1_000_000_000)
        if use_override:
            add[(n // 1024,)](x, x, out, n, BLOCK=1024, stream=side)
            with torch.cuda.stream(side):
                got = out.cpu()
        else:
            with torch.cuda.stream(side):
                add[(n // 1024,)](x, x, out, n, BLOCK=1024)
                got = out.cpu()
        torch.cuda.synchronize()
        assert torch.equal(got, (2 * x).cpu()), f"stream override: {use_override}"


@needs_torch
def test_cuda_graph_capture_and_replay():
    import torch
    n = 4096
    x = torch.rand(n, device="cuda")
    out = torch.zeros_like(x)
    add[(n // 1024,)](x, x, out, n, BLOCK=1024)  # compiled and loaded before capture
    torch.cuda.synchronize()
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        add[(n // 1024,)](x, x, out, n, BLOCK=1024)
    for _ in range(3):
        x.copy_(torch.rand(n, device="cuda"))
        out.fill_(float("nan"))
        graph.replay()
        torch.cuda.synchronize()
        assert torch.equal(out, 2 * x)

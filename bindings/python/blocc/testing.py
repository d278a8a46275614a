"""Benchmarking, as triton.testing.

    ms = blocc.testing.do_bench(lambda: add[grid](x, y, out, n, BLOCK=1024))
    p50, p20, p80 = blocc.testing.do_bench(fn, quantiles=[0.5, 0.2, 0.8])
"""

import ctypes
import glob
import os
import statistics
import sys
import time

from . import Error

__all__ = ["do_bench"]

_RETURN_MODES = ("min", "max", "mean", "median", "all")

_MIN_FLUSHED_RUNS = 10


def do_bench(fn, warmup=25, rep=100, grad_to_none=None, quantiles=None,
             return_mode="mean", *, device="cpu", flush=True, stream=None):
    """Times ``fn()`` in milliseconds, as triton.testing.do_bench does.

    ``fn`` runs once (compiling what it launches), then about ``warmup`` ms
    of untimed runs, then about ``rep`` ms of timed runs. Before each timed
    run the caches are flushed (``flush``), so that every run starts cold.

    Returns the ``quantiles`` of the run times (a list; one float for one
    quantile; linear interpolation, as torch.quantile) when given, else the
    statistic ``return_mode`` names: 'min', 'max', 'mean' (default),
    'median', or 'all' (every time, a list). ``grad_to_none``: tensors
    whose ``.grad`` is reset before each run.

    ``device='cpu'`` times kernels on the CPU backend with the host clock
    (launches there return when the kernel is done). The flush overwrites a
    buffer twice the size of the largest CPU cache; as it takes
    milliseconds, the flushes count towards the ``rep`` budget (a run of a
    few microseconds would otherwise take minutes) and at least 10 runs
    are timed.

    ``device='cuda'`` (or 'cuda:N') times GPU launches with CUDA events
    recorded on ``stream`` (a CUstream handle or torch.cuda.Stream; default:
    torch's current stream when torch is imported, else the default
    stream), and flushes the L2 with a 256 MB memset on that stream, as
    Triton does.
    """
    if return_mode not in _RETURN_MODES:
        raise Error(f"do_bench: return_mode={return_mode!r}; expected one of "
                    f"{', '.join(map(repr, _RETURN_MODES))}")
    if quantiles is not None:
        quantiles = list(quantiles)
        if not quantiles or any(not 0 <= q <= 1 for q in quantiles):
            raise Error(f"do_bench: quantiles={quantiles!r}; expected "
                        "numbers between 0 and 1")
    if device == "cpu":
        clock = _HostClock(flush)
    elif isinstance(device, str) and (device == "cuda" or device.startswith("cuda:")):
        clock = _GpuClock(device, flush, stream)
    else:
        raise Error(f"do_bench: device={device!r}; expected 'cpu', 'cuda' or 'cuda:N'")

    def run_once():
        if grad_to_none is not None:
            for tensor in grad_to_none:
                tensor.grad = None
        return clock.time(fn)

    fn()  # compiles
    clock.synchronize()
    estimate_ms = max(sum(run_once() for _ in range(5)) / 5, 1e-6)
    n_warmup = max(1, int(warmup / estimate_ms))
    n_repeat = max(clock.min_runs, int(rep / (estimate_ms + clock.flush_ms)))
    for _ in range(n_warmup):
        fn()
    times = [run_once() for _ in range(n_repeat)]
    if quantiles is not None:
        values = [_quantile(times, q) for q in quantiles]
        return values[0] if len(values) == 1 else values
    if return_mode == "all":
        return times
    return {
        "min": min,
        "max": max,
        "mean": statistics.fmean,
        "median": statistics.median,
    }[return_mode](times)


class _HostClock:
    def __init__(self, flush):
        self._flusher = _CacheFlusher() if flush else None
        self.flush_ms = self._flusher.time_ms() if flush else 0.0
        # Timed runs at least, whatever the flushes cost, so that the median
        # and the quantiles stand on more than one run.
        self.min_runs = _MIN_FLUSHED_RUNS if flush else 1

    def synchronize(self):
        pass

    def time(self, fn):
        if self._flusher:
            self._flusher.flush()
        start = time.perf_counter_ns()
        fn()
        return (time.perf_counter_ns() - start) / 1e6


class _GpuClock:
    _FLUSH_BYTES = 256 << 20

    def __init__(self, device, flush, stream):
        from . import _blocc, cuda
        if not cuda.is_available():
            raise Error(f"do_bench: device={device!r}, but no GPU is usable: "
                        f"{cuda.unavailable_reason()}")
        ordinal = cuda.current_device() if device == "cuda" else int(device[5:])
        if stream is None:
            torch = sys.modules.get("torch")
            if torch is not None and torch.cuda.is_available():
                stream = torch.cuda.current_stream(ordinal)
        if stream is not None and hasattr(stream, "cuda_stream"):
            stream = stream.cuda_stream
        self._stream = int(stream or 0)
        self._flush = flush
        self._timer = _blocc._GpuTimer(ordinal, self._FLUSH_BYTES if flush else 1)
        self._ordinal = ordinal
        # The memset runs on the stream before the start event: not timed.
        self.flush_ms = 0.0
        self.min_runs = 1

    def synchronize(self):
        from . import cuda
        cuda.synchronize(self._ordinal)

    def time(self, fn):
        if self._flush:
            self._timer.flush(self._stream)
        self._timer.start(self._stream)
        fn()
        self._timer.stop(self._stream)
        return self._timer.elapsed_ms()


def _quantile(values, q):
    """The q-quantile with linear interpolation between order statistics."""
    ordered = sorted(values)
    position = q * (len(ordered) - 1)
    below = int(position)
    above = min(below + 1, len(ordered) - 1)
    return ordered[below] + (ordered[above] - ordered[below]) * (position - below)


class _CacheFlusher:
    """Overwrites a buffer larger than the CPU's caches."""

    def __init__(self):
        self._size = 2 * _largest_cache_bytes()
        self._buffer = (ctypes.c_char * self._size)()

    def flush(self):
        # Stores only (a memset): every line of the buffer is written, which
        # evicts what the previous run left in the caches.
        ctypes.memset(self._buffer, 0, self._size)

    def time_ms(self):
        start = time.perf_counter_ns()
        for _ in range(3):
            self.flush()
        return (time.perf_counter_ns() - start) / 3e6


def _largest_cache_bytes():
    """The largest cache of CPU 0 (sysfs), at least 8 MiB, at most 256 MiB;
    32 MiB where sysfs does not say."""
    sizes = []
    for path in glob.glob("/sys/devices/system/cpu/cpu0/cache/index*/size"):
        try:
            with open(path) as f:
                text = f.read().strip()
        except OSError:
            continue
        units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
        if text and text[-1] in units and text[:-1].isdigit():
            sizes.append(int(text[:-1]) * units[text[-1]])
        elif text.isdigit():
            sizes.append(int(text))
    largest = max(sizes) if sizes else 32 << 20
    return min(max(largest, 8 << 20), 256 << 20)

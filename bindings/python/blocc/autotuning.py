"""Autotuning from Python, as @triton.autotune: the C++ blocc::autotune's
rules (frontend/README.md, "Autotuning") for kernels called from Python.

    from blocc import Config, autotune
    tuned = autotune(blocc.kernels.matmul,
                     [Config({"BLOCK_M": 64, "BLOCK_N": 64, "BLOCK_K": 32,
                              "GROUP_M": 8}, num_warps=4), ...],
                     key=["M", "N", "K"])
    grid = lambda meta: (blocc.cdiv(M, meta["BLOCK_M"]) *
                         blocc.cdiv(N, meta["BLOCK_N"]),)
    tuned[grid](a, b, c, M, N, K, ...)   # without the tuned constants

At the first launch with a new key (the key arguments' values, arrays by
dtype, plus the device and the other keyword constants) every
configuration is timed with blocc.testing.do_bench on the caller's
arguments and the fastest kept: in memory, and in the cache directory
(blocc.cache.directory(), under autotune/) for later processes.
``restore_value`` names arguments the kernel updates in place: they are
copied before tuning and put back after each configuration's runs.
BLOCC_PRINT_AUTOTUNING=1 prints each choice; ``tuned.chosen`` holds them.
"""

import hashlib
import json
import os
import sys

from . import Error, cache, testing

__all__ = ["Config", "autotune"]


class Config:
    """Constants by parameter name, and launch options."""

    def __init__(self, kwargs, num_warps=4, num_stages=3):
        self.kwargs = dict(kwargs)
        self.num_warps = num_warps
        self.num_stages = num_stages

    def __getitem__(self, name):
        return self.kwargs[name]

    def __repr__(self):
        parts = [f"{k}={v}" for k, v in self.kwargs.items()]
        parts += [f"num_warps={self.num_warps}", f"num_stages={self.num_stages}"]
        return " ".join(parts)


def autotune(kernel, configs, key, restore_value=()):
    """``kernel`` launched through the fastest of ``configs`` per ``key``."""
    return Autotuned(kernel, configs, key, restore_value)


def _device_of(value):
    device = getattr(value, "device", None)
    if getattr(device, "type", None) == "cuda":
        return f"cuda:{device.index or 0}"
    if hasattr(value, "__cuda_array_interface__"):
        return "cuda"
    return None


def _key_text(value):
    if hasattr(value, "dtype") and hasattr(value, "shape"):
        return f"*{value.dtype}"
    return repr(value)


class Autotuned:
    def __init__(self, kernel, configs, key, restore_value):
        self.kernel = kernel
        self.configs = list(configs)
        self.key = list(key)
        self.restore_value = list(restore_value)
        self.chosen = {}
        self.num_tunings = 0
        what = f"autotune of kernel '{kernel.name}'"
        names = [p[0] for p in kernel.params]
        kinds = {p[0]: p[1] for p in kernel.params}
        if not self.configs:
            raise Error(f"{what}: no configuration to choose from")
        tuned = list(self.configs[0].kwargs)
        for i, config in enumerate(self.configs):
            for name in config.kwargs:
                if name not in kinds:
                    raise Error(f"{what}: configuration {i} ({config}) names "
                                f"'{name}', which is not a parameter of the "
                                f"kernel (its parameters: {', '.join(names)})")
                if kinds[name] != "constant":
                    raise Error(f"{what}: configuration {i} sets '{name}', a "
                                f"{kinds[name]} parameter; only constants are "
                                "tuned")
            if list(config.kwargs) != tuned:
                raise Error(f"{what}: configuration {i} ({config}) sets other "
                            f"constants than configuration 0 ({', '.join(tuned)})")
        for role, listed in (("key", self.key), ("restore_value", self.restore_value)):
            for name in listed:
                if name not in kinds:
                    raise Error(f"{what}: {role} names '{name}', which is not a "
                                f"parameter of the kernel (its parameters: "
                                f"{', '.join(names)})")
                if name in tuned:
                    raise Error(f"{what}: {role} names '{name}', which the "
                                "configurations set")
        self._what = what
        self._free = [n for n in names if n not in tuned]  # positional order
        signature = repr((kernel.name, kernel.params, [repr(c) for c in self.configs]))
        self._file_name = (f"python-{kernel.name}-"
                           f"{hashlib.sha256(signature.encode()).hexdigest()[:16]}.json")
        self._loaded_from = None

    def __getitem__(self, grid):
        def launch(*args, **kwargs):
            self._launch(grid, args, kwargs)
        return launch

    # -- the choice ------------------------------------------------------
    def _file(self):
        directory = cache.directory()
        return None if directory is None else os.path.join(directory, "autotune",
                                                           self._file_name)

    def _load(self, path):
        if path is None or self._loaded_from == path:
            return
        self._loaded_from = path
        try:
            with open(path) as f:
                saved = json.load(f)
        except (OSError, ValueError):
            return
        for key, (index, text) in saved.items():
            if 0 <= index < len(self.configs) and repr(self.configs[index]) == text:
                self.chosen.setdefault(key, self.configs[index])
                self._report("read back", key, self.configs[index])

    def _save(self, path):
        if path is None:
            return
        os.makedirs(os.path.dirname(path), exist_ok=True)
        saved = {k: [self.configs.index(c), repr(c)] for k, c in self.chosen.items()}
        temporary = f"{path}.tmp{os.getpid()}"
        try:
            with open(temporary, "w") as f:
                json.dump(saved, f)
            os.replace(temporary, path)
        except OSError:
            pass  # a cache that cannot be written only costs a retune

    def _report(self, how, key, config, ms=None):
        if os.environ.get("BLOCC_PRINT_AUTOTUNING", "0") not in ("", "0"):
            timing = "" if ms is None else f", {ms:.4g} ms"
            print(f"autotune: kernel '{self.kernel.name}' key {key}: {config} "
                  f"({how}{timing})", file=sys.stderr)

    # -- launching -------------------------------------------------------
    def _launch(self, grid, args, kwargs):
        if len(args) > len(self._free):
            raise Error(f"{self._what}: takes at most {len(self._free)} "
                        f"positional arguments (the kernel's parameters but "
                        f"the tuned constants), got {len(args)}")
        named = dict(zip(self._free, args))
        named.update({k: v for k, v in kwargs.items() if k in self._free})
        values = list(args) + list(kwargs.values())
        device = next((d for d in map(_device_of, values) if d), "cpu")
        key = ",".join(f"{n}={_key_text(named.get(n))}" for n in self.key)
        others = sorted((k, v) for k, v in kwargs.items()
                        if k in self._free and k not in self.key)
        key += "".join(f",{k}={_key_text(v)}" for k, v in others)
        key += f",on={device}"

        def run(config):
            self.kernel[grid](*args, **kwargs, **config.kwargs,
                              num_warps=config.num_warps,
                              num_stages=config.num_stages)

        path = self._file()
        self._load(path)
        if key not in self.chosen:
            saved = {n: _copy(named[n]) for n in self.restore_value}
            best, best_ms, failures = None, None, []
            for config in self.configs:
                try:
                    ms = testing.do_bench(lambda: run(config), warmup=5, rep=20,
                                          return_mode="median", device=device)
                except Error as e:
                    failures.append(f"{config}: {e}")
                    continue
                finally:
                    for name, copy in saved.items():
                        _restore(named[name], copy)
                self.num_tunings += 1
                if best_ms is None or ms < best_ms:
                    best, best_ms = config, ms
            if best is None:
                raise Error(f"{self._what}: every configuration failed\n  " +
                            "\n  ".join(failures))
            self.chosen[key] = best
            self._save(path)
            self._report("measured best", key, best, best_ms)
        run(self.chosen[key])


def _copy(value):
    return value.clone() if hasattr(value, "clone") else value.copy()


def _restore(value, copy):
    if hasattr(value, "copy_"):
        value.copy_(copy)
    else:
        value[...] = copy

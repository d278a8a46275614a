"""The compile cache between processes (the CPU backend's compiled
kernels; runtime/cpu/README.md). Its directory is $BLOCC_CACHE_DIR, else
$XDG_CACHE_HOME/blocc, else ~/.cache/blocc; 'off' turns it off. Kernels
compiled in this process stay in memory whatever happens to the directory.
"""

import os

from . import _blocc


def directory():
    """The cache directory launches use now, or None when the cache is off
    (or blocc has no CPU backend)."""
    return _blocc._cache_directory()


def set_directory(path):
    """Where later compiles look for and store kernels; None turns the
    cache off. (Sets BLOCC_CACHE_DIR for this process and its children.)"""
    os.environ["BLOCC_CACHE_DIR"] = "off" if path is None else os.fspath(path)


def clear():
    """Removes every compiled kernel from the cache directory, so that
    processes compile again; returns how many it removed (0 when the cache
    is off). The cache also bounds itself: BLOCC_CACHE_MAX_SIZE (1 GiB by
    default), least recently used kernels first."""
    return _blocc._clear_compile_cache()

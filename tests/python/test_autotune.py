"""blocc.autotune on numpy arrays: one tuning per key, the choice read back
from the cache directory, restore_value for an in-place kernel, and the
misuses as blocc.Error."""

import numpy as np
import pytest

import blocc
from blocc import Config, autotune
from blocc.kernels import add, rope
from conftest import poisoned

BLOCKS = [Config({"BLOCK": 64}), Config({"BLOCK": 256}),
          Config({"BLOCK": 1024}, num_warps=8)]


def grid_for(n):
    return lambda meta: (blocc.cdiv(n, meta["BLOCK"]),)


def test_tunes_once_per_key(rng, monkeypatch):
    monkeypatch.setenv("BLOCC_CACHE_DIR", "off")
    tuned = autotune(add, BLOCKS, key=["n"])
    for n in (1, 997, 997, 5003):
        x, y = rng.standard_normal((2, n), dtype=np.float32)
        out = poisoned(n, np.float32)
        tuned[grid_for(n)](x, y, out, n)
        np.testing.assert_array_equal(out, x + y)
    assert tuned.num_tunings == 9  # three keys, three configurations
    assert sorted(tuned.chosen) == ["n=1,on=cpu", "n=5003,on=cpu", "n=997,on=cpu"]


def test_choice_persists_in_the_cache_directory(rng, tmp_path, monkeypatch, capfd):
    monkeypatch.setenv("BLOCC_CACHE_DIR", str(tmp_path))
    n = 4000
    x, y = rng.standard_normal((2, n), dtype=np.float32)
    out = poisoned(n, np.float32)
    autotune(add, BLOCKS, key=["n"])[grid_for(n)](x, y, out, n)
    assert list((tmp_path / "autotune").iterdir())
    monkeypatch.setenv("BLOCC_PRINT_AUTOTUNING", "1")
    again = autotune(add, BLOCKS, key=["n"])
    out = poisoned(n, np.float32)
    again[grid_for(n)](x, y, out, n)
    assert again.num_tunings == 0
    np.testing.assert_array_equal(out, x + y)
    assert "autotune: kernel 'add' key n=4000,on=cpu" in capfd.readouterr().err
    other = autotune(add, BLOCKS[:2], key=["n"])  # another list: tuned again
    other[grid_for(n)](x, y, out, n)
    assert other.num_tunings == 2


def test_restore_value_keeps_trial_runs_off_the_data(rng, monkeypatch):
    monkeypatch.setenv("BLOCC_CACHE_DIR", "off")
    batch, seq, heads, dim = 2, 9, 5, 64
    x = rng.uniform(-2, 2, (batch, seq, heads, dim)).astype(np.float32)
    theta = np.arange(seq)[:, None] * 10000.0 ** (-np.arange(dim // 2) / (dim // 2))
    cos, sin = np.cos(theta).astype(np.float32), np.sin(theta).astype(np.float32)
    groups = [Config({"GROUP": g}) for g in (1, 2, 4)]
    grid = lambda meta: (batch * seq, blocc.cdiv(heads, meta["GROUP"]))
    once = x.copy()
    rope[(batch * seq, heads)](once, cos, sin, seq, heads, dim, GROUP=1,
                               BLOCK=32, BACKWARD=False)
    q = x.copy()
    autotune(rope, groups, key=["seq_len"], restore_value=["q"])[grid](
        q, cos, sin, seq, heads, dim, BLOCK=32, BACKWARD=False)
    np.testing.assert_array_equal(q, once)
    q = x.copy()  # without restore_value the trial runs rotate q many times
    autotune(rope, groups, key=["seq_len"])[grid](
        q, cos, sin, seq, heads, dim, BLOCK=32, BACKWARD=False)
    assert not np.array_equal(q, once)


def test_misuse_is_an_error_naming_the_culprit():
    with pytest.raises(blocc.Error, match="names 'BLOCK_Q', which is not a "
                       "parameter of the kernel"):
        autotune(add, [Config({"BLOCK_Q": 64})], key=["n"])
    with pytest.raises(blocc.Error, match="sets 'n', a scalar parameter"):
        autotune(add, [Config({"n": 64})], key=[])
    with pytest.raises(blocc.Error, match="key names 'size'"):
        autotune(add, BLOCKS, key=["size"])
    with pytest.raises(blocc.Error, match="key names 'BLOCK', which the "
                       "configurations set"):
        autotune(add, BLOCKS, key=["BLOCK"])
    with pytest.raises(blocc.Error, match="no configuration"):
        autotune(add, [], key=[])
    x = np.zeros(8, np.float32)
    bad = autotune(add, [Config({"BLOCK": 3}), Config({"BLOCK": 5})], key=[])
    with pytest.raises(blocc.Error, match="every configuration failed"):
        bad[grid_for(8)](x, x, x, 8)

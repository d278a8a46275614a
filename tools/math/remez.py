"""Weighted minimax polynomial fits by the Remez exchange algorithm, in
mpmath's arbitrary precision, with coefficients rounded to f32 or f64.

fit(g, w, a, b, powers) finds c minimizing max over [a, b] of
|w(z) (g(z) - sum_k c_k z^powers[k])|: the polynomial's error in the units
that matter for the caller (w turns it into the relative error of the final
function). Rounding the coefficients to the target format is done one at a
time from the lowest power, refitting the remaining ones after each step,
so that the higher (less significant) coefficients absorb the rounding of
the lower ones.
"""
import mpmath as mp

mp.mp.dps = 60


def _solve(g, w, powers, points):
    n = len(powers)
    rows, rhs = [], []
    for i, z in enumerate(points):
        rows.append([z ** p for p in powers] + [(-1) ** i / w(z)])
        rhs.append(g(z))
    sol = mp.lu_solve(mp.matrix(rows), mp.matrix(rhs))
    return [sol[k] for k in range(n)], sol[n]


def _evaluate(c, powers, z):
    return mp.fsum(ck * z ** p for ck, p in zip(c, powers))


def _grid(a, b, count):
    # Chebyshev-spaced: dense near the ends, where extrema crowd.
    return [(a + b) / 2 - (b - a) / 2 * mp.cos(mp.pi * i / (count - 1))
            for i in range(count)]


def _refine(err, lo, hi):
    """Maximum of |err| on [lo, hi] by golden-section search."""
    phi = (mp.sqrt(5) - 1) / 2
    x1, x2 = hi - phi * (hi - lo), lo + phi * (hi - lo)
    f1, f2 = abs(err(x1)), abs(err(x2))
    for _ in range(60):
        if f1 > f2:
            hi, x2, f2 = x2, x1, f1
            x1 = hi - phi * (hi - lo)
            f1 = abs(err(x1))
        else:
            lo, x1, f1 = x1, x2, f2
            x2 = lo + phi * (hi - lo)
            f2 = abs(err(x2))
    return (lo + hi) / 2


def max_error(g, w, a, b, c, powers, count=3000):
    err = lambda z: w(z) * (g(z) - _evaluate(c, powers, z))
    grid = _grid(mp.mpf(a), mp.mpf(b), count)
    values = [abs(err(z)) for z in grid]
    i = max(range(count), key=lambda k: values[k])
    lo, hi = grid[max(i - 1, 0)], grid[min(i + 1, count - 1)]
    z = _refine(err, lo, hi)
    return max(values[i], abs(err(z)))


def remez(g, w, a, b, powers, iterations=40, count=2000):
    a, b = mp.mpf(a), mp.mpf(b)
    n = len(powers)
    points = sorted(_grid(a, b, n + 1))
    c, level = None, None
    for _ in range(iterations):
        c, level = _solve(g, w, powers, points)
        err = lambda z: w(z) * (g(z) - _evaluate(c, powers, z))
        grid = _grid(a, b, count)
        values = [err(z) for z in grid]
        # One extremum per run of equal sign.
        extrema, start = [], 0
        for k in range(1, count + 1):
            if k == count or mp.sign(values[k]) != mp.sign(values[start]):
                best = max(range(start, k), key=lambda j: abs(values[j]))
                lo, hi = grid[max(best - 1, 0)], grid[min(best + 1, count - 1)]
                z = _refine(err, lo, hi) if 0 < best < count - 1 else grid[best]
                extrema.append(z)
                start = k
        while len(extrema) > n + 1:
            if abs(err(extrema[0])) < abs(err(extrema[-1])):
                extrema.pop(0)
            else:
                extrema.pop()
        if len(extrema) < n + 1:
            break
        worst = max(abs(err(z)) for z in extrema)
        points = extrema
        if worst <= abs(level) * (1 + mp.mpf(10) ** -8):
            break
    return c, abs(level)


def round_to(x, bits):
    """x rounded to nearest in a binary format with `bits` significant bits."""
    if x == 0:
        return mp.mpf(0)
    m, e = mp.frexp(x)
    return mp.ldexp(mp.nint(m * 2 ** bits), e - bits)


def fit_rounded(g, w, a, b, powers, bits):
    """Coefficients for powers rounded to `bits`: the better of the minimax
    coefficients each rounded to nearest, and of rounding them one at a
    time from the lowest power, refitting the rest after each step."""
    best, _ = remez(g, w, a, b, powers)
    best = [round_to(x, bits) for x in best]
    best_error = max_error(g, w, a, b, best, powers)
    chosen = []
    for k in range(len(powers)):
        done = powers[:k]
        residual = (lambda z, done=done, chosen=list(chosen):
                    g(z) - _evaluate(chosen, done, z))
        c, _ = remez(residual, w, a, b, powers[k:])
        chosen.append(round_to(c[0], bits))
    error = max_error(g, w, a, b, chosen, powers)
    if error < best_error:
        best, best_error = chosen, error
    return best, best_error


def hex_literal(x, bits):
    """A C++ hex float literal that is exactly x."""
    v = float(x)
    assert mp.mpf(v) == x, "not a double"
    mantissa, exponent = v.hex().split("p")
    return mantissa.rstrip("0").rstrip(".") + "p" + exponent

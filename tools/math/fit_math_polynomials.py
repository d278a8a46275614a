#!/usr/bin/env python3
"""Derives the polynomial coefficients of the CPU backend's vectorized math
functions (backends/llvm/math_*.cpp): weighted minimax fits (Remez, see
remez.py) in mpmath's arbitrary precision, rounded to the target format.

Run: python3 tools/math/fit_math_polynomials.py [name ...]   (needs mpmath;
a few minutes for all). Prints, per fit, the coefficients as C++ hex float
literals (lowest power first, as FloatLanes::polynomial takes them) and the
fit's maximum weighted error after rounding, as a power of two. The weight
turns the polynomial's error into the error it causes in the function's
result, relative to the result (or absolute where the result is near 1);
each fit's comment says how the polynomial is used.
"""
import sys

import mpmath as mp

from remez import fit_rounded, hex_literal

mp.mp.dps = 60
sqrt = mp.sqrt
TINY = mp.mpf(10) ** -40  # stands in for 0, where g is a limit

F32, F64 = 24, 53  # significant bits


def exp_tail(t):
    """(e^t - 1 - t) / t^2: exp(t) = 1 + t + t^2 P(t)."""
    return (mp.exp(t) - 1 - t) / t ** 2 if abs(t) > TINY else mp.mpf(1) / 2


def exp2_quotient(f):
    """(2^f - 1) / f: 2^f = 1 + f Q(f)."""
    return (mp.power(2, f) - 1) / f if abs(f) > TINY else mp.log(2)


def log_tail(z):
    """log1p(f) = 2 atanh(s) = 2s + s z R(z), s = f / (2 + f), z = s^2."""
    s = sqrt(z)
    return (2 * mp.atanh(s) - 2 * s) / (s * z)


def sin_tail(z):
    """sin(r) = r + r^3 S(z), z = r^2."""
    r = sqrt(z)
    return (mp.sin(r) - r) / (r * z)


def cos_tail(z):
    """cos(r) = 1 + z C(z), z = r^2."""
    return (mp.cos(sqrt(z)) - 1) / z


def tanh_tail(z):
    """tanh(x) = x + x^3 T(z), z = x^2."""
    x = sqrt(z)
    return (mp.tanh(x) - x) / (x * z)


def erf_tail(z):
    """erf(x) = x + x Q(z), z = x^2."""
    x = sqrt(z)
    return mp.erf(x) / x - 1


def erfc_scaled(x):
    """erf(x) = 1 - e^{-x^2} G(x) for x >= 1, G = erfc(x) e^{x^2}."""
    return mp.erfc(x) * mp.exp(x * x)


QUARTER_PI = mp.pi / 4 * mp.mpf("1.0001")  # the reduction may overshoot
HALF_LN2 = mp.log(2) / 2 * mp.mpf("1.0001")
HALF = mp.mpf(1) / 2 * mp.mpf("1.0001")
LOG_Z = (mp.mpf(3) - 2 * sqrt(2)) ** 2 * mp.mpf("1.0001")  # s <= 3 - 2 sqrt 2
TANH_CUT = mp.mpf(1)
ERF_CUT = mp.mpf(1)
ERF_F32_END, ERF_F64_END = mp.mpf(4), mp.mpf(5.92)  # binary, as in C++


def fits():
    """(name, bits, g, weight, a, b, number of terms) for every table."""
    # t^2 is kept off 0: a weight vanishing inside the interval stalls the
    # exchange (and the error there is harmless anyway).
    exp_w = lambda t: max(t * t, (HALF_LN2 / 2) ** 2) / mp.exp(t)
    exp2_w = lambda f: max(abs(f), HALF / 2) / mp.power(2, f)
    log_w = lambda z: z * sqrt(z) / (2 * mp.atanh(sqrt(z)))
    sin_w = lambda z: z * sqrt(z) / mp.sin(sqrt(z))
    cos_w = lambda z: z / mp.cos(sqrt(z))
    tanh_w = lambda z: z * sqrt(z) / mp.tanh(sqrt(z))
    erf_w = lambda z: sqrt(z) / mp.erf(sqrt(z))
    table = []
    for fmt, bits, n in (("f32", F32, {"exp": 5, "log": 3, "sin": 3, "cos": 4,
                                       "tanh": 8, "erf": 7, "erfc": 10}),
                         ("f64", F64, {"exp": 11, "log": 7, "sin": 6,
                                       "cos": 7, "tanh": 16, "erf": 13,
                                       "erfc": 23})):
        table += [
            ("exp_" + fmt, bits, exp_tail, exp_w, -HALF_LN2, HALF_LN2,
             n["exp"]),
            ("log_" + fmt, bits, log_tail, log_w, TINY, LOG_Z, n["log"]),
            ("sin_" + fmt, bits, sin_tail, sin_w, TINY, QUARTER_PI ** 2,
             n["sin"]),
            ("cos_" + fmt, bits, cos_tail, cos_w, TINY, QUARTER_PI ** 2,
             n["cos"]),
            ("tanh_" + fmt, bits, tanh_tail, tanh_w, TINY, TANH_CUT ** 2,
             n["tanh"]),
            ("erf_" + fmt, bits, erf_tail, erf_w, TINY, ERF_CUT ** 2,
             n["erf"]),
        ]
        if fmt == "f32":
            # f32 exp2 with FMA evaluates 2^f directly, f = x - n exact
            # (without FMA, and for f64, exp's polynomial on f ln2).
            table.append(("exp2_f32", bits, exp2_quotient, exp2_w, -HALF,
                          HALF, 6))
        end = ERF_F32_END if fmt == "f32" else ERF_F64_END
        mid = (ERF_CUT + end) / 2
        # G in u = x - mid; the weight e^{-x^2} is the absolute error this
        # causes in erf (close to 1 there, so absolute is what counts).
        table.append(("erfc_" + fmt, bits, lambda u, m=mid: erfc_scaled(u + m),
                      lambda u, m=mid: mp.exp(-(u + m) ** 2), ERF_CUT - mid,
                      end - mid, n["erfc"]))
    return table


def main(names):
    for name, bits, g, w, a, b, terms in fits():
        if names and name not in names:
            continue
        c, error = fit_rounded(g, w, a, b, list(range(terms)), bits)
        print("%s: %d terms on [%s, %s], max weighted error 2^%.1f" %
              (name, terms, mp.nstr(a, 6), mp.nstr(b, 6),
               float(mp.log(error, 2))))
        print("  {" + ", ".join(hex_literal(x, bits) for x in c) + "}",
              flush=True)


if __name__ == "__main__":
    main(sys.argv[1:])

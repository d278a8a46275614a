#!/usr/bin/env python3
"""Prints the binary expansion of 2/pi as 64-bit words (most significant
first, the first word holding the bits of weight 2^-1 .. 2^-64), the table
of the Payne-Hanek argument reduction in backends/nvptx/math_gpu.cpp.

Run: python3 tools/math/two_over_pi_bits.py [words]   (needs mpmath)
"""
import sys

import mpmath as mp


def words(count):
    mp.mp.prec = 64 * count + 64
    scaled = mp.floor(2 / mp.pi * mp.mpf(2) ** (64 * count))
    value = int(scaled)
    return [(value >> (64 * (count - 1 - i))) & (2**64 - 1)
            for i in range(count)]


def main():
    count = int(sys.argv[1]) if len(sys.argv) > 1 else 19
    ws = words(count)
    for i in range(0, count, 3):
        print("    " + " ".join("0x%016xull," % w for w in ws[i:i + 3]))


if __name__ == "__main__":
    main()

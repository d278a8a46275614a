#!/usr/bin/env bash
# Checks that a program built from blocc-compile's output needs and holds
# no LLVM, no compiler and no tracing: no libLLVM among the shared libraries
# it loads (ldd), and none of LLVM's, the backends' (blocc::cpu::,
# blocc::nvptx::) or the frontend's (blocc::detail::KernelBase) symbols in
# it (nm). Prints what it found and exits 1 on any.
set -u
program=$1
status=0
if ! libraries=$(ldd "$program" 2>&1); then
  echo "ldd failed on $program: $libraries"
  exit 1
fi
hits=$(grep -i 'llvm' <<<"$libraries")
if [ -n "$hits" ]; then
  echo "$program loads LLVM:"
  echo "$hits"
  status=1
fi
symbols=$(nm -C "$program" 2>&1) || { echo "nm failed: $symbols"; exit 1; }
if [ "$(wc -l <<<"$symbols")" -lt 100 ]; then
  echo "nm listed too few symbols of $program to judge (stripped?)"
  exit 1
fi
hits=$(grep -E 'llvm::|blocc::cpu::|blocc::nvptx::|blocc::detail::KernelBase|blocc::interpreter' <<<"$symbols" | head -20)
if [ -n "$hits" ]; then
  echo "$program holds LLVM, a backend or the frontend:"
  echo "$hits"
  status=1
fi
[ $status -eq 0 ] && echo "$program: no LLVM, backend or frontend ($(wc -l <<<"$symbols") symbols, $(wc -l <<<"$libraries") shared libraries)"
exit $status

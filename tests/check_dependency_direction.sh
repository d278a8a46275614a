#!/usr/bin/env bash
# DESIGN.md's dependency direction: frontend -> ir <- backends, and only
# backends/ may include LLVM headers (runtime/ includes neither LLVM nor CUDA
# headers), so that user code and the Python extension build without them.
set -u
root="$(cd "$(dirname "$0")/.." && pwd)"
status=0
for dir in frontend ir runtime bindings; do
  [ -d "$root/$dir" ] || continue
  hits=$(grep -rnE '#include *[<"](llvm|clang|mlir)/|#include *[<"]cuda(\.h|_runtime)' "$root/$dir" 2>/dev/null)
  if [ -n "$hits" ]; then
    echo "dependency direction violated: $dir/ includes LLVM or CUDA headers:"
    echo "$hits"
    status=1
  fi
done
hits=$(grep -rnE '#include *[<"](blocc/|frontend/)' "$root/ir" "$root/backends" 2>/dev/null)
if [ -n "$hits" ]; then
  echo "dependency direction violated: ir/ or backends/ include the frontend:"
  echo "$hits"
  status=1
fi
[ $status -eq 0 ] && echo "dependency direction holds"
exit $status

#!/usr/bin/env bash
# The dependency direction (docs/architecture.md): jit -> frontend -> ir,
# jit -> backends -> ir; the language (frontend/) includes no backend and
# no JIT header, ir/ and backends/ include neither layer above them, and
# only backends/ may include LLVM headers (runtime/ includes neither LLVM
# nor CUDA headers), so that user code and the Python extension build
# without them.
set -u
root="$(cd "$(dirname "$0")/.." && pwd)"
status=0
for dir in frontend jit ir runtime bindings; do
  [ -d "$root/$dir" ] || continue
  hits=$(grep -rnE '#include *[<"](llvm|clang|mlir)/|#include *[<"]cuda(\.h|_runtime)' "$root/$dir" 2>/dev/null)
  if [ -n "$hits" ]; then
    echo "dependency direction violated: $dir/ includes LLVM or CUDA headers:"
    echo "$hits"
    status=1
  fi
done
# The language traces kernels into the IR and knows nothing below or above
# it: no backend, no runtime, no JIT header (jit/*.h, blocc/kernel.h,
# blocc/autotune.h, blocc/blocc.h).
jit_headers=$(cd "$root/jit" && find . -name '*.h' | sed 's|^\./||' | tr '\n' '|')
hits=$(grep -rnE "#include *[<\"](backends/|runtime/|jit/|(${jit_headers%|})\")" "$root/frontend" 2>/dev/null)
if [ -n "$hits" ]; then
  echo "dependency direction violated: the language (frontend/) includes a backend, the runtime or the JIT:"
  echo "$hits"
  status=1
fi
hits=$(grep -rnE '#include *[<"](blocc/|frontend/|jit/)' "$root/ir" "$root/backends" 2>/dev/null)
if [ -n "$hits" ]; then
  echo "dependency direction violated: ir/ or backends/ include the language or the JIT:"
  echo "$hits"
  status=1
fi
# The runtime libraries (blocc_runtime_cpu, blocc_runtime_cuda, and
# blocc_runtime, all an ahead-of-time compiled application links) link no
# LLVM, no backend and no frontend: no target_link_libraries call or
# blocc_use_llvm in runtime/ names one (the configure step checks the whole
# link closure of blocc_runtime too, runtime/aot/CMakeLists.txt).
hits=""
while IFS= read -r file; do
  calls=$(sed 's/#.*//' "$file" | tr '\n' ' ' |
          grep -oE '(target_link_libraries|blocc_use_llvm) *\([^)]*\)' |
          grep -E 'blocc_use_llvm|blocc_llvm|LLVM|[( ]blocc_cpu[ )]|blocc_nvptx|blocc_export|blocc_interpreter|[( ]blocc[ )]')
  [ -n "$calls" ] && hits+="$file: $calls"$'\n'
done < <(find "$root/runtime" -name CMakeLists.txt)
if [ -n "$hits" ]; then
  echo "dependency direction violated: runtime/ links LLVM, a backend or the frontend:"
  printf '%s' "$hits"
  status=1
fi
[ $status -eq 0 ] && echo "dependency direction holds"
exit $status

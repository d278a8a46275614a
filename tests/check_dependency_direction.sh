#!/usr/bin/env bash
# The dependency direction (docs/architecture.md): frontend -> ir <- backends
# (within frontend/, only the JIT's files include backends), and only
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
# frontend/ is the language (tracing into the IR: ir/ only) and the JIT
# that compiles and launches what it traces. The JIT's files alone may
# include a backend; a new file that does fails here.
jit_files="autotune.cpp executor.cpp executor.h gpu_launch.cpp gpu_launch.h kernel.cpp stages.cpp"
hits=""
while IFS= read -r line; do
  file=$(basename "${line%%:*}")
  case " $jit_files " in *" $file "*) ;; *) hits+="$line"$'\n' ;; esac
done < <(grep -rnE '#include *[<"]backends/' "$root/frontend" 2>/dev/null)
if [ -n "$hits" ]; then
  echo "dependency direction violated: frontend/ outside its JIT files ($jit_files) includes a backend:"
  printf '%s' "$hits"
  status=1
fi
hits=$(grep -rnE '#include *[<"](blocc/|frontend/)' "$root/ir" "$root/backends" 2>/dev/null)
if [ -n "$hits" ]; then
  echo "dependency direction violated: ir/ or backends/ include the frontend:"
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

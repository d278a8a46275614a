# Ahead-of-time compilation at build time, for blocc's own tree (tests/aot,
# tutorials/10-ahead-of-time): a kernel library, then blocc-compile run on
# it for each specialization. Included by tools/CMakeLists.txt with
# blocc-compile, so the functions exist wherever the tool does.

# x86-64-v3 (AVX2 and FMA) runs on any x86 of the last ten years; `cpu`
# alone would use every feature of the machine that builds. PTX for sm_80
# runs on every later GPU; with ptxas on PATH, cubins come too.
# In the cache (internal: set again at each configure) so that tests/ and
# tutorials/ see it.
if(BLOCC_NVPTX_BACKEND)
  set(BLOCC_AOT_TARGETS cpu:x86-64-v3,sm_80,sm_90 CACHE INTERNAL "")
else()
  set(BLOCC_AOT_TARGETS cpu:x86-64-v3 CACHE INTERNAL "")
endif()

# blocc_kernel_library(TARGET SOURCES...): a shared library exporting
# kernels, built with blocc (the tutorials' headers on its include path);
# its copy of blocc stays its own, as in every kernel library.
function(blocc_kernel_library target)
  add_library(${target} SHARED ${ARGN})
  target_link_libraries(${target} PRIVATE blocc::blocc blocc_warnings)
  target_include_directories(${target} PRIVATE ${PROJECT_SOURCE_DIR}/tutorials)
  target_link_options(${target} PRIVATE -Wl,--exclude-libs,ALL)
  set_target_properties(${target} PROPERTIES
    CXX_VISIBILITY_PRESET hidden VISIBILITY_INLINES_HIDDEN ON)
endfunction()

# blocc_aot_compile(OUTPUTS LIBRARY KERNEL OUT SIGNATURE [options...]):
# runs blocc-compile on kernel KERNEL of library target LIBRARY with
# SIGNATURE for BLOCC_AOT_TARGETS, writing OUT.{h,cpp,o}; appends OUT.cpp
# and OUT.o (what a program compiles and links) to the list OUTPUTS.
# (Parameter names start with an underscore: a caller's list may be called
# `outputs`.)
function(blocc_aot_compile _outputs _library _kernel _out _signature)
  add_custom_command(
    OUTPUT ${_out}.h ${_out}.cpp ${_out}.o
    COMMAND $<TARGET_FILE:blocc-compile>
            --library $<TARGET_FILE:${_library}> --kernel ${_kernel}
            --signature ${_signature} --target ${BLOCC_AOT_TARGETS} -o ${_out}
            ${ARGN}
    DEPENDS blocc-compile ${_library}
    COMMENT "blocc-compile ${_out}"
    VERBATIM)
  set(${_outputs} ${${_outputs}} ${_out}.cpp ${_out}.o PARENT_SCOPE)
endfunction()

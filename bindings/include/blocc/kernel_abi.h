/* The C interface through which Python (bindings/module) calls kernels
 * compiled into other shared objects: the kernels a user's library
 * exports (BLOCC_EXPORT_KERNELS, blocc/export.h, found by
 * blocc.load_library) and those a user's pybind11 module exports
 * (blocc::python::export_kernel, blocc/python.h).
 *
 * Why C: the library and the Python module are built separately, each
 * with its own copy of blocc (possibly another version of it), so no C++
 * type may cross between them. Each side only reads these structs, whose
 * layout is fixed for an ABI version; a later version adds a new entry
 * point (blocc_kernel_library_v2) and leaves this one as it is.
 *
 * Element types are named by text, as the IR prints them ("f32", "i64",
 * "u8", "i1", "f16", "bf16"), so that no enum numbering is part of the ABI.
 * Nothing here throws: a failing call returns nonzero and writes its
 * message (blocc::Error's text) to the error sink.
 */
#ifndef BLOCC_KERNEL_ABI_H
#define BLOCC_KERNEL_ABI_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define BLOCC_KERNEL_ABI_VERSION 1

/* Receives text (a message, printed IR); `text` is valid only during the
 * call and is not NUL-terminated. */
typedef struct blocc_sink_v1 {
  void *context;
  void (*write)(void *context, const char *text, size_t length);
} blocc_sink_v1;

enum blocc_param_kind_v1 {
  BLOCC_PARAM_POINTER = 0,  /* bl::Ptr<T> */
  BLOCC_PARAM_SCALAR = 1,   /* bl::i32, bl::f32, ...: a run-time value */
  BLOCC_PARAM_CONSTANT = 2, /* bl::Const<T>: part of the specialization */
};

typedef struct blocc_param_v1 {
  const char *name;      /* "x"; "arg0", "arg1", ... for unnamed kernels */
  int32_t kind;          /* blocc_param_kind_v1 */
  const char *dtype;     /* "f32" (pointers: the element type) */
  const char *type_name; /* "bl::Ptr<f32>", for messages */
} blocc_param_v1;

enum blocc_arg_kind_v1 {
  BLOCC_ARG_POINTER = 0,
  BLOCC_ARG_INT = 1,
  BLOCC_ARG_FLOAT = 2,
};

#define BLOCC_UNKNOWN_SIZE UINT64_MAX

typedef struct blocc_arg_v1 {
  int32_t kind;        /* blocc_arg_kind_v1 */
  int32_t read_only;   /* pointers: the kernel must not write through it */
  int32_t device;      /* pointers: -1 host memory, else the CUDA ordinal */
  int32_t reserved;    /* 0 */
  const char *dtype;   /* pointers: element type; scalars: NULL (i64/f64) */
  void *pointer;       /* pointers; NULL allowed (a null pointer argument) */
  uint64_t size_bytes; /* pointers: extent, or BLOCC_UNKNOWN_SIZE */
  int64_t int_value;
  double float_value;
  const char *description; /* what the caller passed, for messages:
                              "numpy.ndarray[float32]" */
} blocc_arg_v1;

enum blocc_backend_v1 {
  BLOCC_BACKEND_AUTO = 0,
  BLOCC_BACKEND_INTERPRETER = 1,
  BLOCC_BACKEND_CPU = 2,
  BLOCC_BACKEND_GPU = 3,
};

enum blocc_check_v1 {
  BLOCC_CHECK_DEFAULT = 0, /* $BLOCC_CHECK */
  BLOCC_CHECK_OFF = 1,
  BLOCC_CHECK_BOUNDS = 2,
  BLOCC_CHECK_RACES = 3,
};

typedef struct blocc_launch_options_v1 {
  int32_t num_warps;
  int32_t num_stages;
  int32_t backend;      /* blocc_backend_v1 */
  int32_t check;        /* blocc_check_v1 */
  void *stream;         /* a CUstream for GPU launches; NULL: the default */
  const char *gpu_arch; /* inspection: "sm_90" ...; NULL: sm_90 */
} blocc_launch_options_v1;

/* The stages of blocc::Stage (blocc/kernel.h), each for one backend;
 * `inspect` writes the same text as Kernel::asm_for and BLOCC_DUMP. GPU
 * stages compile for options->gpu_arch with options->num_warps; CPU stages
 * for this machine, unchecked unless options->check asks for a checked
 * variant (BLOCC_CHECK_DEFAULT: unchecked). Stages 4 to 6 came later than
 * 0 to 3, within ABI version 1: a library built with an older blocc
 * answers them with the error "unknown stage N". */
enum blocc_stage_v1 {
  BLOCC_STAGE_IR = 0,          /* "ir": the block IR after the generic passes */
  BLOCC_STAGE_CPU_LLVM = 1,    /* "llir": the CPU backend's optimized LLVM IR */
  BLOCC_STAGE_GPU_LLVM = 2,    /* "llir": the GPU backend's (NVVM) */
  BLOCC_STAGE_PTX = 3,         /* "ptx" */
  BLOCC_STAGE_TRACED = 4,      /* "traced": the block IR as traced */
  BLOCC_STAGE_GPU_LAYOUTS = 5, /* "layouts": the IR with its GPU layouts */
  BLOCC_STAGE_CPU_ASM = 6,     /* "asm": the CPU backend's x86 assembly */
};

typedef struct blocc_kernel_v1 {
  uint32_t abi_version; /* BLOCC_KERNEL_ABI_VERSION */
  const char *name;
  size_t num_params;
  const blocc_param_v1 *params;
  const char *definition_site; /* "kernels.cpp:12" */
  void *self;
  /* Checks the arguments, specializes (traces and compiles when the
   * specialization is new) and runs the kernel over grid[0..2]. Returns 0,
   * or nonzero with the message written to `error`; an argument error is
   * reported before anything runs. May run for long: call it without
   * holding locks others need (Python: without the GIL). Thread-safe. */
  int (*launch)(void *self, const int64_t grid[3], const blocc_arg_v1 *args,
                size_t num_args, const blocc_launch_options_v1 *options,
                blocc_sink_v1 error);
  /* Writes the text of `stage` (blocc_stage_v1) for the specialization
   * these arguments select to `out`. Compile-only: needs no GPU. */
  int (*inspect)(void *self, int32_t stage, const blocc_arg_v1 *args,
                 size_t num_args, const blocc_launch_options_v1 *options,
                 blocc_sink_v1 out, blocc_sink_v1 error);
  /* Specializations traced so far. */
  size_t (*num_specializations)(void *self);
} blocc_kernel_v1;

typedef struct blocc_kernel_library_v1 {
  uint32_t abi_version;      /* BLOCC_KERNEL_ABI_VERSION */
  const char *blocc_version; /* of the blocc the library was built with */
  size_t num_kernels;
  const blocc_kernel_v1 *const *kernels;
  const char *error; /* non-NULL: registering the kernels failed (why) */
} blocc_kernel_library_v1;

/* The entry point a kernel library defines (BLOCC_EXPORT_KERNELS does) and
 * blocc.load_library looks up:
 *   const blocc_kernel_library_v1 *blocc_export_kernels_v1(void);
 * It returns the same table at every call. */
#define BLOCC_KERNEL_LIBRARY_SYMBOL_V1 "blocc_export_kernels_v1"
typedef const blocc_kernel_library_v1 *(*blocc_export_kernels_fn_v1)(void);

/* The name of the PyCapsule through which blocc::python::export_kernel
 * hands a const blocc_kernel_v1 * to the blocc module. */
#define BLOCC_KERNEL_CAPSULE_NAME_V1 "blocc.kernel_v1"

#ifdef __cplusplus
}
#endif

#endif /* BLOCC_KERNEL_ABI_H */

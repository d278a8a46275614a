"""The kernels that ship with blocc: every tutorial's kernel
(tutorials/NN-name/*.h), the same C++ definitions the tutorials run.

    add[grid](x, y, out, n, BLOCK=1024)
        out = x + y over n float32 elements; grid (cdiv(n, BLOCK),).
    softmax[grid](out, x, x_row_stride, out_row_stride, n_rows, n_cols, BLOCK=...)
        Row softmax of a float32 matrix; BLOCK >= n_cols, a power of two;
        strides in elements; any grid (each program strides over rows).
"""

from . import _blocc

globals().update(_blocc._shipped_kernels())

__all__ = sorted(_blocc._shipped_kernels())

"""The tutorials' kernels written in Triton, the GPU sweep's Triton peers
(benchmarks/tutorials/gpu_sweep.py). Each follows Triton's own tutorial
for the same operation, with the same block sizes as blocc's launch."""

import triton
import triton.language as tl


@triton.jit
def add(x_ptr, y_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    tl.store(out_ptr + offsets,
             tl.load(x_ptr + offsets, mask=mask) + tl.load(y_ptr + offsets, mask=mask),
             mask=mask)


@triton.jit
def softmax(out_ptr, in_ptr, n, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    x = tl.load(in_ptr + row * n + cols, mask=cols < n, other=-float("inf"))
    numerator = tl.exp(x - tl.max(x, axis=0))
    tl.store(out_ptr + row * n + cols, numerator / tl.sum(numerator, axis=0),
             mask=cols < n)


@triton.jit
def layer_norm(x_ptr, y_ptr, w_ptr, b_ptr, mean_ptr, rstd_ptr, n, eps,
               BLOCK: tl.constexpr):
    """Layer norm forward, one row per program in loops over column blocks,
    writing each row's mean and rstd (as blocc's layer_norm_fwd)."""
    row = tl.program_id(0)
    x_row = x_ptr + row * n
    y_row = y_ptr + row * n
    partial = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        partial += tl.load(x_row + cols, mask=cols < n, other=0.0).to(tl.float32)
    mean = tl.sum(partial, axis=0) / n
    squares = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        v = tl.load(x_row + cols, mask=cols < n, other=0.0).to(tl.float32)
        centered = tl.where(cols < n, v - mean, 0.0)
        squares += centered * centered
    rstd = 1.0 / tl.sqrt(tl.sum(squares, axis=0) / n + eps)
    tl.store(mean_ptr + row, mean)
    tl.store(rstd_ptr + row, rstd)
    for start in range(0, n, BLOCK):
        cols = start + tl.arange(0, BLOCK)
        mask = cols < n
        w = tl.load(w_ptr + cols, mask=mask).to(tl.float32)
        b = tl.load(b_ptr + cols, mask=mask).to(tl.float32)
        v = tl.load(x_row + cols, mask=mask, other=0.0).to(tl.float32)
        tl.store(y_row + cols, (v - mean) * rstd * w + b, mask=mask)


@triton.jit
def gelu(x_ptr, out_ptr, n, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    inner = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    tanh = 2 * tl.sigmoid(2 * inner) - 1
    tl.store(out_ptr + offsets, 0.5 * x * (1 + tanh), mask=mask)


@triton.jit
def _grouped_tile(tile, M, N, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                  GROUP_M: tl.constexpr):
    """Tile `tile` of C, (pid_m, pid_n), numbered in grouped order."""
    tiles_m, tiles_n = tl.cdiv(M, BLOCK_M), tl.cdiv(N, BLOCK_N)
    per_group = GROUP_M * tiles_n
    first_m = (tile // per_group) * GROUP_M
    group_rows = min(tiles_m - first_m, GROUP_M)
    return (first_m + (tile % per_group) % group_rows,
            (tile % per_group) // group_rows)


@triton.jit
def matmul(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak, stride_bk,
           stride_bn, stride_cm, stride_cn, BLOCK_M: tl.constexpr,
           BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    pid_m, pid_n = _grouped_tile(tl.program_id(0), M, N, BLOCK_M, BLOCK_N,
                                 GROUP_M)
    rows = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M))[:, None]
    cols = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N))[None, :]
    ks = tl.arange(0, BLOCK_K)
    a_tile = a_ptr + rows * stride_am + ks[None, :] * stride_ak
    b_tile = b_ptr + ks[:, None] * stride_bk + cols * stride_bn
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_tile, mask=(rows < M) & (ks[None, :] < K - k), other=0.0)
        b = tl.load(b_tile, mask=(ks[:, None] < K - k) & (cols < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_tile += BLOCK_K * stride_ak
        b_tile += BLOCK_K * stride_bk
    tl.store(c_ptr + rows * stride_cm + cols * stride_cn, acc,
             mask=(rows < M) & (cols < N))


@triton.jit
def matmul_fp8(a_ptr, b_ptr, c_ptr, scale_a, scale_b, M, N, K, stride_am,
               stride_ak, stride_bk, stride_bn, stride_cm, stride_cn,
               BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
               BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
    """matmul on float8_e4m3fn tensors, scaled per tensor:
    C = (scale_a * scale_b) * (A @ B) in float32 (blocc's matmul_fp8)."""
    pid_m, pid_n = _grouped_tile(tl.program_id(0), M, N, BLOCK_M, BLOCK_N,
                                 GROUP_M)
    rows = (pid_m * BLOCK_M + tl.arange(0, BLOCK_M))[:, None]
    cols = (pid_n * BLOCK_N + tl.arange(0, BLOCK_N))[None, :]
    ks = tl.arange(0, BLOCK_K)
    a_tile = a_ptr + rows * stride_am + ks[None, :] * stride_ak
    b_tile = b_ptr + ks[:, None] * stride_bk + cols * stride_bn
    acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for k in range(0, K, BLOCK_K):
        a = tl.load(a_tile, mask=(rows < M) & (ks[None, :] < K - k), other=0.0)
        b = tl.load(b_tile, mask=(ks[:, None] < K - k) & (cols < N), other=0.0)
        acc = tl.dot(a, b, acc)
        a_tile += BLOCK_K * stride_ak
        b_tile += BLOCK_K * stride_bk
    tl.store(c_ptr + rows * stride_cm + cols * stride_cn,
             acc * (scale_a * scale_b), mask=(rows < M) & (cols < N))


@triton.jit
def matmul_persistent(a_ptr, b_ptr, c_ptr, M, N, K, stride_am, stride_ak,
                      stride_bk, stride_bn, stride_cm, stride_cn,
                      BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                      BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr,
                      NUM_SMS: tl.constexpr):
    """matmul on a grid of NUM_SMS programs (fewer where C has fewer
    tiles), program p computing the tiles p, p + NUM_SMS, ... in grouped
    order (blocc's matmul_persistent), as Triton's persistent matmul
    tutorial writes it: the tile loop is flattened with the K loop, so that
    Triton's pipeliner issues the next tile's loads before this tile's
    store; rows and columns past M and N are clamped to valid ones (and
    hinted contiguous) instead of masked, so that only K's tail is masked
    in the loop, and the store skips them."""
    tiles = tl.cdiv(M, BLOCK_M) * tl.cdiv(N, BLOCK_N)
    k_steps = tl.cdiv(K, BLOCK_K)
    ks = tl.arange(0, BLOCK_K)
    for tile in tl.range(tl.program_id(0), tiles, NUM_SMS, flatten=True):
        pid_m, pid_n = _grouped_tile(tile, M, N, BLOCK_M, BLOCK_N, GROUP_M)
        rows = pid_m * BLOCK_M + tl.arange(0, BLOCK_M)
        cols = pid_n * BLOCK_N + tl.arange(0, BLOCK_N)
        a_rows = tl.max_contiguous(
            tl.multiple_of(tl.where(rows < M, rows, 0), BLOCK_M), BLOCK_M)
        b_cols = tl.max_contiguous(
            tl.multiple_of(tl.where(cols < N, cols, 0), BLOCK_N), BLOCK_N)
        acc = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
        for step in range(k_steps):
            k = step * BLOCK_K
            a = tl.load(a_ptr + a_rows[:, None] * stride_am
                        + (k + ks)[None, :] * stride_ak,
                        mask=ks[None, :] < K - k, other=0.0)
            b = tl.load(b_ptr + (k + ks)[:, None] * stride_bk
                        + b_cols[None, :] * stride_bn,
                        mask=ks[:, None] < K - k, other=0.0)
            acc = tl.dot(a, b, acc)
        tl.store(c_ptr + rows[:, None] * stride_cm + cols[None, :] * stride_cn,
                 acc, mask=(rows[:, None] < M) & (cols[None, :] < N))


@triton.jit
def _attention_rows(q_ptr, k_ptr, v_ptr, head, first_query, seq_len, scale,
                    HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                    BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    """The forward pass of BLOCK_M queries: the unnormalized output and the
    rows' maxima and sums, in powers of two of the scaled scores."""
    queries = first_query + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    q = tl.load(q_ptr + head + queries[:, None] * HEAD_DIM + dims[None, :],
                mask=queries[:, None] < seq_len, other=0.0)
    m = tl.full([BLOCK_M], -float("inf"), tl.float32)
    l = tl.zeros([BLOCK_M], tl.float32)
    acc = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    scale_log2 = scale * 1.4426950408889634
    end = seq_len
    if CAUSAL:
        end = tl.minimum(first_query + BLOCK_M, seq_len)
    for first_key in range(0, end, BLOCK_N):
        keys = first_key + tl.arange(0, BLOCK_N)
        kt = tl.load(k_ptr + head + keys[None, :] * HEAD_DIM + dims[:, None],
                     mask=keys[None, :] < seq_len, other=0.0)
        visible = keys[None, :] < seq_len
        if CAUSAL:
            visible = visible & (keys[None, :] <= queries[:, None])
        s = tl.where(visible, tl.dot(q, kt) * scale_log2, -float("inf"))
        m_new = tl.maximum(m, tl.max(s, 1))
        p = tl.exp2(s - m_new[:, None])
        alpha = tl.exp2(m - m_new)
        l = l * alpha + tl.sum(p, 1)
        v = tl.load(v_ptr + head + keys[:, None] * HEAD_DIM + dims[None, :],
                    mask=keys[:, None] < seq_len, other=0.0)
        acc = tl.dot(p.to(v.dtype), v, acc * alpha[:, None])
        m = m_new
    return acc, m, l


@triton.jit
def attention(q_ptr, k_ptr, v_ptr, out_ptr, seq_len, scale,
              HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
              BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    head = tl.program_id(1).to(tl.int64) * seq_len * HEAD_DIM
    first_query = tl.program_id(0) * BLOCK_M
    acc, m, l = _attention_rows(q_ptr, k_ptr, v_ptr, head, first_query,
                                seq_len, scale, HEAD_DIM, BLOCK_M, BLOCK_N,
                                CAUSAL)
    queries = first_query + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    tl.store(out_ptr + head + queries[:, None] * HEAD_DIM + dims[None, :],
             (acc / l[:, None]).to(out_ptr.dtype.element_ty),
             mask=queries[:, None] < seq_len)


@triton.jit
def attention_fwd_lse(q_ptr, k_ptr, v_ptr, out_ptr, lse_ptr, seq_len, scale,
                      HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr,
                      BLOCK_N: tl.constexpr, CAUSAL: tl.constexpr):
    """attention, also storing each row's natural log-sum-exp of its scaled
    scores (as blocc's attention_fwd_lse) for the backward kernels."""
    head_row = tl.program_id(1).to(tl.int64) * seq_len
    first_query = tl.program_id(0) * BLOCK_M
    acc, m, l = _attention_rows(q_ptr, k_ptr, v_ptr, head_row * HEAD_DIM,
                                first_query, seq_len, scale, HEAD_DIM,
                                BLOCK_M, BLOCK_N, CAUSAL)
    queries = first_query + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    tl.store(out_ptr + (head_row + queries[:, None]) * HEAD_DIM + dims[None, :],
             (acc / l[:, None]).to(out_ptr.dtype.element_ty),
             mask=queries[:, None] < seq_len)
    tl.store(lse_ptr + head_row + queries,
             (m + tl.log2(l)) * 0.6931471805599453, mask=queries < seq_len)


@triton.jit
def attention_bwd_preprocess(out_ptr, dout_ptr, delta_ptr, rows,
                             HEAD_DIM: tl.constexpr, BLOCK_M: tl.constexpr):
    """delta = rowsum(dO * out) over all heads' rows, in float32."""
    row = tl.program_id(0) * BLOCK_M + tl.arange(0, BLOCK_M)
    offsets = row[:, None].to(tl.int64) * HEAD_DIM + tl.arange(0, HEAD_DIM)[None, :]
    o = tl.load(out_ptr + offsets, mask=row[:, None] < rows, other=0.0)
    do = tl.load(dout_ptr + offsets, mask=row[:, None] < rows, other=0.0)
    tl.store(delta_ptr + row, tl.sum(o.to(tl.float32) * do.to(tl.float32), 1),
             mask=row < rows)


@triton.jit
def attention_bwd_dkdv(q_ptr, k_ptr, v_ptr, dout_ptr, lse_ptr, delta_ptr,
                       dk_ptr, dv_ptr, seq_len, scale, HEAD_DIM: tl.constexpr,
                       BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                       CAUSAL: tl.constexpr):
    """dK and dV of BLOCK_N keys, walking the query blocks that see them
    with transposed tiles (S^T = K Q^T), every block masked."""
    head_row = tl.program_id(1).to(tl.int64) * seq_len
    head = head_row * HEAD_DIM
    first_key = tl.program_id(0) * BLOCK_N
    keys = first_key + tl.arange(0, BLOCK_N)
    dims = tl.arange(0, HEAD_DIM)
    kv = head + keys[:, None] * HEAD_DIM + dims[None, :]
    k = tl.load(k_ptr + kv, mask=keys[:, None] < seq_len, other=0.0)
    v = tl.load(v_ptr + kv, mask=keys[:, None] < seq_len, other=0.0)
    dk = tl.zeros([BLOCK_N, HEAD_DIM], tl.float32)
    dv = tl.zeros([BLOCK_N, HEAD_DIM], tl.float32)
    scale_log2 = scale * 1.4426950408889634
    start = 0
    if CAUSAL:
        start = first_key // BLOCK_M * BLOCK_M
    for first_query in range(start, seq_len, BLOCK_M):
        queries = first_query + tl.arange(0, BLOCK_M)
        in_seq = queries < seq_len
        qt = tl.load(q_ptr + head + queries[None, :] * HEAD_DIM + dims[:, None],
                     mask=in_seq[None, :], other=0.0)
        lse = tl.load(lse_ptr + head_row + queries, mask=in_seq, other=0.0)
        visible = in_seq[None, :]
        if CAUSAL:
            visible = visible & (keys[:, None] <= queries[None, :])
        pt = tl.exp2(tl.where(visible, tl.dot(k, qt) * scale_log2 -
                              lse[None, :] * 1.4426950408889634,
                              -float("inf")))
        do = tl.load(dout_ptr + head + queries[:, None] * HEAD_DIM + dims[None, :],
                     mask=in_seq[:, None], other=0.0)
        dv = tl.dot(pt.to(do.dtype), do, dv)
        delta = tl.load(delta_ptr + head_row + queries, mask=in_seq, other=0.0)
        dst = pt * (tl.dot(v, tl.trans(do)) - delta[None, :])
        dk = tl.dot(dst.to(qt.dtype), tl.trans(qt), dk)
    tl.store(dk_ptr + kv, (dk * scale).to(dk_ptr.dtype.element_ty),
             mask=keys[:, None] < seq_len)
    tl.store(dv_ptr + kv, dv.to(dv_ptr.dtype.element_ty),
             mask=keys[:, None] < seq_len)


@triton.jit
def attention_bwd_dq(q_ptr, k_ptr, v_ptr, dout_ptr, lse_ptr, delta_ptr, dq_ptr,
                     seq_len, scale, HEAD_DIM: tl.constexpr,
                     BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr,
                     CAUSAL: tl.constexpr):
    """dQ of BLOCK_M queries, walking the key blocks they see, every block
    masked."""
    head_row = tl.program_id(1).to(tl.int64) * seq_len
    head = head_row * HEAD_DIM
    first_query = tl.program_id(0) * BLOCK_M
    queries = first_query + tl.arange(0, BLOCK_M)
    dims = tl.arange(0, HEAD_DIM)
    in_seq = queries < seq_len
    rows = head + queries[:, None] * HEAD_DIM + dims[None, :]
    q = tl.load(q_ptr + rows, mask=in_seq[:, None], other=0.0)
    do = tl.load(dout_ptr + rows, mask=in_seq[:, None], other=0.0)
    lse = tl.load(lse_ptr + head_row + queries, mask=in_seq, other=0.0)
    delta = tl.load(delta_ptr + head_row + queries, mask=in_seq, other=0.0)
    dq = tl.zeros([BLOCK_M, HEAD_DIM], tl.float32)
    scale_log2 = scale * 1.4426950408889634
    end = seq_len
    if CAUSAL:
        end = tl.minimum(first_query + BLOCK_M, seq_len)
    for first_key in range(0, end, BLOCK_N):
        keys = first_key + tl.arange(0, BLOCK_N)
        cols = head + keys[None, :] * HEAD_DIM + dims[:, None]
        kt = tl.load(k_ptr + cols, mask=keys[None, :] < seq_len, other=0.0)
        vt = tl.load(v_ptr + cols, mask=keys[None, :] < seq_len, other=0.0)
        visible = keys[None, :] < seq_len
        if CAUSAL:
            visible = visible & (keys[None, :] <= queries[:, None])
        p = tl.exp2(tl.where(visible, tl.dot(q, kt) * scale_log2 -
                             lse[:, None] * 1.4426950408889634, -float("inf")))
        ds = p * (tl.dot(do, vt) - delta[:, None])
        dq = tl.dot(ds.to(kt.dtype), tl.trans(kt), dq)
    tl.store(dq_ptr + rows, (dq * scale).to(dq_ptr.dtype.element_ty),
             mask=in_seq[:, None])


@triton.jit
def rope(q_ptr, cos_ptr, sin_ptr, seq_len, n_heads, head_dim,
         GROUP: tl.constexpr, BLOCK: tl.constexpr):
    row = tl.program_id(0)
    first_head = tl.program_id(1) * GROUP
    half = head_dim // 2
    cols = tl.arange(0, BLOCK)
    in_half = cols < half
    position = row % seq_len
    c = tl.load(cos_ptr + position * half + cols, mask=in_half)
    s = tl.load(sin_ptr + position * half + cols, mask=in_half)
    for k in tl.static_range(GROUP):
        head = first_head + k
        mask = in_half & (head < n_heads)
        x = q_ptr + (row * n_heads + head) * head_dim
        x1 = tl.load(x + cols, mask=mask)
        x2 = tl.load(x + half + cols, mask=mask)
        tl.store(x + cols, x1 * c - x2 * s, mask=mask)
        tl.store(x + half + cols, x2 * c + x1 * s, mask=mask)


@triton.jit
def partial_sums(x_ptr, sums_ptr, n, scale, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    acc = tl.zeros([BLOCK], dtype=tl.float32)
    for start in range(pid * BLOCK, n, tl.num_programs(0) * BLOCK):
        offsets = start + tl.arange(0, BLOCK)
        acc += tl.load(x_ptr + offsets, mask=offsets < n, other=0.0)
    tl.store(sums_ptr + pid, tl.sum(acc, axis=0) * scale)


@triton.jit
def seeded_dropout(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    keep = tl.rand(seed, offsets) > p
    tl.store(out_ptr + offsets, tl.where(keep, x / (1 - p), 0.0), mask=mask)


@triton.jit
def seeded_dropout4x(x_ptr, out_ptr, n, p, seed, BLOCK: tl.constexpr):
    """Element i kept when word i % 4 of tl.rand4x(seed, i // 4) > p (as
    blocc's seeded_dropout4x)."""
    counters = tl.program_id(0) * (BLOCK // 4) + tl.arange(0, BLOCK // 4)
    r0, r1, r2, r3 = tl.rand4x(seed, counters)
    uniform = tl.interleave(tl.interleave(r0, r2), tl.interleave(r1, r3))
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    mask = offsets < n
    x = tl.load(x_ptr + offsets, mask=mask)
    tl.store(out_ptr + offsets, tl.where(uniform > p, x / (1 - p), 0.0),
             mask=mask)


@triton.jit
def uniform4x(out_ptr, n, seed, BLOCK: tl.constexpr):
    """Word i % 4 of tl.rand4x(seed, i // 4): seeded_dropout4x's numbers."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    r0, r1, r2, r3 = tl.rand4x(seed, offsets // 4)
    word = offsets % 4
    u = tl.where(word == 0, r0, tl.where(word == 1, r1,
                                         tl.where(word == 2, r2, r3)))
    tl.store(out_ptr + offsets, u, mask=offsets < n)


@triton.jit
def uniform(out_ptr, n, seed, BLOCK: tl.constexpr):
    """tl.rand's numbers for (seed, offset): the dropout reference's."""
    offsets = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    tl.store(out_ptr + offsets, tl.rand(seed, offsets), mask=offsets < n)


@triton.jit
def layer_norm_bwd_dx(dx_ptr, dy_ptr, partial_dw_ptr, partial_db_ptr, x_ptr,
                      w_ptr, mean_ptr, rstd_ptr, stride, rows, n,
                      BLOCK: tl.constexpr):
    """dx of each row this program strides over; its rows' dw and db
    summed into one partial row each (reduced by layer_norm_bwd_dwdb)."""
    pid = tl.program_id(0)
    cols = tl.arange(0, BLOCK)
    mask = cols < n
    w = tl.load(w_ptr + cols, mask=mask, other=0.0)
    dw = tl.zeros([BLOCK], dtype=tl.float32)
    db = tl.zeros([BLOCK], dtype=tl.float32)
    for row in range(pid, rows, tl.num_programs(0)):
        rstd = tl.load(rstd_ptr + row)
        x = tl.load(x_ptr + row * stride + cols, mask=mask, other=0.0)
        xhat = (x - tl.load(mean_ptr + row)) * rstd
        dy = tl.load(dy_ptr + row * stride + cols, mask=mask, other=0.0)
        wdy = w * dy
        c1 = tl.sum(xhat * wdy, axis=0) / n
        c2 = tl.sum(wdy, axis=0) / n
        tl.store(dx_ptr + row * stride + cols, (wdy - (xhat * c1 + c2)) * rstd,
                 mask=mask)
        dw += dy * xhat
        db += dy
    tl.store(partial_dw_ptr + pid * n + cols, dw, mask=mask)
    tl.store(partial_db_ptr + pid * n + cols, db, mask=mask)


@triton.jit
def layer_norm_bwd_dwdb(partial_dw_ptr, partial_db_ptr, dw_ptr, db_ptr, m, n,
                        BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr):
    cols = tl.program_id(0) * BLOCK_N + tl.arange(0, BLOCK_N)
    dw = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    db = tl.zeros([BLOCK_M, BLOCK_N], dtype=tl.float32)
    for start in range(0, m, BLOCK_M):
        rows = start + tl.arange(0, BLOCK_M)
        offsets = rows[:, None] * n + cols[None, :]
        mask = (rows[:, None] < m) & (cols[None, :] < n)
        dw += tl.load(partial_dw_ptr + offsets, mask=mask, other=0.0)
        db += tl.load(partial_db_ptr + offsets, mask=mask, other=0.0)
    tl.store(dw_ptr + cols, tl.sum(dw, axis=0), mask=cols < n)
    tl.store(db_ptr + cols, tl.sum(db, axis=0), mask=cols < n)

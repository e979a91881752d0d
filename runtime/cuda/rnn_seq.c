/*
 * rnn_seq.c -- the sequence-RNN kernels of the table (rnn_seq_forward,
 * rnn_seq_backward): one layer and direction of n_step_lstm / gru / rnn
 * over variable-length sequences (runtime/core/kernels.h, "rnn_seq"), as
 * the CPU's runtime/cpu/rnn_seq.c does it: the input projection of all
 * steps is one product, each step one (B_t, H) x (H, G H) product and one
 * cell kernel, and the backward ends with three large products and the bias
 * sums.  Products go to cuBLAS (cu_gemm_rows, matmul.c); the cells, copies
 * and bias sums are rnn_seq.cu's per-item kernels.
 *
 * Why not cuDNN's RNN API: the kernel table's contract hands the backward
 * the forward's gate workspace (N, 7H / 5H / 2H) in the CPU's layout, which
 * the Lua layer keeps and either device may read; cuDNN keeps its own
 * opaque reserve space with another weight layout (packed, per-gate bias
 * pairs) and fixes the cell formulas (its GRU differs from Chainer's in
 * where the reset gate applies).  This way both devices compute the same
 * formulas on the same workspace, the cells are tested emulated, and only
 * the products are left to the GPU specs.  The cost: one small product and
 * two kernel launches per step instead of cuDNN's persistent kernels.
 *
 * Compiled only: this code has not yet been run on a GPU.
 */
#include "backend.h"

static int64_t seq_gates(int cell) { return cell == CH_RNN_LSTM ? 4 : cell == CH_RNN_GRU ? 3 : 1; }
static int64_t seq_ws_width(int cell, int64_t H) {
    return cell == CH_RNN_LSTM ? 7 * H : cell == CH_RNN_GRU ? 5 * H : 2 * H;
}

static int dense_opt(const ch_tensor *t, int dt, int64_t n, int dev) { return !t || cu_dense(t, dt, n, dev); }
static const char *cbase(const ch_tensor *t) { return t ? cu_base(t) : NULL; }

/* cu_gemm_rows, with the empty cases the CPU's rk_gemm allows: nothing to
 * write, or no terms to sum (C becomes beta C; beta is 0 or 1 here). */
static ch_status seq_gemm(const char *fn, int dev, int dt, int ta, int tb, int64_t M, int64_t Nn, int64_t K,
                          const char *A, int64_t lda, const char *Bm, int64_t ldb, double beta, char *Cm, int64_t ldc) {
    if (M <= 0 || Nn <= 0)
        return CH_OK;
    if (K <= 0)
        return beta == 0 ? cu_rnn_copy_rows(fn, dt, Cm, ldc, NULL, 0, M, Nn) : CH_OK;
    return cu_gemm_rows(fn, dev, dt, ta, tb, M, Nn, K, A, lda, Bm, ldb, beta, Cm, ldc);
}

/* The operands shared by both passes: x (N, NI), wx (G H, NI), wh (G H, H)
 * contiguous, of one float dtype, on one device; the steps' rows within N. */
static ch_status seq_common(const ch_rnn_seq_args *a, const char *fn) {
    const ch_tensor *x = a->x;
    if (!x || (x->dt != CH_FLOAT32 && x->dt != CH_FLOAT64) || a->T < 1 || !a->batch || !a->off)
        return cu_fail(CH_ERR_INTERNAL, "%s: x must be a float32 or float64 tensor and the steps given", fn);
    int dt = x->dt, dev = x->dev;
    int64_t GH = seq_gates(a->cell) * a->H;
    if (!cu_dense(x, dt, a->N * a->NI, dev) || !cu_dense(a->wx, dt, GH * a->NI, dev) ||
        !cu_dense(a->wh, dt, GH * a->H, dev))
        return cu_fail(CH_ERR_INTERNAL, "%s: x, wx and wh must be contiguous tensors of one dtype and device, "
                       "shaped (N, NI), (G H, NI) and (G H, H)", fn);
    for (int t = 0; t < a->T; t++)
        if (a->batch[t] < 0 || a->batch[t] > a->batch[0] || a->off[t] < 0 || a->off[t] + a->batch[t] > a->N)
            return cu_fail(CH_ERR_INTERNAL, "%s: step %d's rows [%lld, %lld) lie outside x's %lld rows", fn, t,
                           (long long)a->off[t], (long long)(a->off[t] + a->batch[t]), (long long)a->N);
    return CH_OK;
}

ch_status cu_rnn_seq_forward(const ch_rnn_seq_args *a) {
    const char *fn = a->name ? a->name : "n_step_rnn";
    CU_TRY(seq_common(a, fn));
    int cell = a->cell, dt = a->x->dt, dev = a->x->dev, lstm = cell == CH_RNN_LSTM, gru = cell == CH_RNN_GRU;
    int64_t H = a->H, N = a->N, NI = a->NI, B = a->batch[0], GH = seq_gates(cell) * H, W = seq_ws_width(cell, H);
    if (!cu_dense(a->bx, dt, GH, dev) || !cu_dense(a->bh, dt, GH, dev) || !cu_dense(a->h0, dt, B * H, dev) ||
        !cu_dense(a->y, dt, N * H, dev) || !cu_dense(a->hy, dt, B * H, dev) || !cu_dense(a->ws, dt, N * W, dev) ||
        (lstm && (!cu_dense(a->c0, dt, B * H, dev) || !cu_dense(a->cy, dt, B * H, dev))))
        return cu_fail(CH_ERR_INTERNAL, "%s: the biases, initial states, outputs and workspace must be contiguous "
                       "tensors of x's dtype and device, shaped as the forward's contract says", fn);
    CU_TRY(cu_use(dev, fn));
    size_t z = cu_dtype_size(dt);
    char *ws = cu_base(a->ws), *h = cu_base(a->hy), *c = lstm ? cu_base(a->cy) : NULL;
    /* the running state starts as h0 (c0) */
    CU_TRY(cu_rnn_copy_rows(fn, dt, h, H, cu_base(a->h0), H, B, H));
    if (lstm)
        CU_TRY(cu_rnn_copy_rows(fn, dt, c, H, cu_base(a->c0), H, B, H));
    /* the input projections of all steps at once, then their biases */
    CU_TRY(seq_gemm(fn, dev, dt, 0, 1, N, GH, NI, cu_base(a->x), NI, cu_base(a->wx), NI, 0, ws, W));
    CU_TRY(cu_rnn_add_bias(fn, dt, ws, cu_base(a->bx), gru ? NULL : cu_base(a->bh), N, W, GH));
    char *q = NULL; /* GRU: h @ Wh^T of one step */
    if (gru && B * GH > 0 && !(q = cu_scratch(dev, z * (size_t)(B * GH), fn)))
        return CH_ERR_MEMORY;
    ch_status st = CH_OK;
    for (int k = 0; k < a->T && st == CH_OK; k++) {
        int t = a->reverse ? a->T - 1 - k : k;
        int64_t Bt = a->batch[t], o = a->off[t];
        if (Bt == 0)
            continue;
        char *wsr = ws + z * (size_t)(o * W);
        /* h_prev into the workspace (the backward's weight gradient) */
        st = cu_rnn_copy_rows(fn, dt, wsr + z * (size_t)(W - H), W, h, H, Bt, H);
        if (st == CH_OK)
            st = gru ? seq_gemm(fn, dev, dt, 0, 1, Bt, GH, H, h, H, cu_base(a->wh), H, 0, q, GH)
                     : seq_gemm(fn, dev, dt, 0, 1, Bt, GH, H, h, H, cu_base(a->wh), H, 1, wsr, W);
        cu_rnn_step_ptrs s = {.name = fn, .ws = wsr, .h = h, .c = c, .y = cu_base(a->y) + z * (size_t)(o * H), .q = q,
                         .bh = cu_base(a->bh), .H = H, .W = W, .GH = GH, .cell = cell};
        if (st == CH_OK)
            st = cu_rnn_step(0, dt, &s, Bt);
    }
    if (q)
        cu_scratch_release(dev, q, z * (size_t)(B * GH));
    return st;
}

ch_status cu_rnn_seq_backward(const ch_rnn_seq_args *a) {
    const char *fn = a->name ? a->name : "n_step_rnn (backward)";
    CU_TRY(seq_common(a, fn));
    int cell = a->cell, dt = a->x->dt, dev = a->x->dev, lstm = cell == CH_RNN_LSTM, gru = cell == CH_RNN_GRU;
    int64_t H = a->H, N = a->N, NI = a->NI, B = a->batch[0], GH = seq_gates(cell) * H, W = seq_ws_width(cell, H);
    if (!cu_dense(a->ws_in, dt, N * W, dev) || !dense_opt(a->gy, dt, N * H, dev) ||
        !dense_opt(a->ghy, dt, B * H, dev) || !dense_opt(a->gcy, dt, B * H, dev) ||
        !cu_dense(a->gh0, dt, B * H, dev) || (lstm && !cu_dense(a->gc0, dt, B * H, dev)) ||
        !dense_opt(a->gx, dt, N * NI, dev) || !dense_opt(a->gwx, dt, GH * NI, dev) ||
        !dense_opt(a->gwh, dt, GH * H, dev) || !dense_opt(a->gbx, dt, GH, dev) || !dense_opt(a->gbh, dt, GH, dev))
        return cu_fail(CH_ERR_INTERNAL, "%s: the workspace, gradients and outputs must be contiguous tensors of x's "
                       "dtype and device, shaped as the backward's contract says", fn);
    CU_TRY(cu_use(dev, fn));
    size_t z = cu_dtype_size(dt);
    char *gh = cu_base(a->gh0), *gc = lstm ? cu_base(a->gc0) : NULL;
    /* the running state gradients start as ghy (gcy) and end as gh0 (gc0) */
    CU_TRY(cu_rnn_copy_rows(fn, dt, gh, H, cbase(a->ghy), H, B, H));
    if (lstm)
        CU_TRY(cu_rnn_copy_rows(fn, dt, gc, H, cbase(a->gcy), H, B, H));
    /* the gate gradients of all steps (GRU: and their recurrent parts) */
    size_t gbytes = z * (size_t)(N * GH);
    char *dgx = NULL, *dgh = NULL;
    if (gbytes && !(dgx = cu_scratch(dev, gbytes, fn)))
        return CH_ERR_MEMORY;
    if (gbytes && gru && !(dgh = cu_scratch(dev, gbytes, fn))) {
        cu_scratch_release(dev, dgx, gbytes);
        return CH_ERR_MEMORY;
    }
    char *dgh_k = gru ? dgh : dgx;
    const char *ws = cu_base(a->ws_in), *wh = cu_base(a->wh);
    ch_status st = CH_OK;
    for (int k = 0; k < a->T && st == CH_OK; k++) {
        int t = a->reverse ? k : a->T - 1 - k;
        int64_t Bt = a->batch[t], o = a->off[t];
        if (Bt == 0)
            continue;
        cu_rnn_step_ptrs s = {.name = fn, .ws = (char *)ws + z * (size_t)(o * W), .h = gh, .c = gc,
                         .gy = a->gy ? cu_base(a->gy) + z * (size_t)(o * H) : NULL,
                         .dgx = dgx + z * (size_t)(o * GH), .dgh = gru ? dgh + z * (size_t)(o * GH) : NULL,
                         .H = H, .W = W, .GH = GH, .cell = cell};
        st = cu_rnn_step(1, dt, &s, Bt);
        /* gh (B_t rows) = the gate gradients @ Wh, added to GRU's direct part */
        if (st == CH_OK)
            st = seq_gemm(fn, dev, dt, 0, 0, Bt, H, GH, dgh_k + z * (size_t)(o * GH), GH, wh, H, gru ? 1 : 0, gh,
                              H);
    }
    if (st == CH_OK && a->gx)
        st = seq_gemm(fn, dev, dt, 0, 0, N, NI, GH, dgx, GH, cu_base(a->wx), NI, 0, cu_base(a->gx), NI);
    if (st == CH_OK && a->gwx)
        st = seq_gemm(fn, dev, dt, 1, 0, GH, NI, N, dgx, GH, cu_base(a->x), NI, 0, cu_base(a->gwx), NI);
    if (st == CH_OK && a->gwh)
        st = seq_gemm(fn, dev, dt, 1, 0, GH, H, N, dgh_k, GH, ws + z * (size_t)(W - H), W, 0, cu_base(a->gwh), H);
    if (st == CH_OK && a->gbx)
        st = cu_rnn_colsum(fn, dt, dgx, N, GH, cu_base(a->gbx));
    if (st == CH_OK && a->gbh)
        st = cu_rnn_colsum(fn, dt, dgh_k, N, GH, cu_base(a->gbh));
    if (dgx)
        cu_scratch_release(dev, dgx, gbytes);
    if (dgh)
        cu_scratch_release(dev, dgh, gbytes);
    return st;
}

/*
 * lstm.c -- the LSTM-cell kernels of the table (lstm_forward, lstm_backward,
 * lstm_grad_grad): the front door (runtime/ops/lstm.c) has checked shapes
 * and dtypes and made every operand contiguous in x's dtype on x's device;
 * here the backend's own contract is verified once more and lstm.cu's
 * kernel launched over the units of c_prev.
 *
 * Compiled only: this code has not yet been run on a GPU.
 */
#include "backend.h"

/* c_prev (Bc, U, *S) and x (B, 4U, *S), contiguous, of one float dtype and
 * device; fills the dimensions of q. */
static ch_status lstm_operands(const char *fn, const ch_tensor *c_prev, const ch_tensor *x, cu_lstm_ptrs *q) {
    if (!c_prev || !x || (x->dt != CH_FLOAT32 && x->dt != CH_FLOAT64) || c_prev->nd < 2 || x->nd != c_prev->nd ||
        !cu_dense(x, x->dt, x->numel, x->dev) || !cu_dense(c_prev, x->dt, c_prev->numel, x->dev) ||
        x->dim[1] != 4 * c_prev->dim[1] || x->dim[0] > c_prev->dim[0])
        return cu_fail(CH_ERR_INTERNAL, "%s: c_prev (B, U, ...) and x (B, 4U, ...) must be contiguous float32 or "
                       "float64 tensors of one dtype and device", fn);
    int64_t S = 1;
    for (int d = 2; d < x->nd; d++) {
        if (x->dim[d] != c_prev->dim[d])
            return cu_fail(CH_ERR_INTERNAL, "%s: c_prev and x differ in axis %d", fn, d);
        S *= x->dim[d];
    }
    *q = (cu_lstm_ptrs){.c_prev = cu_base(c_prev), .x = cu_base(x), .B = x->dim[0], .U = c_prev->dim[1], .S = S};
    return CH_OK;
}

/* t (optional when `optional`) is contiguous, of x's dtype and device, with
 * the given number of elements. */
static int lstm_operand_ok(const ch_tensor *t, const ch_tensor *x, int64_t n, int optional) {
    return t ? cu_dense(t, x->dt, n, x->dev) : optional;
}

static const char *opt_base(const ch_tensor *t) { return t ? cu_base(t) : NULL; }

static ch_status lstm_run(int pass, const char *fn, const ch_tensor *c_prev, const ch_tensor *x, cu_lstm_ptrs *q) {
    if (c_prev->numel == 0)
        return CH_OK;
    CU_TRY(cu_use(x->dev, fn));
    return cu_lstm_launch(pass, x->dt, q, c_prev->numel);
}

ch_status cu_lstm_forward(const ch_tensor *c_prev, const ch_tensor *x, ch_tensor *c, ch_tensor *h) {
    const char *fn = "lstm";
    cu_lstm_ptrs q;
    CU_TRY(lstm_operands(fn, c_prev, x, &q));
    int64_t hn = x->dim[0] * (c_prev->dim[0] ? c_prev->numel / c_prev->dim[0] : 0);
    if (!lstm_operand_ok(c, x, c_prev->numel, 0) || !lstm_operand_ok(h, x, hn, 0))
        return cu_fail(CH_ERR_INTERNAL, "%s: c and h must be contiguous outputs like c_prev and x's batch", fn);
    q.out[0] = cu_base(c);
    q.out[1] = cu_base(h);
    return lstm_run(CU_LSTM_FORWARD, fn, c_prev, x, &q);
}

ch_status cu_lstm_backward(const ch_tensor *c_prev, const ch_tensor *x, const ch_tensor *gc, const ch_tensor *gh,
                           ch_tensor *gc_prev, ch_tensor *gx) {
    const char *fn = "lstm (backward)";
    cu_lstm_ptrs q;
    CU_TRY(lstm_operands(fn, c_prev, x, &q));
    int64_t hn = x->dim[0] * (c_prev->dim[0] ? c_prev->numel / c_prev->dim[0] : 0);
    if (!lstm_operand_ok(gc, x, c_prev->numel, 1) || !lstm_operand_ok(gh, x, hn, 1) ||
        !lstm_operand_ok(gc_prev, x, c_prev->numel, 0) || !lstm_operand_ok(gx, x, x->numel, 0))
        return cu_fail(CH_ERR_INTERNAL, "%s: gc, gh, gc_prev and gx must be contiguous tensors of x's dtype and "
                       "device, shaped like c, h, c_prev and x", fn);
    q.gc = opt_base(gc);
    q.gh = opt_base(gh);
    q.out[0] = cu_base(gc_prev);
    q.out[1] = cu_base(gx);
    return lstm_run(CU_LSTM_BACKWARD, fn, c_prev, x, &q);
}

ch_status cu_lstm_grad_grad(const ch_tensor *c_prev, const ch_tensor *x, const ch_tensor *gc, const ch_tensor *gh,
                            const ch_tensor *ggc_prev, const ch_tensor *ggx, ch_tensor *g_c_prev, ch_tensor *g_x,
                            ch_tensor *g_gc, ch_tensor *g_gh) {
    const char *fn = "lstm (double backward)";
    cu_lstm_ptrs q;
    CU_TRY(lstm_operands(fn, c_prev, x, &q));
    int64_t cn = c_prev->numel, hn = x->dim[0] * (c_prev->dim[0] ? cn / c_prev->dim[0] : 0);
    if (!lstm_operand_ok(gc, x, cn, 1) || !lstm_operand_ok(gh, x, hn, 1) || !lstm_operand_ok(ggc_prev, x, cn, 1) ||
        !lstm_operand_ok(ggx, x, x->numel, 1) || !lstm_operand_ok(g_c_prev, x, cn, 0) ||
        !lstm_operand_ok(g_x, x, x->numel, 0) || !lstm_operand_ok(g_gc, x, cn, 0) ||
        !lstm_operand_ok(g_gh, x, hn, 0))
        return cu_fail(CH_ERR_INTERNAL, "%s: the gradients and outputs must be contiguous tensors of x's dtype and "
                       "device, shaped like c, h, c_prev and x", fn);
    q.gc = opt_base(gc);
    q.gh = opt_base(gh);
    q.ggc_prev = opt_base(ggc_prev);
    q.ggx = opt_base(ggx);
    q.out[0] = cu_base(g_c_prev);
    q.out[1] = cu_base(g_x);
    q.out[2] = cu_base(g_gc);
    q.out[3] = cu_base(g_gh);
    return lstm_run(CU_LSTM_GRAD_GRAD, fn, c_prev, x, &q);
}

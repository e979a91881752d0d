/*
 * lstm.c -- front doors of Chainer's LSTM cell (F.lstm): forward, gradient
 * and the gradient's gradient (kernels: runtime/cpu/lstm.c).  Shapes:
 * c_prev (Bc, U, *S), x (B, 4U, *S), B <= Bc; h and the gh gradients
 * (B, U, *S).
 */
#include "prologue.h"

#include <string.h>

static ch_status lstm_check(const char *fn, const ch_tensor *c_prev, const ch_tensor *x) {
    char b1[CH_SHAPE_BUF], b2[CH_SHAPE_BUF];
    CH_TRY(ch_check_pair(fn, "c_prev", c_prev, "x", x));
    ch_dtype dt = (ch_dtype)x->dt;
    if (dt != CH_FLOAT32 && dt != CH_FLOAT64)
        return ch_fail(CH_ERR_DTYPE, "%s: x must be float32 or float64, got %s", fn, ch_dtype_name(dt));
    if (c_prev->dt != x->dt)
        return ch_fail(CH_ERR_DTYPE, "%s: c_prev is %s but x is %s (expected one dtype)", fn,
                       ch_dtype_name((ch_dtype)c_prev->dt), ch_dtype_name(dt));
    if (c_prev->nd < 2 || x->nd != c_prev->nd)
        return ch_fail(CH_ERR_SHAPE, "%s: c_prev (B, U, ...) and x (B, 4U, ...) need the same ndim >= 2, got %s and %s",
                       fn, ch_shape_str(b1, sizeof b1, c_prev->nd, c_prev->dim), ch_shape_str(b2, sizeof b2, x->nd, x->dim));
    bool ok = x->dim[1] == 4 * c_prev->dim[1] && x->dim[0] <= c_prev->dim[0];
    for (int d = 2; d < x->nd; d++)
        if (x->dim[d] != c_prev->dim[d]) ok = false;
    if (!ok)
        return ch_fail(CH_ERR_SHAPE, "%s: x %s must be (B, 4U, ...) for c_prev %s (B <= c_prev's batch, same trailing axes)",
                       fn, ch_shape_str(b1, sizeof b1, x->nd, x->dim), ch_shape_str(b2, sizeof b2, c_prev->nd, c_prev->dim));
    return CH_OK;
}

/* Checks an optional gradient argument (NULL is fine) against its shape
 * and x's device. */
static ch_status check_opt(const char *fn, const char *arg, const ch_tensor *t, int nd, const int64_t *dim,
                           const ch_tensor *x) {
    if (!t) return CH_OK;
    CH_CHECK_ARG(t, fn, arg);
    CH_TRY(ch_same_device(fn, "x", x, arg, t));
    bool ok = t->nd == nd;
    for (int d = 0; ok && d < nd; d++) ok = t->dim[d] == dim[d];
    if (!ok) {
        char b1[CH_SHAPE_BUF], b2[CH_SHAPE_BUF];
        return ch_fail(CH_ERR_SHAPE, "%s: %s must have shape %s, got %s", fn, arg, ch_shape_str(b1, sizeof b1, nd, dim),
                       ch_shape_str(b2, sizeof b2, t->nd, t->dim));
    }
    return CH_OK;
}

/* n operands (NULL entries stay NULL) contiguous in dtype dt. */
static ch_status contiguous_opt(const ch_tensor *const *in, int n, ch_dtype dt, ch_tensor **out) {
    for (int i = 0; i < n; i++)
        out[i] = NULL;
    for (int i = 0; i < n; i++) {
        ch_status st = in[i] ? ch_contiguous_as(in[i], dt, &out[i]) : CH_OK;
        if (st != CH_OK) {
            ch_release_all(out, i);
            return st;
        }
    }
    return CH_OK;
}

/* n new outputs of dtype dt on device dev, out[i] shaped (nd, dims[i]). */
static ch_status new_outputs(ch_dtype dt, int nd, const int64_t *const *dims, int n, int dev, ch_tensor **out) {
    ch_status st = CH_OK;
    for (int i = 0; i < n; i++)
        out[i] = NULL;
    for (int i = 0; i < n && st == CH_OK; i++)
        st = ch_tensor_new(dt, nd, dims[i], dev, &out[i]);
    if (st != CH_OK) {
        ch_release_all(out, n);
        for (int i = 0; i < n; i++)
            out[i] = NULL;
    }
    return st;
}

/* The end of every front door: releases the nci contiguous operands, and
 * the n outputs on failure; hands out[i] over to *res[i] on success. */
static ch_status finish(ch_status st, ch_tensor **ci, int nci, ch_tensor **out, int n, ch_tensor **const *res) {
    ch_release_all(ci, nci);
    if (st != CH_OK) {
        ch_release_all(out, n);
        return st;
    }
    for (int i = 0; i < n; i++)
        *res[i] = out[i];
    return CH_OK;
}

/* h's shape: c_prev's with x's batch. */
static void h_dims(const ch_tensor *c_prev, const ch_tensor *x, int64_t *hd) {
    memcpy(hd, c_prev->dim, sizeof(int64_t) * (size_t)c_prev->nd);
    hd[0] = x->dim[0];
}

ch_status ch_lstm_forward(const ch_tensor *c_prev, const ch_tensor *x, ch_tensor **c, ch_tensor **h) {
    const char *fn = "lstm";
    if (!c || !h) return ch_fail(CH_ERR_ARG, "lstm: result pointers must not be NULL");
    CH_TRY(lstm_check(fn, c_prev, x));
    CH_KERNEL(kernel, lstm_forward, x->dev, fn);
    ch_dtype dt = (ch_dtype)x->dt;
    int64_t hd[CH_MAX_DIMS];
    h_dims(c_prev, x, hd);
    const ch_tensor *in[2] = {c_prev, x};
    const int64_t *dims[2] = {c_prev->dim, hd};
    ch_tensor *ci[2], *out[2];
    CH_TRY(ch_contiguous_all(in, 2, dt, ci));
    ch_status st = new_outputs(dt, c_prev->nd, dims, 2, x->dev, out);
    if (st == CH_OK)
        st = kernel(ci[0], ci[1], out[0], out[1]);
    return finish(st, ci, 2, out, 2, (ch_tensor **[]){c, h});
}

ch_status ch_lstm_backward(const ch_tensor *c_prev, const ch_tensor *x, const ch_tensor *gc, const ch_tensor *gh,
                           ch_tensor **gc_prev, ch_tensor **gx) {
    const char *fn = "lstm (backward)";
    if (!gc_prev || !gx) return ch_fail(CH_ERR_ARG, "lstm (backward): result pointers must not be NULL");
    CH_TRY(lstm_check(fn, c_prev, x));
    int64_t hd[CH_MAX_DIMS];
    h_dims(c_prev, x, hd);
    CH_TRY(check_opt(fn, "gc", gc, c_prev->nd, c_prev->dim, x));
    CH_TRY(check_opt(fn, "gh", gh, c_prev->nd, hd, x));
    CH_KERNEL(kernel, lstm_backward, x->dev, fn);
    ch_dtype dt = (ch_dtype)x->dt;
    const ch_tensor *in[4] = {c_prev, x, gc, gh};
    const int64_t *dims[2] = {c_prev->dim, x->dim};
    ch_tensor *ci[4], *out[2];
    CH_TRY(contiguous_opt(in, 4, dt, ci));
    ch_status st = new_outputs(dt, c_prev->nd, dims, 2, x->dev, out);
    if (st == CH_OK)
        st = kernel(ci[0], ci[1], ci[2], ci[3], out[0], out[1]);
    return finish(st, ci, 4, out, 2, (ch_tensor **[]){gc_prev, gx});
}

ch_status ch_lstm_grad_grad(const ch_tensor *c_prev, const ch_tensor *x, const ch_tensor *gc, const ch_tensor *gh,
                            const ch_tensor *ggc_prev, const ch_tensor *ggx, ch_tensor **g_c_prev, ch_tensor **g_x,
                            ch_tensor **g_gc, ch_tensor **g_gh) {
    const char *fn = "lstm (double backward)";
    if (!g_c_prev || !g_x || !g_gc || !g_gh)
        return ch_fail(CH_ERR_ARG, "lstm (double backward): result pointers must not be NULL");
    CH_TRY(lstm_check(fn, c_prev, x));
    int64_t hd[CH_MAX_DIMS];
    h_dims(c_prev, x, hd);
    CH_TRY(check_opt(fn, "gc", gc, c_prev->nd, c_prev->dim, x));
    CH_TRY(check_opt(fn, "gh", gh, c_prev->nd, hd, x));
    CH_TRY(check_opt(fn, "ggc_prev", ggc_prev, c_prev->nd, c_prev->dim, x));
    CH_TRY(check_opt(fn, "ggx", ggx, x->nd, x->dim, x));
    CH_KERNEL(kernel, lstm_grad_grad, x->dev, fn);
    ch_dtype dt = (ch_dtype)x->dt;
    const ch_tensor *in[6] = {c_prev, x, gc, gh, ggc_prev, ggx};
    const int64_t *dims[4] = {c_prev->dim, x->dim, c_prev->dim, hd};
    ch_tensor *ci[6], *out[4];
    CH_TRY(contiguous_opt(in, 6, dt, ci));
    ch_status st = new_outputs(dt, c_prev->nd, dims, 4, x->dev, out);
    if (st == CH_OK)
        st = kernel(ci[0], ci[1], ci[2], ci[3], ci[4], ci[5], out[0], out[1], out[2], out[3]);
    return finish(st, ci, 6, out, 4, (ch_tensor **[]){g_c_prev, g_x, g_gc, g_gh});
}

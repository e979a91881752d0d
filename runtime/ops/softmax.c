/*
 * softmax.c -- front doors of softmax and log_softmax along any axis and of
 * their gradients: checks, the (O, N, I) view around the axis, operands
 * contiguous in the compute dtype (float16 computes in float32, rounded
 * once), then the device's kernel (cpu/softmax.c, cuda/softmax.cu).
 */
#include "prologue.h"

static ch_dtype compute_of(ch_dtype dt) { return dt == CH_FLOAT64 ? CH_FLOAT64 : CH_FLOAT32; }

/* (O, N, I) of x around axis (already normalised). */
static void split_dims(const ch_tensor *x, int axis, int64_t *O, int64_t *N, int64_t *I) {
    int64_t o = 1, i = 1;
    for (int d = 0; d < axis; d++) o *= x->dim[d];
    for (int d = axis + 1; d < x->nd; d++) i *= x->dim[d];
    *O = o;
    *N = x->dim[axis];
    *I = i;
}

/* Hands back r as a tensor of dtype dt (a cast copy when they differ). */
static ch_status finish(ch_tensor *r, ch_dtype dt, ch_tensor **result) {
    if ((ch_dtype)r->dt == dt) {
        *result = r;
        return CH_OK;
    }
    ch_tensor *o = NULL;
    ch_status st = ch_astype(r, dt, &o);
    ch_tensor_release(r);
    if (st != CH_OK)
        return st;
    *result = o;
    return CH_OK;
}

ch_status ch_softmax(const ch_tensor *x, int axis, int log, ch_tensor **result) {
    const char *fn = log ? "log_softmax" : "softmax";
    CH_TRY(ch_want_float(fn, "x", x));
    if (!result) return ch_fail(CH_ERR_ARG, "%s: result must not be NULL", fn);
    if (x->nd == 0) return ch_fail(CH_ERR_SHAPE, "%s: x must have at least one axis (got a 0-d tensor)", fn);
    CH_TRY(ch_norm_axis(&axis, x->nd, fn));
    CH_KERNEL(kernel, softmax_forward, x->dev, fn);
    ch_dtype ct = compute_of((ch_dtype)x->dt);
    ch_tensor *xc = NULL, *y = NULL;
    CH_TRY(ch_contiguous_as(x, ct, &xc));
    ch_status st = ch_tensor_new_like(xc, ct, &y);
    if (st == CH_OK) {
        ch_softmax_args s = {.name = fn, .log = log, .x = xc, .out = y};
        split_dims(xc, axis, &s.O, &s.N, &s.I);
        st = kernel(&s);
    }
    ch_tensor_release(xc);
    if (st != CH_OK) {
        ch_tensor_release(y);
        return st;
    }
    return finish(y, (ch_dtype)x->dt, result);
}

ch_status ch_softmax_grad(const ch_tensor *y, const ch_tensor *gy, int axis, int log, ch_tensor **result) {
    const char *fn = log ? "log_softmax_grad" : "softmax_grad";
    CH_TRY(ch_want_float(fn, "y", y));
    CH_TRY(ch_want_like(fn, "gy", gy, "y", y, 1));
    if (!result) return ch_fail(CH_ERR_ARG, "%s: result must not be NULL", fn);
    if (y->nd == 0) return ch_fail(CH_ERR_SHAPE, "%s: y must have at least one axis (got a 0-d tensor)", fn);
    CH_TRY(ch_norm_axis(&axis, y->nd, fn));
    CH_KERNEL(kernel, softmax_backward, y->dev, fn);
    ch_dtype ct = compute_of((ch_dtype)y->dt);
    const ch_tensor *in[2] = {y, gy};
    ch_tensor *c[2], *gx = NULL;
    CH_TRY(ch_contiguous_all(in, 2, ct, c));
    ch_status st = ch_tensor_new_like(c[0], ct, &gx);
    if (st == CH_OK) {
        ch_softmax_args s = {.name = fn, .log = log, .x = c[0], .gy = c[1], .out = gx};
        split_dims(c[0], axis, &s.O, &s.N, &s.I);
        st = kernel(&s);
    }
    ch_release_all(c, 2);
    if (st != CH_OK) {
        ch_tensor_release(gx);
        return st;
    }
    return finish(gx, (ch_dtype)y->dt, result);
}

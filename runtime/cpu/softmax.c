/*
 * softmax.c -- softmax and log_softmax along any axis, and their gradients.
 *
 * The tensor is seen as (O, N, I) with N the softmax axis.  Work is cut into
 * items of one outer position and a tile of up to SM_TILE inner columns, so
 * an axis-0 softmax of a wide matrix parallelises as well as a row softmax,
 * and every column of a tile is read in one sequential sweep per pass.
 * Sums accumulate in double; each item is independent, so results do not
 * depend on the thread count.  float16 computes in float32.
 *
 * CUDA tensors take the same checks and conversions here and run one block
 * per row in the backend (runtime/cuda/softmax.cu).
 */
#include "../core/internal.h"
#include "../core/device_ops.h"

#include <math.h>

#define SM_TILE 256

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

#define SM_T float
#define SM_NAME(n) n##_f32
#define SM_EXP expf
#define SM_LOG logf
#include "softmax_kernels.h"
#define SM_T double
#define SM_NAME(n) n##_f64
#define SM_EXP exp
#define SM_LOG log
#include "softmax_kernels.h"

static ch_status check_float(const ch_tensor *x, const char *fn, const char *arg) {
    if (!ch_dtype_is_float((ch_dtype)x->dt))
        return ch_fail(CH_ERR_DTYPE, "%s: %s must be a float tensor (got %s)", fn, arg, ch_dtype_name((ch_dtype)x->dt));
    return CH_OK;
}

/* Hands back r as a tensor of dtype dt (a cast copy when they differ). */
static ch_status finish(ch_tensor *r, ch_dtype dt, ch_tensor **result) {
    if ((ch_dtype)r->dt == dt) {
        *result = r;
        return CH_OK;
    }
    ch_tensor *o = NULL;
    ch_status st;
    if (r->dev != CH_CPU) {
        st = ch_astype(r, dt, &o);
    } else {
        st = ch_tensor_new_like(r, dt, &o);
        if (st == CH_OK) st = ch_cpu_copy(o, r);
    }
    ch_tensor_release(r);
    if (st != CH_OK) {
        if (o) ch_tensor_release(o);
        return st;
    }
    *result = o;
    return CH_OK;
}

ch_status ch_softmax(const ch_tensor *x, int axis, int log, ch_tensor **result) {
    const char *fn = log ? "log_softmax" : "softmax";
    CH_CHECK_ARG(x, fn, "x");
    if (!result) return ch_fail(CH_ERR_ARG, "%s: result must not be NULL", fn);
    CH_TRY(check_float(x, fn, "x"));
    if (x->nd == 0) return ch_fail(CH_ERR_SHAPE, "%s: x must have at least one axis (got a 0-d tensor)", fn);
    CH_TRY(ch_norm_axis(&axis, x->nd, fn));
    ch_dtype ct = compute_of((ch_dtype)x->dt);
    ch_tensor *xc = NULL, *y = NULL;
    CH_TRY(ch_contiguous_as(x, ct, &xc));
    ch_status st = ch_tensor_new_like(xc, ct, &y);
    if (st != CH_OK) {
        ch_tensor_release(xc);
        return st;
    }
    int64_t O, N, I;
    split_dims(xc, axis, &O, &N, &I);
    if (xc->dev != CH_CPU) {
        ch_cuda_softmax d = {.kind = CH_CUDA_SOFTMAX_FWD, .log = log, .O = O, .N = N, .I = I, .x = xc, .out = y};
        st = ch_device_softmax(fn, &d);
        ch_tensor_release(xc);
        if (st != CH_OK) {
            ch_tensor_release(y);
            return st;
        }
        return finish(y, (ch_dtype)x->dt, result);
    }
    if (ct == CH_FLOAT32)
        softmax_fwd_f32((const float *)ch_base(xc), (float *)ch_base(y), O, N, I, log);
    else
        softmax_fwd_f64((const double *)ch_base(xc), (double *)ch_base(y), O, N, I, log);
    ch_tensor_release(xc);
    return finish(y, (ch_dtype)x->dt, result);
}

ch_status ch_softmax_grad(const ch_tensor *y, const ch_tensor *gy, int axis, int log, ch_tensor **result) {
    const char *fn = log ? "log_softmax_grad" : "softmax_grad";
    CH_CHECK_ARG(y, fn, "y");
    CH_CHECK_ARG(gy, fn, "gy");
    if (y->dev != gy->dev)
        return ch_same_device(fn, "y", y, "gy", gy);
    if (!result) return ch_fail(CH_ERR_ARG, "%s: result must not be NULL", fn);
    CH_TRY(check_float(y, fn, "y"));
    if (y->dt != gy->dt)
        return ch_fail(CH_ERR_DTYPE, "%s: y and gy have different dtypes (%s and %s)", fn,
                       ch_dtype_name((ch_dtype)y->dt), ch_dtype_name((ch_dtype)gy->dt));
    if (!ch_same_shape(y, gy)) {
        char a[CH_SHAPE_BUF], b[CH_SHAPE_BUF];
        return ch_fail(CH_ERR_SHAPE, "%s: gy has shape %s, expected the shape of y %s", fn,
                       ch_shape_str(a, sizeof a, gy->nd, gy->dim), ch_shape_str(b, sizeof b, y->nd, y->dim));
    }
    if (y->nd == 0) return ch_fail(CH_ERR_SHAPE, "%s: y must have at least one axis (got a 0-d tensor)", fn);
    CH_TRY(ch_norm_axis(&axis, y->nd, fn));
    ch_dtype ct = compute_of((ch_dtype)y->dt);
    ch_tensor *yc = NULL, *gc = NULL, *gx = NULL;
    CH_TRY(ch_contiguous_as(y, ct, &yc));
    ch_status st = ch_contiguous_as(gy, ct, &gc);
    if (st == CH_OK) st = ch_tensor_new_like(yc, ct, &gx);
    if (st != CH_OK) {
        ch_tensor_release(yc);
        if (gc) ch_tensor_release(gc);
        return st;
    }
    int64_t O, N, I;
    split_dims(yc, axis, &O, &N, &I);
    if (yc->dev != CH_CPU) {
        ch_cuda_softmax d = {.kind = CH_CUDA_SOFTMAX_BWD, .log = log, .O = O, .N = N, .I = I, .x = yc, .gy = gc,
                             .out = gx};
        st = ch_device_softmax(fn, &d);
        ch_tensor_release(yc);
        ch_tensor_release(gc);
        if (st != CH_OK) {
            ch_tensor_release(gx);
            return st;
        }
        return finish(gx, (ch_dtype)y->dt, result);
    }
    if (ct == CH_FLOAT32)
        softmax_bwd_f32((const float *)ch_base(yc), (const float *)ch_base(gc), (float *)ch_base(gx), O, N, I, log);
    else
        softmax_bwd_f64((const double *)ch_base(yc), (const double *)ch_base(gc), (double *)ch_base(gx), O, N, I, log);
    ch_tensor_release(yc);
    ch_tensor_release(gc);
    return finish(gx, (ch_dtype)y->dt, result);
}

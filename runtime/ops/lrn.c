/*
 * lrn.c -- front doors of local response normalization (kernels:
 * runtime/cpu/lrn.c): x is (N, C, ...) float32/float64, normalised across
 * axis 1.
 */
#include "prologue.h"

static ch_status check_x(const char *fn, const ch_tensor *x, int64_t n) {
    CH_TRY(ch_want_f32_f64(fn, "x", x));
    if (x->nd < 2)
        return ch_fail(CH_ERR_SHAPE, "%s: x must have at least 2 dimensions (N, C, ...), got %d-d", fn, x->nd);
    if (n < 1)
        return ch_fail(CH_ERR_ARG, "%s: n must be >= 1 (got %lld)", fn, (long long)n);
    return CH_OK;
}

ch_status ch_lrn_forward(const ch_tensor *x, int64_t n, double k, double alpha, double beta, ch_tensor **y,
                         ch_tensor **unit_scale) {
    const char *fn = "local_response_normalization";
    CH_TRY(check_x(fn, x, n));
    if (!y || !unit_scale)
        return ch_fail(CH_ERR_ARG, "%s: NULL result", fn);
    CH_KERNEL(kernel, lrn_forward, x->dev, fn);
    ch_dtype dt = (ch_dtype)x->dt;
    ch_tensor *xc = NULL, *out[2] = {NULL, NULL};
    ch_status st = ch_contiguous_as(x, dt, &xc);
    for (int i = 0; i < 2 && st == CH_OK; i++)
        st = ch_tensor_new_like(x, dt, &out[i]);
    if (st == CH_OK)
        st = kernel(xc, n / 2, k, alpha, beta, out[0], out[1]);
    ch_tensor_release(xc);
    if (st != CH_OK) {
        ch_release_all(out, 2);
        return st;
    }
    *y = out[0];
    *unit_scale = out[1];
    return CH_OK;
}

ch_status ch_lrn_backward(const ch_tensor *x, const ch_tensor *y, const ch_tensor *unit_scale, const ch_tensor *gy,
                          int64_t n, double alpha, double beta, ch_tensor **gx) {
    const char *fn = "local_response_normalization_grad";
    CH_TRY(check_x(fn, x, n));
    CH_TRY(ch_want_like(fn, "y", y, "x", x, 1));
    CH_TRY(ch_want_like(fn, "unit_scale", unit_scale, "x", x, 1));
    CH_TRY(ch_want_like(fn, "gy", gy, "x", x, 1));
    if (!gx)
        return ch_fail(CH_ERR_ARG, "%s: NULL result", fn);
    CH_KERNEL(kernel, lrn_backward, x->dev, fn);
    const ch_tensor *in[4] = {x, y, unit_scale, gy};
    ch_tensor *c[4], *out = NULL;
    CH_TRY(ch_contiguous_all(in, 4, (ch_dtype)x->dt, c));
    ch_status st = ch_tensor_new_like(x, (ch_dtype)x->dt, &out);
    if (st == CH_OK)
        st = kernel(c[0], c[1], c[2], c[3], n / 2, alpha, beta, out);
    ch_release_all(c, 4);
    return ch_hand_over(st, out, gx);
}

/*
 * batch_norm.c -- front doors of fused batch normalization over an
 * (A, C, B) view (kernels: runtime/cpu/batch_norm.c); layer and group
 * normalization reuse them with A = 1.
 */
#include "prologue.h"

static ch_status check3(const char *fn, const char *arg, const ch_tensor *t, const ch_tensor *like) {
    if (t->dt != CH_FLOAT32 && t->dt != CH_FLOAT64)
        return ch_fail(CH_ERR_DTYPE, "%s: %s must be float32 or float64 (got %s)", fn, arg,
                       ch_dtype_name((ch_dtype)t->dt));
    if (like && t->dt != like->dt)
        return ch_fail(CH_ERR_DTYPE, "%s: %s has dtype %s, expected %s like x", fn, arg,
                       ch_dtype_name((ch_dtype)t->dt), ch_dtype_name((ch_dtype)like->dt));
    return CH_OK;
}

static ch_status check_vec(const char *fn, const char *arg, const ch_tensor *t, const ch_tensor *x) {
    CH_CHECK_ARG(t, fn, arg);
    CH_TRY(ch_same_device(fn, "x", x, arg, t));
    CH_TRY(check3(fn, arg, t, x));
    if (t->numel != x->dim[1])
        return ch_fail(CH_ERR_SHAPE, "%s: %s must have %lld elements (one per channel), got %lld", fn, arg,
                       (long long)x->dim[1], (long long)t->numel);
    return CH_OK;
}

/* The per-channel vectors (NULL entries stay NULL) as contiguous float64. */
static ch_status vectors_f64(const ch_tensor *const *in, int n, ch_tensor **out) {
    for (int i = 0; i < n; i++)
        out[i] = NULL;
    for (int i = 0; i < n; i++) {
        if (!in[i])
            continue;
        ch_status st = ch_contiguous_as(in[i], CH_FLOAT64, &out[i]);
        if (st != CH_OK) {
            ch_release_all(out, i);
            return st;
        }
    }
    return CH_OK;
}

/* Allocates the wanted (want[i] != NULL) outputs: the first like x, the
 * others per channel (C,), all of x's dtype on x's device. */
static ch_status new_outputs(const ch_tensor *x, void *const *want, int n, ch_tensor **out) {
    ch_dtype dt = (ch_dtype)x->dt;
    int64_t C = x->dim[1];
    ch_status st = CH_OK;
    for (int i = 0; i < n; i++)
        out[i] = NULL;
    for (int i = 0; i < n && st == CH_OK; i++)
        if (want[i])
            st = i == 0 ? ch_tensor_new_like(x, dt, &out[i]) : ch_tensor_new(dt, 1, &C, x->dev, &out[i]);
    return st;
}

ch_status ch_batch_norm_forward(const ch_tensor *x, const ch_tensor *gamma, const ch_tensor *beta, double eps,
                                ch_tensor **y, ch_tensor **mean, ch_tensor **var, ch_tensor **inv_std) {
    const char *fn = "batch_normalization";
    CH_CHECK_ARG(x, fn, "x");
    CH_TRY(check3(fn, "x", x, NULL));
    if (x->nd != 3)
        return ch_fail(CH_ERR_SHAPE, "%s: expected x viewed as (A, C, B), got %d-d", fn, x->nd);
    if (gamma)
        CH_TRY(check_vec(fn, "gamma", gamma, x));
    if (beta)
        CH_TRY(check_vec(fn, "beta", beta, x));
    if (!(eps >= 0))
        return ch_fail(CH_ERR_ARG, "%s: eps must be >= 0 (got %g)", fn, eps);
    CH_KERNEL(kernel, batch_norm_forward, x->dev, fn);
    const ch_tensor *vin[2] = {gamma, beta};
    ch_tensor *xc = NULL, *v[2], *out[4];
    void *want[4] = {y, mean, var, inv_std};
    CH_TRY(ch_contiguous_as(x, (ch_dtype)x->dt, &xc));
    ch_status st = vectors_f64(vin, 2, v);
    if (st != CH_OK) {
        ch_tensor_release(xc);
        return st;
    }
    st = new_outputs(x, want, 4, out);
    if (st == CH_OK)
        st = kernel(xc, v[0], v[1], eps, out[0], out[1], out[2], out[3]);
    ch_tensor_release(xc);
    ch_release_all(v, 2);
    if (st != CH_OK) {
        ch_release_all(out, 4);
        return st;
    }
    ch_tensor **res[4] = {y, mean, var, inv_std};
    for (int i = 0; i < 4; i++)
        if (res[i])
            *res[i] = out[i];
    return CH_OK;
}

ch_status ch_batch_norm_backward(const ch_tensor *x, const ch_tensor *gamma, const ch_tensor *gy,
                                 const ch_tensor *mean, const ch_tensor *inv_std, ch_tensor **gx, ch_tensor **ggamma,
                                 ch_tensor **gbeta) {
    const char *fn = "batch_normalization_grad";
    CH_TRY(ch_check_pair(fn, "x", x, "gy", gy));
    CH_TRY(check3(fn, "x", x, NULL));
    CH_TRY(check3(fn, "gy", gy, x));
    if (x->nd != 3 || !ch_same_shape(x, gy))
        return ch_fail(CH_ERR_SHAPE, "%s: x and gy must be 3-d (A, C, B) of one shape", fn);
    if (gamma)
        CH_TRY(check_vec(fn, "gamma", gamma, x));
    CH_TRY(check_vec(fn, "mean", mean, x));
    CH_TRY(check_vec(fn, "inv_std", inv_std, x));
    CH_KERNEL(kernel, batch_norm_backward, x->dev, fn);
    const ch_tensor *in[2] = {x, gy}, *vin[3] = {gamma, mean, inv_std};
    ch_tensor *c[2], *v[3], *out[3];
    void *want[3] = {gx, ggamma, gbeta};
    CH_TRY(ch_contiguous_all(in, 2, (ch_dtype)x->dt, c));
    ch_status st = vectors_f64(vin, 3, v);
    if (st != CH_OK) {
        ch_release_all(c, 2);
        return st;
    }
    st = new_outputs(x, want, 3, out);
    if (st == CH_OK)
        st = kernel(c[0], v[0], c[1], v[1], v[2], out[0], out[1], out[2]);
    ch_release_all(c, 2);
    ch_release_all(v, 3);
    if (st != CH_OK) {
        ch_release_all(out, 3);
        return st;
    }
    ch_tensor **res[3] = {gx, ggamma, gbeta};
    for (int i = 0; i < 3; i++)
        if (res[i])
            *res[i] = out[i];
    return CH_OK;
}

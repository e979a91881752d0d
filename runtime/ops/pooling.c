/*
 * pooling.c -- front doors of max and average pooling over 1 to 3 spatial
 * axes and of the scatter / gather their gradients (and unpooling /
 * upsampling) are made of (kernels: runtime/cpu/pooling.c).  The geometry
 * (ch_pool_geom, core/kernels.h) is padded to 3 spatial axes with unit
 * axes in front.
 */
#include "prologue.h"

static ch_status make_geom(const char *fn, const ch_tensor *t, int nsp, const int64_t *ksize, const int64_t *stride,
                           const int64_t *pad, const int64_t *in_size, const int64_t *out_size, ch_pool_geom *g) {
    if (nsp < 1 || nsp > 3)
        return ch_fail(CH_ERR_ARG, "%s: pooling supports 1 to 3 spatial axes (got %d)", fn, nsp);
    if (t->nd != nsp + 2)
        return ch_fail(CH_ERR_SHAPE, "%s: expected a %d-d input (N, C, %d spatial axes), got %d-d", fn, nsp + 2, nsp,
                       t->nd);
    g->planes = t->dim[0] * t->dim[1];
    int off = 3 - nsp;
    for (int a = 0; a < 3; a++) {
        g->in[a] = g->out[a] = g->k[a] = g->s[a] = 1;
        g->p[a] = 0;
    }
    for (int a = 0; a < nsp; a++) {
        if (ksize[a] < 1 || stride[a] < 1 || pad[a] < 0)
            return ch_fail(CH_ERR_ARG, "%s: ksize and stride must be >= 1 and pad >= 0 (axis %d: %lld, %lld, %lld)",
                           fn, a, (long long)ksize[a], (long long)stride[a], (long long)pad[a]);
        g->k[off + a] = ksize[a];
        g->s[off + a] = stride[a];
        g->p[off + a] = pad[a];
        g->in[off + a] = in_size[a];
        g->out[off + a] = out_size[a];
        if (in_size[a] < 0 || out_size[a] < 0)
            return ch_fail(CH_ERR_SHAPE, "%s: negative spatial size on axis %d", fn, a);
    }
    g->in_n = g->in[0] * g->in[1] * g->in[2];
    g->out_n = g->out[0] * g->out[1] * g->out[2];
    g->kn = g->k[0] * g->k[1] * g->k[2];
    return CH_OK;
}

static ch_status check_float(const char *fn, const char *arg, const ch_tensor *t) {
    if (t->dt != CH_FLOAT32 && t->dt != CH_FLOAT64)
        return ch_fail(CH_ERR_DTYPE, "%s: %s must be float32 or float64 (got %s)", fn, arg,
                       ch_dtype_name((ch_dtype)t->dt));
    return CH_OK;
}

/* A new (N, C, *sp) tensor on like's device. */
static ch_status new_planes(const ch_tensor *like, ch_dtype dt, int nsp, const int64_t *sp, ch_tensor **out) {
    int64_t dim[CH_MAX_DIMS];
    dim[0] = like->dim[0];
    dim[1] = like->dim[1];
    for (int a = 0; a < nsp; a++)
        dim[2 + a] = sp[a];
    return ch_tensor_new(dt, nsp + 2, dim, like->dev, out);
}

/* The end of max pooling's routing passes (scatter: gy -> gx, gather:
 * x -> y, a kernel of the same signature): src and indexes (as int32)
 * made contiguous, the output (N, C, *spatial) allocated, the kernel run. */
static ch_status run_route(const ch_pool_geom *geo, ch_max_pool_scatter_kernel *kernel, const ch_tensor *src,
                           const ch_tensor *indexes, int nsp, const int64_t *spatial, ch_tensor **result) {
    ch_tensor *sc = NULL, *ic = NULL, *out = NULL;
    CH_TRY(ch_contiguous_as(src, (ch_dtype)src->dt, &sc));
    ch_status st = ch_contiguous_as(indexes, CH_INT32, &ic);
    if (st == CH_OK)
        st = new_planes(src, (ch_dtype)src->dt, nsp, spatial, &out);
    if (st == CH_OK)
        st = kernel(geo, sc, ic, out);
    ch_tensor_release(sc);
    ch_tensor_release(ic);
    return ch_hand_over(st, out, result);
}

/* Average pooling's opening checks: t usable and float, a result pointer,
 * mode 0, 1 or 2. */
static ch_status check_avg(const char *fn, const char *arg, const ch_tensor *t, int mode, ch_tensor **result) {
    CH_CHECK_ARG(t, fn, arg);
    if (!result)
        return ch_fail(CH_ERR_ARG, "%s: NULL result", fn);
    if (mode < 0 || mode > 2)
        return ch_fail(CH_ERR_ARG, "%s: mode must be 0, 1 or 2 (got %d)", fn, mode);
    return check_float(fn, arg, t);
}

/* The end of both average-pooling passes (their kernels share one
 * signature): src made contiguous, the output (N, C, *spatial) allocated,
 * the kernel run. */
static ch_status run_avg(const ch_pool_geom *g, ch_avg_pool_forward_kernel *kernel, int mode, const ch_tensor *src,
                         int nsp, const int64_t *spatial, ch_tensor **result) {
    ch_tensor *sc = NULL, *out = NULL;
    CH_TRY(ch_contiguous_as(src, (ch_dtype)src->dt, &sc));
    ch_status st = new_planes(src, (ch_dtype)src->dt, nsp, spatial, &out);
    if (st == CH_OK)
        st = kernel(g, mode, sc, out);
    ch_tensor_release(sc);
    return ch_hand_over(st, out, result);
}

static ch_status check_indexes(const char *fn, const ch_tensor *ix, const ch_tensor *g) {
    if (ch_dtype_is_float((ch_dtype)ix->dt) || ix->dt == CH_BOOL)
        return ch_fail(CH_ERR_DTYPE, "%s: indexes must be an integer tensor (got %s)", fn,
                       ch_dtype_name((ch_dtype)ix->dt));
    if (!ch_same_shape(ix, g)) {
        char a[CH_SHAPE_BUF], b[CH_SHAPE_BUF];
        return ch_fail(CH_ERR_SHAPE, "%s: indexes has shape %s, expected %s", fn,
                       ch_shape_str(a, sizeof a, ix->nd, ix->dim), ch_shape_str(b, sizeof b, g->nd, g->dim));
    }
    return CH_OK;
}

ch_status ch_max_pool_forward(const ch_tensor *x, int nsp, const int64_t *ksize, const int64_t *stride,
                              const int64_t *pad, const int64_t *out_size, ch_tensor **y, ch_tensor **indexes) {
    const char *fn = "max_pooling";
    CH_CHECK_ARG(x, fn, "x");
    if (!y)
        return ch_fail(CH_ERR_ARG, "%s: NULL result", fn);
    CH_TRY(check_float(fn, "x", x));
    ch_pool_geom g;
    CH_TRY(make_geom(fn, x, nsp, ksize, stride, pad, x->dim + 2, out_size, &g));
    CH_KERNEL(kernel, max_pool_forward, x->dev, fn);
    ch_tensor *xc = NULL, *yt = NULL, *it = NULL;
    CH_TRY(ch_contiguous_as(x, (ch_dtype)x->dt, &xc));
    ch_status st = new_planes(x, (ch_dtype)x->dt, nsp, out_size, &yt);
    if (st == CH_OK && indexes)
        st = new_planes(x, CH_INT32, nsp, out_size, &it);
    if (st == CH_OK)
        st = kernel(&g, xc, yt, it);
    ch_tensor_release(xc);
    if (st != CH_OK) {
        ch_tensor_release(yt);
        ch_tensor_release(it);
        return st;
    }
    *y = yt;
    if (indexes)
        *indexes = it;
    return CH_OK;
}

ch_status ch_max_pool_scatter(const ch_tensor *g, const ch_tensor *indexes, int nsp, const int64_t *ksize,
                              const int64_t *stride, const int64_t *pad, const int64_t *in_size, ch_tensor **result) {
    const char *fn = "max_pooling_grad";
    CH_TRY(ch_check_pair(fn, "gy", g, "indexes", indexes));
    if (!result)
        return ch_fail(CH_ERR_ARG, "%s: NULL result", fn);
    CH_TRY(check_float(fn, "gy", g));
    CH_TRY(check_indexes(fn, indexes, g));
    ch_pool_geom geo;
    CH_TRY(make_geom(fn, g, nsp, ksize, stride, pad, in_size, g->dim + 2, &geo));
    CH_KERNEL(kernel, max_pool_scatter, g->dev, fn);
    return run_route(&geo, kernel, g, indexes, nsp, in_size, result);
}

ch_status ch_max_pool_gather(const ch_tensor *x, const ch_tensor *indexes, int nsp, const int64_t *ksize,
                             const int64_t *stride, const int64_t *pad, ch_tensor **result) {
    const char *fn = "max_pooling_gather";
    CH_TRY(ch_check_pair(fn, "x", x, "indexes", indexes));
    if (!result)
        return ch_fail(CH_ERR_ARG, "%s: NULL result", fn);
    CH_TRY(check_float(fn, "x", x));
    if (indexes->nd != nsp + 2 || x->nd != nsp + 2 || indexes->dim[0] != x->dim[0] || indexes->dim[1] != x->dim[1])
        return ch_fail(CH_ERR_SHAPE, "%s: x and indexes must be (N, C, ...) with the same N and C", fn);
    if (ch_dtype_is_float((ch_dtype)indexes->dt) || indexes->dt == CH_BOOL)
        return ch_fail(CH_ERR_DTYPE, "%s: indexes must be an integer tensor", fn);
    ch_pool_geom geo;
    CH_TRY(make_geom(fn, x, nsp, ksize, stride, pad, x->dim + 2, indexes->dim + 2, &geo));
    CH_KERNEL(kernel, max_pool_gather, x->dev, fn);
    return run_route(&geo, kernel, x, indexes, nsp, indexes->dim + 2, result);
}

ch_status ch_avg_pool_forward(const ch_tensor *x, int nsp, const int64_t *ksize, const int64_t *stride,
                              const int64_t *pad, const int64_t *out_size, int mode, ch_tensor **result) {
    const char *fn = "average_pooling";
    CH_TRY(check_avg(fn, "x", x, mode, result));
    ch_pool_geom g;
    CH_TRY(make_geom(fn, x, nsp, ksize, stride, pad, x->dim + 2, out_size, &g));
    CH_KERNEL(kernel, avg_pool_forward, x->dev, fn);
    return run_avg(&g, kernel, mode, x, nsp, out_size, result);
}

ch_status ch_avg_pool_backward(const ch_tensor *gy, int nsp, const int64_t *ksize, const int64_t *stride,
                               const int64_t *pad, const int64_t *in_size, int mode, ch_tensor **result) {
    const char *fn = "average_pooling_grad";
    CH_TRY(check_avg(fn, "gy", gy, mode, result));
    ch_pool_geom g;
    CH_TRY(make_geom(fn, gy, nsp, ksize, stride, pad, in_size, gy->dim + 2, &g));
    CH_KERNEL(kernel, avg_pool_backward, gy->dev, fn);
    return run_avg(&g, kernel, mode, gy, nsp, in_size, result);
}

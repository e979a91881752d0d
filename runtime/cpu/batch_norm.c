/* batch_norm.c -- fused batch normalization over an (A, C, B) view: the
 * statistics and the normalized output in two passes over x, and the
 * gradient in two passes over (x, gy).  Layer and group normalization
 * reuse it with A = 1 (one "channel" per row / per group).
 *
 * Channels are independent, so they are split over OpenMP threads; each
 * channel's sums run in a fixed order in double, so the results do not
 * depend on the thread count.  The variance is the mean of squared
 * deviations (two passes), which stays accurate for large means.
 */
#include "../core/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
    CH_CHECK_CPU(t, fn, arg);
    CH_TRY(check3(fn, arg, t, x));
    if (t->numel != x->dim[1])
        return ch_fail(CH_ERR_SHAPE, "%s: %s must have %lld elements (one per channel), got %lld", fn, arg,
                       (long long)x->dim[1], (long long)t->numel);
    return CH_OK;
}

/* A contiguous double copy of a per-channel vector (NULL -> fill). */
static ch_status load_vec(const ch_tensor *t, int64_t C, double fill, double **out) {
    double *v = (double *)malloc(sizeof(double) * (size_t)(C > 0 ? C : 1));
    if (!v)
        return ch_fail(CH_ERR_MEMORY, "batch_normalization: out of memory");
    if (!t) {
        for (int64_t c = 0; c < C; c++)
            v[c] = fill;
    } else {
        ch_tensor *tc = NULL;
        ch_status st = ch_contiguous_as(t, CH_FLOAT64, &tc);
        if (st != CH_OK) {
            free(v);
            return st;
        }
        memcpy(v, ch_base(tc), sizeof(double) * (size_t)C);
        ch_tensor_release(tc);
    }
    *out = v;
    return CH_OK;
}

static void store_vec(ch_tensor *t, const double *v, int64_t C) {
    if (t->dt == CH_FLOAT32) {
        float *p = (float *)t->data;
        for (int64_t c = 0; c < C; c++)
            p[c] = (float)v[c];
    } else {
        memcpy(t->data, v, sizeof(double) * (size_t)C);
    }
}

#define BN_FWD(T)                                                                                          \
    static void bn_fwd_##T(int64_t A, int64_t C, int64_t B, const T *x, const double *gamma,               \
                           const double *beta, double eps, T *y, double *mean, double *var, double *istd) { \
        int par = C > 1 && A * B * C >= CH_PARALLEL_GRAIN / 4 && ch_threads() > 1;                         \
        CH_PAR_FOR(par, int64_t c = 0; c < C; c++, {                                                       \
            double m = (double)(A * B), s = 0, q = 0;                                                      \
            for (int64_t a = 0; a < A; a++) {                                                              \
                const T *p = x + (a * C + c) * B;                                                          \
                for (int64_t b = 0; b < B; b++)                                                            \
                    s += p[b];                                                                             \
            }                                                                                              \
            double mu = m > 0 ? s / m : 0;                                                                 \
            for (int64_t a = 0; a < A; a++) {                                                              \
                const T *p = x + (a * C + c) * B;                                                          \
                for (int64_t b = 0; b < B; b++) {                                                          \
                    double d = p[b] - mu;                                                                  \
                    q += d * d;                                                                            \
                }                                                                                          \
            }                                                                                              \
            double v = m > 0 ? q / m : 0, is = 1.0 / sqrt(v + eps);                                        \
            mean[c] = mu;                                                                                  \
            var[c] = v;                                                                                    \
            istd[c] = is;                                                                                  \
            if (y) {                                                                                       \
                double sc = gamma[c] * is, sh = beta[c] - mu * sc;                                         \
                for (int64_t a = 0; a < A; a++) {                                                          \
                    const T *p = x + (a * C + c) * B;                                                      \
                    T *q2 = y + (a * C + c) * B;                                                           \
                    for (int64_t b = 0; b < B; b++)                                                        \
                        q2[b] = (T)(p[b] * sc + sh);                                                       \
                }                                                                                          \
            }                                                                                              \
        });                                                                                                \
    }
BN_FWD(float)
BN_FWD(double)

ch_status ch_batch_norm_forward(const ch_tensor *x, const ch_tensor *gamma, const ch_tensor *beta, double eps,
                                ch_tensor **y, ch_tensor **mean, ch_tensor **var, ch_tensor **inv_std) {
    const char *fn = "batch_normalization";
    CH_CHECK_CPU(x, fn, "x");
    CH_TRY(check3(fn, "x", x, NULL));
    if (x->nd != 3)
        return ch_fail(CH_ERR_SHAPE, "%s: expected x viewed as (A, C, B), got %d-d", fn, x->nd);
    if (gamma)
        CH_TRY(check_vec(fn, "gamma", gamma, x));
    if (beta)
        CH_TRY(check_vec(fn, "beta", beta, x));
    if (!(eps >= 0))
        return ch_fail(CH_ERR_ARG, "%s: eps must be >= 0 (got %g)", fn, eps);
    int64_t A = x->dim[0], C = x->dim[1], B = x->dim[2];
    ch_dtype dt = (ch_dtype)x->dt;
    ch_tensor *xc = NULL, *yt = NULL, *mt = NULL, *vt = NULL, *it = NULL;
    double *g = NULL, *b = NULL, *st3 = NULL;
    ch_status st = ch_contiguous_as(x, dt, &xc);
    if (st == CH_OK)
        st = load_vec(gamma, C, 1.0, &g);
    if (st == CH_OK)
        st = load_vec(beta, C, 0.0, &b);
    if (st == CH_OK) {
        st3 = (double *)malloc(sizeof(double) * (size_t)(3 * C + 1));
        if (!st3)
            st = ch_fail(CH_ERR_MEMORY, "%s: out of memory", fn);
    }
    if (st == CH_OK && y)
        st = ch_tensor_new_like(x, dt, &yt);
    if (st == CH_OK && mean)
        st = ch_tensor_new(dt, 1, &C, CH_CPU, &mt);
    if (st == CH_OK && var)
        st = ch_tensor_new(dt, 1, &C, CH_CPU, &vt);
    if (st == CH_OK && inv_std)
        st = ch_tensor_new(dt, 1, &C, CH_CPU, &it);
    if (st == CH_OK) {
        if (dt == CH_FLOAT32)
            bn_fwd_float(A, C, B, (const float *)ch_base(xc), g, b, eps, yt ? (float *)yt->data : NULL, st3,
                         st3 + C, st3 + 2 * C);
        else
            bn_fwd_double(A, C, B, (const double *)ch_base(xc), g, b, eps, yt ? (double *)yt->data : NULL, st3,
                          st3 + C, st3 + 2 * C);
        if (mt)
            store_vec(mt, st3, C);
        if (vt)
            store_vec(vt, st3 + C, C);
        if (it)
            store_vec(it, st3 + 2 * C, C);
    }
    free(g);
    free(b);
    free(st3);
    ch_tensor_release(xc);
    if (st != CH_OK) {
        ch_tensor_release(yt);
        ch_tensor_release(mt);
        ch_tensor_release(vt);
        ch_tensor_release(it);
        return st;
    }
    if (y)
        *y = yt;
    if (mean)
        *mean = mt;
    if (var)
        *var = vt;
    if (inv_std)
        *inv_std = it;
    return CH_OK;
}

#define BN_BWD(T)                                                                                          \
    static void bn_bwd_##T(int64_t A, int64_t C, int64_t B, const T *x, const T *gy, const double *gamma,  \
                           const double *mean, const double *istd, T *gx, double *gg, double *gb) {         \
        int par = C > 1 && A * B * C >= CH_PARALLEL_GRAIN / 4 && ch_threads() > 1;                         \
        CH_PAR_FOR(par, int64_t c = 0; c < C; c++, {                                                       \
            double mu = mean[c], is = istd[c], sg = 0, sgx = 0, m = (double)(A * B);                       \
            for (int64_t a = 0; a < A; a++) {                                                              \
                const T *px = x + (a * C + c) * B, *pg = gy + (a * C + c) * B;                             \
                for (int64_t b = 0; b < B; b++) {                                                          \
                    sg += pg[b];                                                                           \
                    sgx += pg[b] * (px[b] - mu);                                                           \
                }                                                                                          \
            }                                                                                              \
            double ggamma = sgx * is;                                                                      \
            gg[c] = ggamma;                                                                                \
            gb[c] = sg;                                                                                    \
            if (gx && m > 0) {                                                                             \
                double k = gamma[c] * is, mg = sg / m, mgx = ggamma / m;                                   \
                for (int64_t a = 0; a < A; a++) {                                                          \
                    const T *px = x + (a * C + c) * B, *pg = gy + (a * C + c) * B;                         \
                    T *po = gx + (a * C + c) * B;                                                          \
                    for (int64_t b = 0; b < B; b++) {                                                      \
                        double xh = (px[b] - mu) * is;                                                     \
                        po[b] = (T)(k * (pg[b] - xh * mgx - mg));                                          \
                    }                                                                                      \
                }                                                                                          \
            }                                                                                              \
        });                                                                                                \
    }
BN_BWD(float)
BN_BWD(double)

ch_status ch_batch_norm_backward(const ch_tensor *x, const ch_tensor *gamma, const ch_tensor *gy,
                                 const ch_tensor *mean, const ch_tensor *inv_std, ch_tensor **gx, ch_tensor **ggamma,
                                 ch_tensor **gbeta) {
    const char *fn = "batch_normalization_grad";
    CH_CHECK_CPU(x, fn, "x");
    CH_CHECK_CPU(gy, fn, "gy");
    CH_TRY(check3(fn, "x", x, NULL));
    CH_TRY(check3(fn, "gy", gy, x));
    if (x->nd != 3 || !ch_same_shape(x, gy))
        return ch_fail(CH_ERR_SHAPE, "%s: x and gy must be 3-d (A, C, B) of one shape", fn);
    if (gamma)
        CH_TRY(check_vec(fn, "gamma", gamma, x));
    CH_TRY(check_vec(fn, "mean", mean, x));
    CH_TRY(check_vec(fn, "inv_std", inv_std, x));
    int64_t A = x->dim[0], C = x->dim[1], B = x->dim[2];
    ch_dtype dt = (ch_dtype)x->dt;
    ch_tensor *xc = NULL, *gc = NULL, *gxt = NULL, *ggt = NULL, *gbt = NULL;
    double *g = NULL, *mu = NULL, *is = NULL, *acc = NULL;
    ch_status st = ch_contiguous_as(x, dt, &xc);
    if (st == CH_OK)
        st = ch_contiguous_as(gy, dt, &gc);
    if (st == CH_OK)
        st = load_vec(gamma, C, 1.0, &g);
    if (st == CH_OK)
        st = load_vec(mean, C, 0.0, &mu);
    if (st == CH_OK)
        st = load_vec(inv_std, C, 0.0, &is);
    if (st == CH_OK) {
        acc = (double *)malloc(sizeof(double) * (size_t)(2 * C + 1));
        if (!acc)
            st = ch_fail(CH_ERR_MEMORY, "%s: out of memory", fn);
    }
    if (st == CH_OK && gx)
        st = ch_tensor_new_like(x, dt, &gxt);
    if (st == CH_OK && ggamma)
        st = ch_tensor_new(dt, 1, &C, CH_CPU, &ggt);
    if (st == CH_OK && gbeta)
        st = ch_tensor_new(dt, 1, &C, CH_CPU, &gbt);
    if (st == CH_OK) {
        if (dt == CH_FLOAT32)
            bn_bwd_float(A, C, B, (const float *)ch_base(xc), (const float *)ch_base(gc), g, mu, is,
                         gxt ? (float *)gxt->data : NULL, acc, acc + C);
        else
            bn_bwd_double(A, C, B, (const double *)ch_base(xc), (const double *)ch_base(gc), g, mu, is,
                          gxt ? (double *)gxt->data : NULL, acc, acc + C);
        if (ggt)
            store_vec(ggt, acc, C);
        if (gbt)
            store_vec(gbt, acc + C, C);
    }
    free(g);
    free(mu);
    free(is);
    free(acc);
    ch_tensor_release(xc);
    ch_tensor_release(gc);
    if (st != CH_OK) {
        ch_tensor_release(gxt);
        ch_tensor_release(ggt);
        ch_tensor_release(gbt);
        return st;
    }
    if (gx)
        *gx = gxt;
    if (ggamma)
        *ggamma = ggt;
    if (gbeta)
        *gbeta = gbt;
    return CH_OK;
}

/* lrn.c -- local response normalization across channels (axis 1) and its
 * gradient.  x is seen as (N, C, S) with S the product of the trailing
 * axes; each (n, s) column runs a sliding window sum over c, so the cost
 * is O(N C S) whatever the window size.  Columns are independent: they
 * are split over threads by n, in a fixed order per column.
 */
#include "../core/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static ch_status check_x(const char *fn, const char *arg, const ch_tensor *t, const ch_tensor *like) {
    CH_CHECK_CPU(t, fn, arg);
    if (t->dt != CH_FLOAT32 && t->dt != CH_FLOAT64)
        return ch_fail(CH_ERR_DTYPE, "%s: %s must be float32 or float64 (got %s)", fn, arg,
                       ch_dtype_name((ch_dtype)t->dt));
    if (t->nd < 2)
        return ch_fail(CH_ERR_SHAPE, "%s: %s must have at least 2 dimensions (N, C, ...), got %d-d", fn, arg, t->nd);
    if (like && (t->dt != like->dt || !ch_same_shape(t, like)))
        return ch_fail(CH_ERR_SHAPE, "%s: %s must have the shape and dtype of x", fn, arg);
    return CH_OK;
}

static void lrn_dims(const ch_tensor *x, int64_t *N, int64_t *C, int64_t *S) {
    *N = x->dim[0];
    *C = x->dim[1];
    *S = 1;
    for (int a = 2; a < x->nd; a++)
        *S *= x->dim[a];
}

/* sum over the window |c' - c| <= h of v[c'] for every c, v strided by S. */
#define WINDOW_SUM(T)                                                                       \
    static void window_sum_##T(const double *v, int64_t C, int64_t h, double *out) {       \
        double s = 0;                                                                       \
        for (int64_t c = 0; c < C && c <= h; c++)                                           \
            s += v[c];                                                                      \
        for (int64_t c = 0; c < C; c++) {                                                   \
            out[c] = s;                                                                     \
            if (c + h + 1 < C)                                                              \
                s += v[c + h + 1];                                                          \
            if (c - h >= 0)                                                                 \
                s -= v[c - h];                                                              \
        }                                                                                   \
    }
WINDOW_SUM(d)

/* Runs image(n, v) for every image n, v being a scratch of 2 C + 1 doubles
 * per thread; on OpenMP's threads only when par holds. */
#define LRN_IMAGES(par, N, C, image)                                         \
    do {                                                                     \
        size_t vbytes_ = sizeof(double) * (size_t)(2 * (C) + 1);             \
        if (par) {                                                           \
            _Pragma("omp parallel")                                          \
            {                                                                \
                double *v = (double *)malloc(vbytes_);                       \
                _Pragma("omp for schedule(static)")                          \
                for (int64_t n = 0; n < (N); n++)                            \
                    image;                                                   \
                free(v);                                                     \
            }                                                                \
        } else {                                                             \
            double *v = (double *)malloc(vbytes_);                           \
            for (int64_t n = 0; n < (N); n++)                                \
                image;                                                       \
            free(v);                                                         \
        }                                                                    \
    } while (0)

#define LRN_FWD(T)                                                                                      \
    static void lrn_fwd_image_##T(int64_t n, int64_t C, int64_t S, const T *x, int64_t h, double k,      \
                                  double al, double be, T *y, T *us, double *v) {                       \
        for (int64_t s = 0; s < S; s++) {                                                               \
            const T *px = x + n * C * S + s;                                                            \
            for (int64_t c = 0; c < C; c++)                                                             \
                v[c] = (double)px[c * S] * px[c * S];                                                   \
            window_sum_d(v, C, h, v + C);                                                               \
            for (int64_t c = 0; c < C; c++) {                                                           \
                double u = k + al * v[C + c];                                                           \
                us[n * C * S + c * S + s] = (T)u;                                                       \
                y[n * C * S + c * S + s] = (T)(px[c * S] * pow(u, -be));                                \
            }                                                                                           \
        }                                                                                               \
    }                                                                                                   \
    static void lrn_fwd_##T(int64_t N, int64_t C, int64_t S, const T *x, int64_t h, double k, double al,  \
                            double be, T *y, T *us) {                                                   \
        int par = N > 1 && N * C * S >= CH_PARALLEL_GRAIN / 8 && ch_threads() > 1;                      \
        LRN_IMAGES(par, N, C, lrn_fwd_image_##T(n, C, S, x, h, k, al, be, y, us, v));                   \
    }
LRN_FWD(float)
LRN_FWD(double)

#define LRN_BWD(T)                                                                                        \
    static void lrn_bwd_image_##T(int64_t n, int64_t C, int64_t S, const T *x, const T *y, const T *us,   \
                                  const T *gy, int64_t h, double al, double be, T *gx, double *v) {       \
        for (int64_t s = 0; s < S; s++) {                                                                 \
            int64_t base = n * C * S + s;                                                                 \
            for (int64_t c = 0; c < C; c++) {                                                             \
                int64_t i = base + c * S;                                                                 \
                v[c] = (double)y[i] * gy[i] / us[i];                                                      \
            }                                                                                             \
            window_sum_d(v, C, h, v + C);                                                                 \
            for (int64_t c = 0; c < C; c++) {                                                             \
                int64_t i = base + c * S;                                                                 \
                gx[i] = (T)(gy[i] * pow((double)us[i], -be) - 2 * al * be * x[i] * v[C + c]);             \
            }                                                                                             \
        }                                                                                                 \
    }                                                                                                     \
    static void lrn_bwd_##T(int64_t N, int64_t C, int64_t S, const T *x, const T *y, const T *us,         \
                            const T *gy, int64_t h, double al, double be, T *gx) {                        \
        int par = N > 1 && N * C * S >= CH_PARALLEL_GRAIN / 8 && ch_threads() > 1;                        \
        LRN_IMAGES(par, N, C, lrn_bwd_image_##T(n, C, S, x, y, us, gy, h, al, be, gx, v));                \
    }
LRN_BWD(float)
LRN_BWD(double)

ch_status ch_lrn_forward(const ch_tensor *x, int64_t n, double k, double alpha, double beta, ch_tensor **y,
                         ch_tensor **unit_scale) {
    const char *fn = "local_response_normalization";
    CH_TRY(check_x(fn, "x", x, NULL));
    if (!y || !unit_scale)
        return ch_fail(CH_ERR_ARG, "%s: NULL result", fn);
    if (n < 1)
        return ch_fail(CH_ERR_ARG, "%s: n must be >= 1 (got %lld)", fn, (long long)n);
    int64_t N, C, S;
    lrn_dims(x, &N, &C, &S);
    ch_dtype dt = (ch_dtype)x->dt;
    ch_tensor *xc = NULL, *yt = NULL, *ut = NULL;
    ch_status st = ch_contiguous_as(x, dt, &xc);
    if (st == CH_OK)
        st = ch_tensor_new_like(x, dt, &yt);
    if (st == CH_OK)
        st = ch_tensor_new_like(x, dt, &ut);
    if (st == CH_OK) {
        if (dt == CH_FLOAT32)
            lrn_fwd_float(N, C, S, (const float *)ch_base(xc), n / 2, k, alpha, beta, (float *)yt->data,
                          (float *)ut->data);
        else
            lrn_fwd_double(N, C, S, (const double *)ch_base(xc), n / 2, k, alpha, beta, (double *)yt->data,
                           (double *)ut->data);
    }
    ch_tensor_release(xc);
    if (st != CH_OK) {
        ch_tensor_release(yt);
        ch_tensor_release(ut);
        return st;
    }
    *y = yt;
    *unit_scale = ut;
    return CH_OK;
}

ch_status ch_lrn_backward(const ch_tensor *x, const ch_tensor *y, const ch_tensor *unit_scale, const ch_tensor *gy,
                          int64_t n, double alpha, double beta, ch_tensor **gx) {
    const char *fn = "local_response_normalization_grad";
    CH_TRY(check_x(fn, "x", x, NULL));
    CH_TRY(check_x(fn, "y", y, x));
    CH_TRY(check_x(fn, "unit_scale", unit_scale, x));
    CH_TRY(check_x(fn, "gy", gy, x));
    if (!gx)
        return ch_fail(CH_ERR_ARG, "%s: NULL result", fn);
    if (n < 1)
        return ch_fail(CH_ERR_ARG, "%s: n must be >= 1 (got %lld)", fn, (long long)n);
    int64_t N, C, S;
    lrn_dims(x, &N, &C, &S);
    ch_dtype dt = (ch_dtype)x->dt;
    ch_tensor *xc = NULL, *yc = NULL, *uc = NULL, *gc = NULL, *out = NULL;
    ch_status st = ch_contiguous_as(x, dt, &xc);
    if (st == CH_OK)
        st = ch_contiguous_as(y, dt, &yc);
    if (st == CH_OK)
        st = ch_contiguous_as(unit_scale, dt, &uc);
    if (st == CH_OK)
        st = ch_contiguous_as(gy, dt, &gc);
    if (st == CH_OK)
        st = ch_tensor_new_like(x, dt, &out);
    if (st == CH_OK) {
        if (dt == CH_FLOAT32)
            lrn_bwd_float(N, C, S, (const float *)ch_base(xc), (const float *)ch_base(yc),
                          (const float *)ch_base(uc), (const float *)ch_base(gc), n / 2, alpha, beta,
                          (float *)out->data);
        else
            lrn_bwd_double(N, C, S, (const double *)ch_base(xc), (const double *)ch_base(yc),
                           (const double *)ch_base(uc), (const double *)ch_base(gc), n / 2, alpha, beta,
                           (double *)out->data);
    }
    ch_tensor_release(xc);
    ch_tensor_release(yc);
    ch_tensor_release(uc);
    ch_tensor_release(gc);
    if (st != CH_OK) {
        ch_tensor_release(out);
        return st;
    }
    *gx = out;
    return CH_OK;
}

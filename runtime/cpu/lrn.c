/* lrn.c -- local response normalization across channels (axis 1) and its
 * gradient.  x is seen as (N, C, S) with S the product of the trailing
 * axes; each (n, s) column runs a sliding window sum over c, so the cost
 * is O(N C S) whatever the window size.  Columns are independent: they
 * are split over threads by n, in a fixed order per column.
 * Front door (checks, contiguous float32/float64 operands, outputs):
 * runtime/ops/lrn.c.
 */
#include "../core/internal.h"
#include "../core/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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

ch_status ch_cpu_lrn_forward(const ch_tensor *x, int64_t half, double k, double alpha, double beta, ch_tensor *y,
                            ch_tensor *unit_scale) {
    int64_t N, C, S;
    lrn_dims(x, &N, &C, &S);
    if (x->dt == CH_FLOAT32)
        lrn_fwd_float(N, C, S, (const float *)ch_base(x), half, k, alpha, beta, (float *)ch_base(y),
                      (float *)ch_base(unit_scale));
    else
        lrn_fwd_double(N, C, S, (const double *)ch_base(x), half, k, alpha, beta, (double *)ch_base(y),
                       (double *)ch_base(unit_scale));
    return CH_OK;
}

ch_status ch_cpu_lrn_backward(const ch_tensor *x, const ch_tensor *y, const ch_tensor *unit_scale, const ch_tensor *gy,
                             int64_t half, double alpha, double beta, ch_tensor *gx) {
    int64_t N, C, S;
    lrn_dims(x, &N, &C, &S);
    if (x->dt == CH_FLOAT32)
        lrn_bwd_float(N, C, S, (const float *)ch_base(x), (const float *)ch_base(y), (const float *)ch_base(unit_scale),
                      (const float *)ch_base(gy), half, alpha, beta, (float *)ch_base(gx));
    else
        lrn_bwd_double(N, C, S, (const double *)ch_base(x), (const double *)ch_base(y),
                       (const double *)ch_base(unit_scale), (const double *)ch_base(gy), half, alpha, beta,
                       (double *)ch_base(gx));
    return CH_OK;
}

/* batch_norm.c -- fused batch normalization over an (A, C, B) view: the
 * statistics and the normalized output in two passes over x, and the
 * gradient in two passes over (x, gy).  Layer and group normalization
 * reuse it with A = 1 (one "channel" per row / per group).
 *
 * Channels are independent, so they are split over OpenMP threads; each
 * channel's sums run in a fixed order in double, so the results do not
 * depend on the thread count.  The variance is the mean of squared
 * deviations (two passes), which stays accurate for large means.
 *
 * Each sum is BN_LANES interleaved partial sums (element b of a row goes to
 * lane b % BN_LANES), added together in lane order at the end: an order
 * fixed by the shape alone, which the compiler vectorizes.  A single
 * running double sum is one add per floating-point latency, and made these
 * kernels ~9 % of a ResNet-18 training step.
 * Front doors (checks, contiguous operands, outputs):
 * runtime/ops/batch_norm.c.
 */
#include "../core/internal.h"
#include "../core/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The per-channel vector t (contiguous float64), or v filled with fill. */
static const double *vec_or(const ch_tensor *t, int64_t C, double fill, double *v) {
    if (t)
        return (const double *)ch_base(t);
    for (int64_t c = 0; c < C; c++)
        v[c] = fill;
    return v;
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

/* Each channel's passes are compiled twice: for the library's baseline
 * (x86-64-v2: two doubles a vector) and for AVX-512 (eight), chosen per
 * call; the double arithmetic of the passes made them compute-bound. */
#if defined(__x86_64__) && defined(__GNUC__)
#define BN_HAVE_AVX512 1
#define BN_TARGET512 __attribute__((target("avx512f,avx512vl,avx512dq,avx2,fma")))
#define BN_WIDE(name) name##_avx512
#else
#define BN_HAVE_AVX512 0
#define BN_WIDE(name) name
#endif

/* NAME(A, C, B, c, ...) for every channel c, over the threads when the
 * work is large enough, the AVX-512 build where the CPU has it. */
#define BN_EACH_CHANNEL(A, C, B, NAME, ...)                                                                   \
    do {                                                                                                      \
        int par_ = (C) > 1 && (A) * (B) * (C) >= CH_PARALLEL_GRAIN / 4 && ch_threads() > 1;                   \
        bool wide_ = BN_HAVE_AVX512 && ch_cpu_avx512f();                                                      \
        CH_PAR_FOR_DYNAMIC(par_, ch_dynamic_chunk(C), int64_t c = 0; c < (C); c++, {                          \
            if (wide_)                                                                                        \
                BN_WIDE(NAME)(A, C, B, c, __VA_ARGS__);                                                       \
            else                                                                                              \
                NAME(A, C, B, c, __VA_ARGS__);                                                                \
        });                                                                                                   \
    } while (0)

#define BN_LANES 16

static inline double bn_lanes_total(const double *acc) {
    double t = 0;
    for (int j = 0; j < BN_LANES; j++)
        t += acc[j];
    return t;
}

/* for each element of row p (length B): acc[lane] += EXPR(v), v the element */
#define BN_ROW_LANES(p, B, acc, EXPR)                                                                      \
    do {                                                                                                   \
        int64_t b_ = 0;                                                                                    \
        for (; b_ + BN_LANES <= (B); b_ += BN_LANES)                                                       \
            for (int j_ = 0; j_ < BN_LANES; j_++)                                                          \
                acc[j_] += EXPR((p)[b_ + j_]);                                                             \
        for (int j_ = 0; b_ + j_ < (B); j_++)                                                              \
            acc[j_] += EXPR((p)[b_ + j_]);                                                                 \
    } while (0)

/* (v - mu)^2 in double, mu the channel's mean (in scope where it is used) */
#define BN_SQDEV(v) (((double)(v) - mu) * ((double)(v) - mu))

#define BN_FWD_CHANNEL(T, SUFFIX, ATTR)                                                                       \
    static ATTR void bn_fwd_channel_##T##SUFFIX(int64_t A, int64_t C, int64_t B, int64_t c, const T *x,       \
                                                const double *gamma, const double *beta, double eps, T *y,    \
                                                double *mean, double *var, double *istd) {                    \
        double m = (double)(A * B), s[BN_LANES] = { 0 }, q[BN_LANES] = { 0 };                                 \
        for (int64_t a = 0; a < A; a++)                                                                       \
            BN_ROW_LANES(x + (a * C + c) * B, B, s, (double));                                                \
        double mu = m > 0 ? bn_lanes_total(s) / m : 0;                                                        \
        for (int64_t a = 0; a < A; a++)                                                                       \
            BN_ROW_LANES(x + (a * C + c) * B, B, q, BN_SQDEV);                                                \
        double v = m > 0 ? bn_lanes_total(q) / m : 0, is = 1.0 / sqrt(v + eps);                               \
        mean[c] = mu;                                                                                         \
        var[c] = v;                                                                                           \
        istd[c] = is;                                                                                         \
        if (y) {                                                                                              \
            double sc = gamma[c] * is, sh = beta[c] - mu * sc;                                                \
            for (int64_t a = 0; a < A; a++) {                                                                 \
                const T *p = x + (a * C + c) * B;                                                             \
                T *q2 = y + (a * C + c) * B;                                                                  \
                for (int64_t b = 0; b < B; b++)                                                               \
                    q2[b] = (T)(p[b] * sc + sh);                                                              \
            }                                                                                                 \
        }                                                                                                     \
    }
BN_FWD_CHANNEL(float, , )
BN_FWD_CHANNEL(double, , )
#if BN_HAVE_AVX512
BN_FWD_CHANNEL(float, _avx512, BN_TARGET512)
BN_FWD_CHANNEL(double, _avx512, BN_TARGET512)
#endif

#define BN_FWD(T)                                                                                             \
    static void bn_fwd_##T(int64_t A, int64_t C, int64_t B, const T *x, const double *gamma,                  \
                           const double *beta, double eps, T *y, double *mean, double *var, double *istd) {   \
        BN_EACH_CHANNEL(A, C, B, bn_fwd_channel_##T, x, gamma, beta, eps, y, mean, var, istd);                \
    }
BN_FWD(float)
BN_FWD(double)

ch_status ch_cpu_batch_norm_forward(const ch_tensor *x, const ch_tensor *gamma, const ch_tensor *beta, double eps,
                                   ch_tensor *y, ch_tensor *mean, ch_tensor *var, ch_tensor *inv_std) {
    int64_t A = x->dim[0], C = x->dim[1], B = x->dim[2];
    double *st3 = (double *)malloc(sizeof(double) * (size_t)(5 * C + 1));
    if (!st3)
        return ch_fail(CH_ERR_MEMORY, "batch_normalization: out of memory");
    const double *g = vec_or(gamma, C, 1.0, st3 + 3 * C), *b = vec_or(beta, C, 0.0, st3 + 4 * C);
    if (x->dt == CH_FLOAT32)
        bn_fwd_float(A, C, B, (const float *)ch_base(x), g, b, eps, y ? (float *)y->data : NULL, st3, st3 + C,
                     st3 + 2 * C);
    else
        bn_fwd_double(A, C, B, (const double *)ch_base(x), g, b, eps, y ? (double *)y->data : NULL, st3, st3 + C,
                      st3 + 2 * C);
    if (mean)
        store_vec(mean, st3, C);
    if (var)
        store_vec(var, st3 + C, C);
    if (inv_std)
        store_vec(inv_std, st3 + 2 * C, C);
    free(st3);
    return CH_OK;
}
#define BN_BWD_CHANNEL(T, SUFFIX, ATTR)                                                                        \
    static ATTR void bn_bwd_channel_##T##SUFFIX(int64_t A, int64_t C, int64_t B, int64_t c, const T *x,        \
                                                const T *gy, const double *gamma, const double *mean,          \
                                                const double *istd, T *gx, double *gg, double *gb) {           \
        double mu = mean[c], is = istd[c], m = (double)(A * B), sgl[BN_LANES] = { 0 }, sgxl[BN_LANES] = { 0 }; \
        for (int64_t a = 0; a < A; a++) {                                                                      \
            const T *px = x + (a * C + c) * B, *pg = gy + (a * C + c) * B;                                     \
            int64_t b = 0;                                                                                     \
            for (; b + BN_LANES <= B; b += BN_LANES)                                                           \
                for (int j = 0; j < BN_LANES; j++) {                                                           \
                    sgl[j] += pg[b + j];                                                                       \
                    sgxl[j] += pg[b + j] * (px[b + j] - mu);                                                   \
                }                                                                                              \
            for (int j = 0; b + j < B; j++) {                                                                  \
                sgl[j] += pg[b + j];                                                                           \
                sgxl[j] += pg[b + j] * (px[b + j] - mu);                                                       \
            }                                                                                                  \
        }                                                                                                      \
        double sg = bn_lanes_total(sgl), sgx = bn_lanes_total(sgxl);                                           \
        double ggamma = sgx * is;                                                                              \
        gg[c] = ggamma;                                                                                        \
        gb[c] = sg;                                                                                            \
        if (gx && m > 0) {                                                                                     \
            double k = gamma[c] * is, mg = sg / m, mgx = ggamma / m;                                           \
            for (int64_t a = 0; a < A; a++) {                                                                  \
                const T *px = x + (a * C + c) * B, *pg = gy + (a * C + c) * B;                                 \
                T *po = gx + (a * C + c) * B;                                                                  \
                for (int64_t b = 0; b < B; b++) {                                                              \
                    double xh = (px[b] - mu) * is;                                                             \
                    po[b] = (T)(k * (pg[b] - xh * mgx - mg));                                                  \
                }                                                                                              \
            }                                                                                                  \
        }                                                                                                      \
    }
BN_BWD_CHANNEL(float, , )
BN_BWD_CHANNEL(double, , )
#if BN_HAVE_AVX512
BN_BWD_CHANNEL(float, _avx512, BN_TARGET512)
BN_BWD_CHANNEL(double, _avx512, BN_TARGET512)
#endif

#define BN_BWD(T)                                                                                             \
    static void bn_bwd_##T(int64_t A, int64_t C, int64_t B, const T *x, const T *gy, const double *gamma,     \
                           const double *mean, const double *istd, T *gx, double *gg, double *gb) {           \
        BN_EACH_CHANNEL(A, C, B, bn_bwd_channel_##T, x, gy, gamma, mean, istd, gx, gg, gb);                   \
    }
BN_BWD(float)
BN_BWD(double)

ch_status ch_cpu_batch_norm_backward(const ch_tensor *x, const ch_tensor *gamma, const ch_tensor *gy,
                                    const ch_tensor *mean, const ch_tensor *inv_std, ch_tensor *gx, ch_tensor *ggamma,
                                    ch_tensor *gbeta) {
    int64_t A = x->dim[0], C = x->dim[1], B = x->dim[2];
    double *acc = (double *)malloc(sizeof(double) * (size_t)(3 * C + 1));
    if (!acc)
        return ch_fail(CH_ERR_MEMORY, "batch_normalization_grad: out of memory");
    const double *g = vec_or(gamma, C, 1.0, acc + 2 * C);
    const double *mu = (const double *)ch_base(mean), *is = (const double *)ch_base(inv_std);
    if (x->dt == CH_FLOAT32)
        bn_bwd_float(A, C, B, (const float *)ch_base(x), (const float *)ch_base(gy), g, mu, is,
                     gx ? (float *)gx->data : NULL, acc, acc + C);
    else
        bn_bwd_double(A, C, B, (const double *)ch_base(x), (const double *)ch_base(gy), g, mu, is,
                      gx ? (double *)gx->data : NULL, acc, acc + C);
    if (ggamma)
        store_vec(ggamma, acc, C);
    if (gbeta)
        store_vec(gbeta, acc + C, C);
    free(acc);
    return CH_OK;
}

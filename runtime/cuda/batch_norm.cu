/*
 * batch_norm.cu -- batch normalization over the (A, C, B) view on the GPU
 * with the CPU's formulas and order (runtime/cpu/batch_norm.c): per
 * channel, the mean and then the mean of squared deviations summed in
 * double as BN_LANES interleaved partial sums (element b of each row to
 * lane b % BN_LANES, lanes added in order at the end), inv_std =
 * 1 / sqrt(var + eps), y = x * scale + shift; the gradient's per-channel
 * sums likewise, then gx = gamma inv_std (gy - xhat mean(gy xhat) - mean(gy)).
 *
 * One item per channel for the sums (each a serial loop over A * B
 * values, in the CPU's order: the same bits, but only C threads busy, so
 * large batches are slow; a tree reduction would be faster and no longer
 * match the CPU bit for bit), one item per element for y and gx.
 * Compiled with --fmad=false.  Compiled and tested emulated on the host
 * (tests/cuda/test_batch_norm.cu, bit for bit against the CPU); not yet run
 * on a GPU.
 */
#include "backend.h"
#include "launch.cuh"

#include <math.h>

/* The CPU's lane count and lane total (runtime/cpu/batch_norm.c). */
#define BN_LANES 16
CU_HD double bn_lanes_total(const double *acc) {
    double t = 0;
    for (int j = 0; j < BN_LANES; j++)
        t += acc[j];
    return t;
}

/* Per channel c: mean, var, inv_std into st (3 C doubles), and into the
 * outputs of x's type that are given. */
template <typename T> struct bn_stats_step {
    int64_t A, C, B;
    const T *x;
    double eps;
    double *st;
    T *mean, *var, *istd;

    CU_HD void operator()(int64_t c) const {
        double m = (double)(A * B), s[BN_LANES] = { 0 }, q[BN_LANES] = { 0 };
        for (int64_t a = 0; a < A; a++) {
            const T *p = x + (a * C + c) * B;
            for (int64_t b = 0; b < B; b++)
                s[b % BN_LANES] += (double)p[b];
        }
        double mu = m > 0 ? bn_lanes_total(s) / m : 0;
        for (int64_t a = 0; a < A; a++) {
            const T *p = x + (a * C + c) * B;
            for (int64_t b = 0; b < B; b++)
                q[b % BN_LANES] += ((double)p[b] - mu) * ((double)p[b] - mu);
        }
        double v = m > 0 ? bn_lanes_total(q) / m : 0, is = 1.0 / sqrt(v + eps);
        st[c] = mu, st[C + c] = v, st[2 * C + c] = is;
        if (mean)
            mean[c] = (T)mu;
        if (var)
            var[c] = (T)v;
        if (istd)
            istd[c] = (T)is;
    }
};

template <typename T> struct bn_normalize_step {
    int64_t C, B;
    const T *x;
    const double *gamma, *beta, *st;
    T *y;

    CU_HD void operator()(int64_t i) const {
        int64_t c = (i / B) % C;
        double sc = (gamma ? gamma[c] : 1.0) * st[2 * C + c], sh = (beta ? beta[c] : 0.0) - st[c] * sc;
        y[i] = (T)(x[i] * sc + sh);
    }
};

/* Per channel c: sum(gy) and sum(gy (x - mean)) inv_std into acc (2 C
 * doubles) and the outputs given. */
template <typename T> struct bn_grad_sums_step {
    int64_t A, C, B;
    const T *x, *gy;
    const double *mean, *istd;
    double *acc;
    T *ggamma, *gbeta;

    CU_HD void operator()(int64_t c) const {
        double mu = mean[c], sgl[BN_LANES] = { 0 }, sgxl[BN_LANES] = { 0 };
        for (int64_t a = 0; a < A; a++) {
            const T *px = x + (a * C + c) * B, *pg = gy + (a * C + c) * B;
            for (int64_t b = 0; b < B; b++) {
                sgl[b % BN_LANES] += pg[b];
                sgxl[b % BN_LANES] += pg[b] * (px[b] - mu);
            }
        }
        double sg = bn_lanes_total(sgl), sgx = bn_lanes_total(sgxl);
        double gg = sgx * istd[c];
        acc[c] = gg, acc[C + c] = sg;
        if (ggamma)
            ggamma[c] = (T)gg;
        if (gbeta)
            gbeta[c] = (T)sg;
    }
};

template <typename T> struct bn_grad_x_step {
    int64_t C, B;
    double m;
    const T *x, *gy;
    const double *gamma, *mean, *istd, *acc;
    T *gx;

    CU_HD void operator()(int64_t i) const {
        int64_t c = (i / B) % C;
        double is = istd[c], k = (gamma ? gamma[c] : 1.0) * is, mg = acc[C + c] / m, mgx = acc[c] / m;
        double xh = (x[i] - mean[c]) * is;
        gx[i] = (T)(k * (gy[i] - xh * mgx - mg));
    }
};

template <typename T>
static ch_status forward(int64_t A, int64_t C, int64_t B, const char *x, const double *gamma, const double *beta,
                         double eps, double *st, char *y, char *mean, char *var, char *istd) {
    CU_TRY(cu_each("batch_normalization", C,
                   bn_stats_step<T>{A, C, B, (const T *)x, eps, st, (T *)mean, (T *)var, (T *)istd}));
    if (!y)
        return CH_OK;
    return cu_each("batch_normalization", A * C * B, bn_normalize_step<T>{C, B, (const T *)x, gamma, beta, st, (T *)y});
}

template <typename T>
static ch_status backward(int64_t A, int64_t C, int64_t B, const char *x, const double *gamma, const char *gy,
                          const double *mean, const double *istd, double *acc, char *gx, char *ggamma, char *gbeta) {
    CU_TRY(cu_each("batch_normalization_grad", C,
                   bn_grad_sums_step<T>{A, C, B, (const T *)x, (const T *)gy, mean, istd, acc, (T *)ggamma,
                                        (T *)gbeta}));
    if (!gx || A * B == 0)
        return CH_OK;
    return cu_each("batch_normalization_grad", A * C * B,
                   bn_grad_x_step<T>{C, B, (double)(A * B), (const T *)x, (const T *)gy, gamma, mean, istd, acc,
                                     (T *)gx});
}

extern "C" ch_status cu_batch_norm_forward_launch(int dt, int64_t A, int64_t C, int64_t B, const char *x,
                                                  const double *gamma, const double *beta, double eps, double *st,
                                                  char *y, char *mean, char *var, char *istd) {
    if (dt == CH_FLOAT32)
        return forward<float>(A, C, B, x, gamma, beta, eps, st, y, mean, var, istd);
    return forward<double>(A, C, B, x, gamma, beta, eps, st, y, mean, var, istd);
}

extern "C" ch_status cu_batch_norm_backward_launch(int dt, int64_t A, int64_t C, int64_t B, const char *x,
                                                   const double *gamma, const char *gy, const double *mean,
                                                   const double *istd, double *acc, char *gx, char *ggamma,
                                                   char *gbeta) {
    if (dt == CH_FLOAT32)
        return backward<float>(A, C, B, x, gamma, gy, mean, istd, acc, gx, ggamma, gbeta);
    return backward<double>(A, C, B, x, gamma, gy, mean, istd, acc, gx, ggamma, gbeta);
}

/*
 * lrn.cu -- local response normalisation across channels and its gradient
 * on the GPU (host side: lrn.c), the project's own kernel rather than
 * cuDNN's LRN: cuDNN's cross-channel LRN takes its window and formula in
 * its own way (and cannot be emulated here), while this kernel follows the
 * CPU's (runtime/cpu/lrn.c) operation for operation.
 *
 * One item per column (n, s) of the (N, C, S) view: it runs the CPU's
 * sliding window over c (add the entering square, subtract the leaving
 * one, in double), recomputing each square when it leaves the window
 * instead of keeping a scratch row, which gives the same values.
 * Neighbouring items are neighbouring s, so the accesses at each c are
 * coalesced; the parallelism is N*S columns (plenty for images, little for
 * a (N, C) input).  pow is CUDA's on a GPU (within two ulp of glibc's), so
 * y and gx may differ from the CPU's in the last bits there; emulated on
 * the host the results are the CPU's bits.  Compiled with --fmad=false.
 *
 * Compiled here, NOT yet executed on a GPU: tests/cuda/test_lrn.cu runs it
 * emulated on the host against the CPU.
 */
#include "backend.h"
#include "launch.cuh"

/* The window sum over |c' - c| <= h of v(c'), slid over c = 0..C-1 as the
 * CPU's window_sum: out(c, sum) is called for every c in order. */
template <typename V, typename Out> CU_HD void lrn_window(int64_t C, int64_t h, const V &v, const Out &out) {
    double s = 0;
    for (int64_t c = 0; c < C && c <= h; c++)
        s += v(c);
    for (int64_t c = 0; c < C; c++) {
        out(c, s);
        if (c + h + 1 < C)
            s += v(c + h + 1);
        if (c - h >= 0)
            s -= v(c - h);
    }
}

template <typename T> struct lrn_fwd_column {
    const T *x;
    T *y, *us;
    int64_t C, S, h;
    double k, al, be;

    CU_HD void operator()(int64_t col) const {
        int64_t n = col / S, s = col % S, base = n * C * S + s;
        const T *px = x + base;
        auto sq = [&](int64_t c) { return (double)px[c * S] * px[c * S]; };
        auto put = [&](int64_t c, double sum) {
            double u = k + al * sum;
            us[base + c * S] = (T)u;
            y[base + c * S] = (T)(px[c * S] * pow(u, -be));
        };
        lrn_window(C, h, sq, put);
    }
};

template <typename T> struct lrn_bwd_column {
    const T *x, *y, *us, *gy;
    T *gx;
    int64_t C, S, h;
    double al, be;

    CU_HD void operator()(int64_t col) const {
        int64_t n = col / S, s = col % S, base = n * C * S + s;
        auto term = [&](int64_t c) {
            int64_t i = base + c * S;
            return (double)y[i] * gy[i] / us[i];
        };
        auto put = [&](int64_t c, double sum) {
            int64_t i = base + c * S;
            gx[i] = (T)(gy[i] * pow((double)us[i], -be) - 2 * al * be * x[i] * sum);
        };
        lrn_window(C, h, term, put);
    }
};

extern "C" ch_status cu_lrn_forward_launch(int dt, int64_t N, int64_t C, int64_t S, int64_t h, double k, double al,
                                           double be, const char *x, char *y, char *us) {
    const char *fn = "local_response_normalization";
    if (dt == CH_FLOAT32)
        return cu_each(fn, N * S, lrn_fwd_column<float>{(const float *)x, (float *)y, (float *)us, C, S, h, k, al, be});
    return cu_each(fn, N * S, lrn_fwd_column<double>{(const double *)x, (double *)y, (double *)us, C, S, h, k, al, be});
}

extern "C" ch_status cu_lrn_backward_launch(int dt, int64_t N, int64_t C, int64_t S, int64_t h, double al, double be,
                                            const char *x, const char *y, const char *us, const char *gy, char *gx) {
    const char *fn = "local_response_normalization_grad";
    if (dt == CH_FLOAT32)
        return cu_each(fn, N * S, lrn_bwd_column<float>{(const float *)x, (const float *)y, (const float *)us,
                                                        (const float *)gy, (float *)gx, C, S, h, al, be});
    return cu_each(fn, N * S, lrn_bwd_column<double>{(const double *)x, (const double *)y, (const double *)us,
                                                     (const double *)gy, (double *)gx, C, S, h, al, be});
}

/*
 * im2col.cu -- Chainer-layout im2col and col2im on the GPU (the CPU's are in
 * runtime/cpu/conv_kernels.h), item-parallel with cu_each:
 *   - im2col: one item per column element (N, C, *k, *out): the input cell
 *     it reads, or 0 in the padding;
 *   - col2im: one item per image element (N, C, *in), gathering the column
 *     elements that cover it, kernel positions in C order.  For a given
 *     kernel position at most one output position covers a cell, so this is
 *     exactly the order in which the CPU's scatter adds into that cell: the
 *     same bits, without atomics, deterministic.  The cost is a loop over
 *     all prod(k) kernel positions per cell (most of them miss when the
 *     stride exceeds 1).
 * No multiply-adds on the data (only index arithmetic), so no --fmad flag
 * is needed.
 *
 * Compiled; the per-item code is tested emulated on the host against the
 * CPU (tests/cuda/test_im2col.cu).  NOT yet run on a GPU.
 */
#include "backend.h"
#include "launch.cuh"

template <typename T> struct im2col_body {
    ch_conv_geom g;
    const T *x;
    T *col;
    CU_HD void operator()(int64_t e) const {
        int64_t r = e, off = 0, mult = 1;
        int64_t o[CH_MAX_DIMS / 2];
        for (int a = g.nsp - 1; a >= 0; a--) {
            o[a] = r % g.out[a];
            r /= g.out[a];
        }
        for (int a = g.nsp - 1; a >= 0; a--) {
            int64_t k = r % g.k[a];
            r /= g.k[a];
            int64_t i = o[a] * g.s[a] - g.p[a] + k * g.d[a];
            if (i < 0 || i >= g.in[a]) {
                col[e] = (T)0;
                return;
            }
            off += i * mult;
            mult *= g.in[a];
        }
        col[e] = x[r * g.Pin + off]; /* r is n * C + c */
    }
};

template <typename T> struct col2im_body {
    ch_conv_geom g;
    const T *col;
    T *x;
    CU_HD void operator()(int64_t e) const {
        int64_t i[CH_MAX_DIMS / 2], r = e;
        for (int a = g.nsp - 1; a >= 0; a--) {
            i[a] = r % g.in[a];
            r /= g.in[a];
        }
        const T *cols = col + r * g.Kk * g.P; /* r is n * C + c: its Kk rows of P */
        T acc = (T)0;
        for (int64_t q = 0; q < g.Kk; q++) {
            int64_t rest = q, pos = 0, mult = 1;
            bool hit = true;
            for (int a = g.nsp - 1; a >= 0 && hit; a--) {
                int64_t k = rest % g.k[a];
                rest /= g.k[a];
                int64_t t = i[a] + g.p[a] - k * g.d[a];
                hit = t >= 0 && t % g.s[a] == 0 && t / g.s[a] < g.out[a];
                pos += (t / g.s[a]) * mult;
                mult *= g.out[a];
            }
            if (hit)
                acc += cols[q * g.P + pos];
        }
        x[e] = acc;
    }
};

extern "C" ch_status cu_im2col_launch(const ch_conv_geom *g, int dt, const char *x, char *col, int64_t n) {
    if (dt == CH_FLOAT32)
        return cu_each("im2col", n, im2col_body<float>{*g, (const float *)x, (float *)col});
    return cu_each("im2col", n, im2col_body<double>{*g, (const double *)x, (double *)col});
}

extern "C" ch_status cu_col2im_launch(const ch_conv_geom *g, int dt, const char *col, char *x, int64_t n) {
    if (dt == CH_FLOAT32)
        return cu_each("col2im", n, col2im_body<float>{*g, (const float *)col, (float *)x});
    return cu_each("col2im", n, col2im_body<double>{*g, (const double *)col, (double *)x});
}

/*
 * pooling.cu -- max and average pooling over 1 to 3 spatial axes and the
 * scatter / gather kernels of their gradients, on the GPU, with the CPU's
 * exact semantics (runtime/cpu/pooling.c): windows clipped to the input,
 * any padding and cover_all extents, the first maximum (strict '>') and
 * its flat window position, and the three average divisors (the window
 * size, the cells inside the input, none).
 *
 * The project's own kernels rather than cuDNN's pooling: cuDNN has no
 * argmax output, and its average modes do not match Chainer's padding
 * rule for every shape.  Forward passes and gather take one item per
 * output; the scatters (max-pool and average-pool gradients) take one item
 * per input cell and add the windows that cover it in ascending window
 * order, which is the order the CPU adds them in: no atomics, and the
 * same bits as the CPU.  Compiled with --fmad=false; the cost is reading
 * the window positions of every covering window (k/s per axis) per cell.
 *
 * Compiled and tested emulated on the host (tests/cuda/test_pooling.cu,
 * bit for bit against the CPU); not yet run on a GPU.
 */
#include "backend.h"
#include "launch.cuh"

#include <math.h>

/* ch_pool_geom by value (the kernel parameters) */
struct pool_g {
    int64_t planes, in[3], out[3], k[3], s[3], p[3], in_n, out_n, kn;
};

static pool_g to_g(const ch_pool_geom *g) {
    pool_g r;
    r.planes = g->planes;
    for (int a = 0; a < 3; a++)
        r.in[a] = g->in[a], r.out[a] = g->out[a], r.k[a] = g->k[a], r.s[a] = g->s[a], r.p[a] = g->p[a];
    r.in_n = g->in_n, r.out_n = g->out_n, r.kn = g->kn;
    return r;
}

/* The divisor of window (o0, o1, o2), as the CPU's avg_div. */
CU_HD double avg_divisor(const pool_g &g, int mode, const int64_t *o) {
    if (mode == 0)
        return (double)g.kn;
    if (mode == 2)
        return 1.0;
    int64_t n = 1;
    for (int a = 0; a < 3; a++) {
        int64_t lo = o[a] * g.s[a] - g.p[a], hi = lo + g.k[a];
        if (lo < 0)
            lo = 0;
        if (hi > g.in[a])
            hi = g.in[a];
        n *= hi > lo ? hi - lo : 0;
    }
    return n > 0 ? (double)n : 1.0;
}

/* Splits flat index i of (planes, e0, e1, e2) into the plane and position. */
CU_HD int64_t split(int64_t i, const int64_t *e, int64_t *pos) {
    pos[2] = i % e[2];
    i /= e[2];
    pos[1] = i % e[1];
    i /= e[1];
    pos[0] = i % e[0];
    return i / e[0];
}

/* The windows covering input cell x on axis a: [lo, hi] (empty: lo > hi). */
CU_HD void covering(const pool_g &g, int a, int64_t x, int64_t *lo, int64_t *hi) {
    int64_t first = x + g.p[a] - g.k[a] + 1;
    *lo = first <= 0 ? 0 : (first + g.s[a] - 1) / g.s[a];
    int64_t last = (x + g.p[a]) / g.s[a];
    *hi = last < g.out[a] - 1 ? last : g.out[a] - 1;
}

template <typename T> struct max_forward_step {
    pool_g g;
    const T *x;
    T *y;
    int32_t *ix;

    CU_HD void operator()(int64_t i) const {
        int64_t o[3];
        const T *xp = x + split(i, g.out, o) * g.in_n;
        int64_t lo[3], k0[3], k1[3];
        for (int a = 0; a < 3; a++) {
            lo[a] = o[a] * g.s[a] - g.p[a];
            k0[a] = lo[a] < 0 ? -lo[a] : 0;
            k1[a] = g.in[a] - lo[a] < g.k[a] ? g.in[a] - lo[a] : g.k[a];
        }
        T best = (T)-INFINITY;
        int64_t bi = -1;
        if (k0[0] < k1[0] && k0[1] < k1[1] && k0[2] < k1[2]) {
            best = xp[((lo[0] + k0[0]) * g.in[1] + lo[1] + k0[1]) * g.in[2] + lo[2] + k0[2]];
            bi = (k0[0] * g.k[1] + k0[1]) * g.k[2] + k0[2];
        }
        for (int64_t kd = k0[0]; kd < k1[0]; kd++)
            for (int64_t kh = k0[1]; kh < k1[1]; kh++) {
                const T *row = xp + ((lo[0] + kd) * g.in[1] + lo[1] + kh) * g.in[2] + lo[2];
                int64_t kb = (kd * g.k[1] + kh) * g.k[2];
                for (int64_t kw = k0[2]; kw < k1[2]; kw++)
                    if (row[kw] > best) { /* strict: the first maximum */
                        best = row[kw];
                        bi = kb + kw;
                    }
            }
        y[i] = best;
        if (ix)
            ix[i] = (int32_t)(bi < 0 ? 0 : bi);
    }
};

/* The input cell (in its plane) of window o at window position idx, or -1. */
CU_HD int64_t window_cell(const pool_g &g, const int64_t *o, int64_t idx) {
    if (idx < 0 || idx >= g.kn)
        return -1;
    int64_t kpos[3] = {idx / (g.k[2] * g.k[1]), (idx / g.k[2]) % g.k[1], idx % g.k[2]}, c = 0;
    for (int a = 0; a < 3; a++) {
        int64_t v = o[a] * g.s[a] - g.p[a] + kpos[a];
        if (v < 0 || v >= g.in[a])
            return -1;
        c = c * g.in[a] + v;
    }
    return c;
}

template <typename T> struct max_gather_step {
    pool_g g;
    const T *x;
    const int32_t *ix;
    T *y;

    CU_HD void operator()(int64_t i) const {
        int64_t o[3];
        int64_t pl = split(i, g.out, o);
        int64_t c = window_cell(g, o, ix[i]);
        y[i] = c >= 0 ? x[pl * g.in_n + c] : (T)0;
    }
};

/* One input cell: the sum over the windows covering it, in ascending
 * window order, of gy (max: where the window's position names the cell;
 * average: divided by the window's divisor). */
template <typename T> struct scatter_step {
    pool_g g;
    int avg, mode;
    const T *gy;
    const int32_t *ix;
    T *gx;

    CU_HD void operator()(int64_t i) const {
        int64_t c[3];
        int64_t base = split(i, g.in, c) * g.out_n;
        int64_t lo[3], hi[3];
        for (int a = 0; a < 3; a++)
            covering(g, a, c[a], &lo[a], &hi[a]);
        T sum = 0;
        int64_t o[3];
        for (o[0] = lo[0]; o[0] <= hi[0]; o[0]++)
            for (o[1] = lo[1]; o[1] <= hi[1]; o[1]++)
                for (o[2] = lo[2]; o[2] <= hi[2]; o[2]++) {
                    int64_t at = base + (o[0] * g.out[1] + o[1]) * g.out[2] + o[2];
                    if (avg) {
                        sum += (T)(gy[at] / (T)avg_divisor(g, mode, o));
                        continue;
                    }
                    int64_t kpos = 0;
                    for (int a = 0; a < 3; a++)
                        kpos = kpos * g.k[a] + c[a] + g.p[a] - o[a] * g.s[a];
                    if (ix[at] == kpos)
                        sum += gy[at];
                }
        gx[i] = sum;
    }
};

template <typename T> struct avg_forward_step {
    pool_g g;
    int mode;
    const T *x;
    T *y;

    CU_HD void operator()(int64_t i) const {
        int64_t o[3];
        const T *xp = x + split(i, g.out, o) * g.in_n;
        int64_t lo[3], hi[3];
        for (int a = 0; a < 3; a++) {
            lo[a] = o[a] * g.s[a] - g.p[a];
            hi[a] = lo[a] + g.k[a];
            if (lo[a] < 0)
                lo[a] = 0;
            if (hi[a] > g.in[a])
                hi[a] = g.in[a];
        }
        T acc = 0;
        for (int64_t d = lo[0]; d < hi[0]; d++)
            for (int64_t h = lo[1]; h < hi[1]; h++)
                for (int64_t w = lo[2]; w < hi[2]; w++)
                    acc += xp[(d * g.in[1] + h) * g.in[2] + w];
        y[i] = (T)(acc / (T)avg_divisor(g, mode, o));
    }
};

template <typename T>
static ch_status launch(int kind, int mode, const pool_g &g, const char *src, const int32_t *ix, char *dst,
                        int32_t *ix_out) {
    const T *s = (const T *)src;
    T *d = (T *)dst;
    int64_t outs = g.planes * g.out_n, ins = g.planes * g.in_n;
    switch (kind) {
    case CU_POOL_MAX_FWD: return cu_each("max_pooling", outs, max_forward_step<T>{g, s, d, ix_out});
    case CU_POOL_MAX_GATHER: return cu_each("max_pooling_gather", outs, max_gather_step<T>{g, s, ix, d});
    case CU_POOL_MAX_SCATTER: return cu_each("max_pooling_scatter", ins, scatter_step<T>{g, 0, mode, s, ix, d});
    case CU_POOL_AVG_FWD: return cu_each("average_pooling", outs, avg_forward_step<T>{g, mode, s, d});
    default: return cu_each("average_pooling_backward", ins, scatter_step<T>{g, 1, mode, s, ix, d});
    }
}

extern "C" ch_status cu_pool_launch(int kind, int mode, const ch_pool_geom *geom, int dt, const char *src,
                                    const int32_t *ix, char *dst, int32_t *ix_out) {
    pool_g g = to_g(geom);
    if (dt == CH_FLOAT32)
        return launch<float>(kind, mode, g, src, ix, dst, ix_out);
    return launch<double>(kind, mode, g, src, ix, dst, ix_out);
}

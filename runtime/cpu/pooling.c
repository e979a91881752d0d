/* pooling.c -- max and average pooling over 1 to 3 spatial axes, and the
 * scatter / gather kernels their gradients (and unpooling / upsampling)
 * are made of.
 *
 * Every kernel works on one (n, c) plane at a time, and planes are split
 * over OpenMP threads: a plane's outputs are written by one thread only,
 * so the scatter-adds need no atomics and sum in the same order whatever
 * the thread count.  Geometry with fewer than 3 spatial axes is padded to
 * 3 with unit axes in front, so one loop nest serves 1-d, 2-d and 3-d.
 * Front doors (checks, geometry, contiguous operands, outputs):
 * runtime/ops/pooling.c.
 */
#include "../core/internal.h"
#include "../core/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef ch_pool_geom pool_geom; /* core/kernels.h; filled and checked by ops/pooling.c */

/* Whether a loop over planes is worth OpenMP threads. */
static inline int par_ok(const pool_geom *g, int64_t work) {
    return g->planes > 1 && work >= CH_PARALLEL_GRAIN && ch_threads() > 1;
}

/* ---- max pooling forward ---------------------------------------------- */
/* One plane, geometry in scalars so that the loops keep it in registers
 * (a struct shared into an OpenMP region is re-read through a pointer). */
#define MAXPOOL_PLANE(T)                                                                                    \
    static void maxpool_plane_##T(const T *restrict xp, T *restrict yp, int32_t *restrict ip, int64_t ID,     \
                                  int64_t IH, int64_t IW, int64_t OD, int64_t OH, int64_t OW, int64_t KD,     \
                                  int64_t KH, int64_t KW, int64_t SD, int64_t SH, int64_t SW, int64_t PD,     \
                                  int64_t PH, int64_t PW) {                                                   \
        int64_t o = 0;                                                                                        \
        for (int64_t od = 0; od < OD; od++) {                                                                 \
            int64_t d0 = od * SD - PD;                                                                        \
            int64_t kd0 = d0 < 0 ? -d0 : 0, kd1 = ID - d0 < KD ? ID - d0 : KD;                                \
            for (int64_t oh = 0; oh < OH; oh++) {                                                             \
                int64_t h0 = oh * SH - PH;                                                                    \
                int64_t kh0 = h0 < 0 ? -h0 : 0, kh1 = IH - h0 < KH ? IH - h0 : KH;                            \
                for (int64_t ow = 0; ow < OW; ow++, o++) {                                                    \
                    int64_t w0 = ow * SW - PW;                                                                \
                    int64_t kw0 = w0 < 0 ? -w0 : 0, kw1 = IW - w0 < KW ? IW - w0 : KW;                        \
                    T best = (T)-INFINITY;                                                                    \
                    int64_t bi = -1;                                                                          \
                    if (kd0 < kd1 && kh0 < kh1 && kw0 < kw1) {                                                \
                        best = xp[((d0 + kd0) * IH + h0 + kh0) * IW + w0 + kw0];                              \
                        bi = (kd0 * KH + kh0) * KW + kw0;                                                     \
                    }                                                                                         \
                    for (int64_t kd = kd0; kd < kd1; kd++)                                                    \
                        for (int64_t kh = kh0; kh < kh1; kh++) {                                              \
                            const T *row = xp + ((d0 + kd) * IH + h0 + kh) * IW + w0;                         \
                            int64_t kb = (kd * KH + kh) * KW;                                                 \
                            for (int64_t kw = kw0; kw < kw1; kw++) {                                          \
                                /* strict '>' keeps the first maximum, as numpy's argmax; \
                                 * written as selects so random data costs no mispredictions */               \
                                T v = row[kw];                                                                \
                                int64_t gt = -(int64_t)(v > best);                                            \
                                best = v > best ? v : best;                                                   \
                                bi ^= (bi ^ (kb + kw)) & gt;                                                  \
                            }                                                                                 \
                        }                                                                                     \
                    yp[o] = best;                                                                             \
                    if (ip)                                                                                   \
                        ip[o] = (int32_t)(bi < 0 ? 0 : bi);                                                   \
                }                                                                                             \
            }                                                                                                 \
        }                                                                                                     \
    }                                                                                                         \
    static void maxpool_fwd_##T(const pool_geom g, const void *x_v, void *y_v, int32_t *ix) {                \
        const T *x = (const T *)x_v; T *y = (T *)y_v;                                                        \
        int par = par_ok(&g, g.planes * g.out_n * g.kn);                                                      \
        CH_PAR_FOR(par, int64_t pl = 0; pl < g.planes; pl++, {                                              \
            maxpool_plane_##T(x + pl * g.in_n, y + pl * g.out_n, ix ? ix + pl * g.out_n : NULL, g.in[0],      \
                              g.in[1], g.in[2], g.out[0], g.out[1], g.out[2], g.k[0], g.k[1], g.k[2], g.s[0], \
                              g.s[1], g.s[2], g.p[0], g.p[1], g.p[2]);                                        \
        });                                                                                                   \
    }
MAXPOOL_PLANE(float)
MAXPOOL_PLANE(double)

ch_status ch_cpu_max_pool_forward(const ch_pool_geom *g, const ch_tensor *x, ch_tensor *y, ch_tensor *indexes) {
    int32_t *ip = indexes ? (int32_t *)indexes->data : NULL;
    CH_FLOAT_KERNEL(x->dt, maxpool_fwd)(*g, ch_base(x), y->data, ip);
    return CH_OK;
}

/* Every output window (od, oh, ow) of a plane, o its flat index. */
#define FOR_EACH_WINDOW(g, ...)                                                 \
    int64_t o = 0;                                                              \
    for (int64_t od = 0; od < (g).out[0]; od++)                                 \
        for (int64_t oh = 0; oh < (g).out[1]; oh++)                             \
            for (int64_t ow = 0; ow < (g).out[2]; ow++, o++) {                  \
                __VA_ARGS__                                                     \
            }

/* ---- scatter / gather by window positions ------------------------------ */
/* Window positions decoded once per call: tab[3 i .. 3 i + 2] = (kd, kh, kw)
 * of flat position i (no integer division per element). */
static ch_status window_table(const pool_geom *g, int64_t **tab) {
    int64_t *t = (int64_t *)malloc(sizeof(int64_t) * (size_t)(3 * g->kn));
    if (!t)
        return ch_fail(CH_ERR_MEMORY, "pooling: out of memory");
    for (int64_t i = 0; i < g->kn; i++) {
        t[3 * i] = i / (g->k[2] * g->k[1]);
        t[3 * i + 1] = (i / g->k[2]) % g->k[1];
        t[3 * i + 2] = i % g->k[2];
    }
    *tab = t;
    return CH_OK;
}

/* The input cell of window o (d0, h0, w0) at window position idx, or -1. */
static inline int64_t window_cell(const pool_geom *g, const int64_t *tab, int64_t od, int64_t oh, int64_t ow,
                                  int64_t idx) {
    if (idx < 0 || idx >= g->kn)
        return -1;
    int64_t kd = tab[3 * idx], kh = tab[3 * idx + 1], kw = tab[3 * idx + 2];
    int64_t d = od * g->s[0] - g->p[0] + kd, h = oh * g->s[1] - g->p[1] + kh, w = ow * g->s[2] - g->p[2] + kw;
    if (d < 0 || d >= g->in[0] || h < 0 || h >= g->in[1] || w < 0 || w >= g->in[2])
        return -1;
    return (d * g->in[1] + h) * g->in[2] + w;
}

#define SCATTER(T)                                                                                  \
    static void scatter_##T(const pool_geom g, const int64_t *tab, const void *gy_v, const int32_t *ix, void *gx_v) {  \
        const T *gy = (const T *)gy_v; T *gx = (T *)gx_v;                                                              \
        int par = par_ok(&g, g.planes * (g.out_n + g.in_n));                                        \
        CH_PAR_FOR(par, int64_t pl = 0; pl < g.planes; pl++, {                                      \
            T *gp = gx + pl * g.in_n;                                                               \
            const T *yp = gy + pl * g.out_n;                                                        \
            const int32_t *ip = ix + pl * g.out_n;                                                  \
            memset(gp, 0, sizeof(T) * (size_t)g.in_n);                                              \
            FOR_EACH_WINDOW(g,                                                                      \
                int64_t c = window_cell(&g, tab, od, oh, ow, ip[o]);                                \
                if (c >= 0)                                                                         \
                    gp[c] += yp[o];)                                                                \
        });                                                                                         \
    }
SCATTER(float)
SCATTER(double)

#define GATHER(T)                                                                                   \
    static void gather_##T(const pool_geom g, const int64_t *tab, const void *x_v, const int32_t *ix, void *y_v) {     \
        const T *x = (const T *)x_v; T *y = (T *)y_v;                                                                  \
        int par = par_ok(&g, g.planes * g.out_n);                                                   \
        CH_PAR_FOR(par, int64_t pl = 0; pl < g.planes; pl++, {                                      \
            const T *xp = x + pl * g.in_n;                                                          \
            T *yp = y + pl * g.out_n;                                                               \
            const int32_t *ip = ix + pl * g.out_n;                                                  \
            FOR_EACH_WINDOW(g,                                                                      \
                int64_t c = window_cell(&g, tab, od, oh, ow, ip[o]);                                \
                yp[o] = c >= 0 ? xp[c] : (T)0;)                                                     \
        });                                                                                         \
    }
GATHER(float)
GATHER(double)

/* scatter or gather: src to dst through the window positions in indexes. */
typedef void route_kernel(const pool_geom g, const int64_t *tab, const void *src, const int32_t *ix, void *dst);

static ch_status route(const ch_pool_geom *g, route_kernel *kernel, const ch_tensor *src, const ch_tensor *indexes,
                       ch_tensor *dst) {
    int64_t *tab = NULL;
    CH_TRY(window_table(g, &tab));
    kernel(*g, tab, ch_base(src), (const int32_t *)ch_base(indexes), dst->data);
    free(tab);
    return CH_OK;
}

ch_status ch_cpu_max_pool_scatter(const ch_pool_geom *g, const ch_tensor *gy, const ch_tensor *indexes,
                                  ch_tensor *gx) {
    return route(g, CH_FLOAT_KERNEL(gy->dt, scatter), gy, indexes, gx);
}

ch_status ch_cpu_max_pool_gather(const ch_pool_geom *g, const ch_tensor *x, const ch_tensor *indexes, ch_tensor *y) {
    return route(g, CH_FLOAT_KERNEL(x->dt, gather), x, indexes, y);
}

/* ---- average pooling ---------------------------------------------------- */
/* Divisor of window o: prod(k), the number of in-input cells, or 1. */
static inline double avg_div(const pool_geom *g, int mode, int64_t od, int64_t oh, int64_t ow) {
    if (mode == 0)
        return (double)g->kn;
    if (mode == 2)
        return 1.0;
    int64_t o[3] = {od, oh, ow}, n = 1;
    for (int a = 0; a < 3; a++) {
        int64_t lo = o[a] * g->s[a] - g->p[a], hi = lo + g->k[a];
        if (lo < 0)
            lo = 0;
        if (hi > g->in[a])
            hi = g->in[a];
        n *= hi > lo ? hi - lo : 0;
    }
    return n > 0 ? (double)n : 1.0;
}

/* Clipped window range on each axis. */
#define WINDOW_RANGE(g, a, o, lo, hi)          \
    int64_t lo = (o) * (g).s[a] - (g).p[a];    \
    int64_t hi = lo + (g).k[a];                \
    if (lo < 0)                                \
        lo = 0;                                \
    if (hi > (g).in[a])                        \
        hi = (g).in[a];

/* The rows of window (od, oh, ow) clipped to the input: each row's offset
 * in the plane, and its cells [w0, w1). */
#define FOR_EACH_WINDOW_ROW(g, ...)                                             \
    WINDOW_RANGE(g, 0, od, d0, d1)                                              \
    WINDOW_RANGE(g, 1, oh, h0, h1)                                              \
    WINDOW_RANGE(g, 2, ow, w0, w1)                                              \
    for (int64_t d = d0; d < d1; d++)                                           \
        for (int64_t h = h0; h < h1; h++) {                                     \
            int64_t row = (d * (g).in[1] + h) * (g).in[2];                       \
            __VA_ARGS__                                                         \
        }

#define AVGPOOL(T)                                                                                         \
    static void avgpool_fwd_##T(const pool_geom g, int mode, const void *x_v, void *y_v) {                \
        const T *x = (const T *)x_v; T *y = (T *)y_v;                                                     \
        int par = par_ok(&g, g.planes * g.out_n * g.kn);                                                   \
        CH_PAR_FOR(par, int64_t pl = 0; pl < g.planes; pl++, {                                             \
            const T *xp = x + pl * g.in_n;                                                                 \
            T *yp = y + pl * g.out_n;                                                                      \
            FOR_EACH_WINDOW(g,                                                                             \
                T acc = 0;                                                                                 \
                FOR_EACH_WINDOW_ROW(g, for (int64_t w = w0; w < w1; w++) acc += xp[row + w];)              \
                yp[o] = (T)(acc / (T)avg_div(&g, mode, od, oh, ow));)                                      \
        });                                                                                                \
    }                                                                                                      \
    static void avgpool_bwd_##T(const pool_geom g, int mode, const void *gy_v, void *gx_v) {              \
        const T *gy = (const T *)gy_v; T *gx = (T *)gx_v;                                                 \
        int par = par_ok(&g, g.planes * g.out_n * g.kn);                                                   \
        CH_PAR_FOR(par, int64_t pl = 0; pl < g.planes; pl++, {                                             \
            T *gp = gx + pl * g.in_n;                                                                      \
            const T *yp = gy + pl * g.out_n;                                                               \
            memset(gp, 0, sizeof(T) * (size_t)g.in_n);                                                     \
            FOR_EACH_WINDOW(g,                                                                             \
                T v = (T)(yp[o] / (T)avg_div(&g, mode, od, oh, ow));                                       \
                FOR_EACH_WINDOW_ROW(g, for (int64_t w = w0; w < w1; w++) gp[row + w] += v;))               \
        });                                                                                                \
    }
AVGPOOL(float)
AVGPOOL(double)

ch_status ch_cpu_avg_pool_forward(const ch_pool_geom *g, int mode, const ch_tensor *x, ch_tensor *y) {
    CH_FLOAT_KERNEL(x->dt, avgpool_fwd)(*g, mode, ch_base(x), y->data);
    return CH_OK;
}

ch_status ch_cpu_avg_pool_backward(const ch_pool_geom *g, int mode, const ch_tensor *gy, ch_tensor *gx) {
    CH_FLOAT_KERNEL(gy->dt, avgpool_bwd)(*g, mode, ch_base(gy), gx->data);
    return CH_OK;
}

/* roi_pooling.c -- region-of-interest pooling (Fast R-CNN's ROI max pooling
 * and Mask R-CNN's ROIAlign with average), with the scatter / gather
 * kernels their gradients are made of.
 *
 * x is (N, C, H, W); rois (R, 4) hold (y_min, x_min, y_max, x_max) in the
 * coordinates of the original image (scaled here by spatial_scale), and
 * roi_indices (R) the image each ROI belongs to.  Outputs are
 * (R, C, outh, outw).  Forward loops split over (roi, channel) pairs;
 * the gradient kernels split over channels, so that every input plane is
 * written by one thread only (ROIs of the same image overlap): no atomics,
 * and sums in the same order whatever the thread count.
 */
#include "../core/internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct roi_args {
    const char *fn;
    ch_tensor *rois;    /* contiguous float64 (R, 4) */
    ch_tensor *idx;     /* contiguous int64 (R) */
    int64_t R;
} roi_args;

static void roi_args_release(roi_args *a) {
    ch_tensor_release(a->rois);
    ch_tensor_release(a->idx);
    a->rois = a->idx = NULL;
}

/* Checks rois / roi_indices against an N-image batch and normalises them. */
static ch_status roi_args_init(const char *fn, const ch_tensor *rois, const ch_tensor *roi_indices, int64_t n,
                               roi_args *a) {
    a->fn = fn;
    a->rois = a->idx = NULL;
    CH_CHECK_CPU(rois, fn, "rois");
    CH_CHECK_CPU(roi_indices, fn, "roi_indices");
    if (rois->nd != 2 || rois->dim[1] != 4)
        return ch_fail(CH_ERR_SHAPE, "%s: rois must be (R, 4) (y_min, x_min, y_max, x_max), got a %d-d tensor", fn,
                       rois->nd);
    if (rois->dt != CH_FLOAT16 && rois->dt != CH_FLOAT32 && rois->dt != CH_FLOAT64)
        return ch_fail(CH_ERR_DTYPE, "%s: rois must be floating point (got %s)", fn,
                       ch_dtype_name((ch_dtype)rois->dt));
    if (roi_indices->nd != 1 || roi_indices->dim[0] != rois->dim[0])
        return ch_fail(CH_ERR_SHAPE, "%s: roi_indices must be (R) with R = %lld rois", fn, (long long)rois->dim[0]);
    if (roi_indices->dt < CH_INT8 || roi_indices->dt > CH_INT64)
        return ch_fail(CH_ERR_DTYPE, "%s: roi_indices must be an integer tensor (got %s)", fn,
                       ch_dtype_name((ch_dtype)roi_indices->dt));
    a->R = rois->dim[0];
    CH_TRY(ch_contiguous_as(rois, CH_FLOAT64, &a->rois));
    ch_status st = ch_contiguous_as(roi_indices, CH_INT64, &a->idx);
    if (st != CH_OK) {
        roi_args_release(a);
        return st;
    }
    const int64_t *ip = (const int64_t *)ch_base(a->idx);
    for (int64_t r = 0; r < a->R; r++)
        if (ip[r] < 0 || ip[r] >= n) {
            long long bad = (long long)ip[r];
            roi_args_release(a);
            return ch_fail(CH_ERR_ARG, "%s: roi_indices[%lld] = %lld is out of range for a batch of %lld images", fn,
                           (long long)r, bad, (long long)n);
        }
    return CH_OK;
}

static ch_status check_x(const char *fn, const char *arg, const ch_tensor *x, int nd) {
    CH_CHECK_CPU(x, fn, arg);
    if (x->nd != nd)
        return ch_fail(CH_ERR_SHAPE, "%s: %s must be %d-d, got %d-d", fn, arg, nd, x->nd);
    if (x->dt != CH_FLOAT32 && x->dt != CH_FLOAT64)
        return ch_fail(CH_ERR_DTYPE, "%s: %s must be float32 or float64 (got %s)", fn, arg,
                       ch_dtype_name((ch_dtype)x->dt));
    return CH_OK;
}

static inline int par_ok(int64_t items, int64_t work) {
    return items > 1 && work >= CH_PARALLEL_GRAIN && ch_threads() > 1;
}

/* ---- ROI max pooling --------------------------------------------------- */
/* Bin b of a ROI starting at `start` with bins of `bin` cells covers
 * [floor(b bin), ceil((b + 1) bin)) shifted by start, clipped to [0, size). */
static inline void bin_range(int64_t b, double bin, int64_t start, int64_t size, int64_t *lo, int64_t *hi) {
    int64_t s = (int64_t)floor((double)b * bin) + start, e = (int64_t)ceil((double)(b + 1) * bin) + start;
    *lo = s < 0 ? 0 : (s > size ? size : s);
    *hi = e < 0 ? 0 : (e > size ? size : e);
}

#define ROI_MAX(T)                                                                                         \
    static void roi_max_##T(const T *x, const double *rois, const int64_t *idx, int64_t R, int64_t C,         \
                            int64_t H, int64_t W, int64_t OH, int64_t OW, double scale, T *y, int32_t *am) { \
        int par = par_ok(R * C, R * C * H * W);                                                             \
        CH_PAR_FOR(par, int64_t rc = 0; rc < R * C; rc++, {                                                 \
            int64_t r = rc / C, c = rc % C;                                                                 \
            const double *b = rois + 4 * r;                                                                 \
            /* nearbyint: round half to even, as Python's round() in Chainer */                             \
            int64_t y0 = (int64_t)nearbyint(b[0] * scale), x0 = (int64_t)nearbyint(b[1] * scale);           \
            int64_t y1 = (int64_t)nearbyint(b[2] * scale), x1 = (int64_t)nearbyint(b[3] * scale);           \
            int64_t rh = y1 - y0 + 1 > 1 ? y1 - y0 + 1 : 1, rw = x1 - x0 + 1 > 1 ? x1 - x0 + 1 : 1;         \
            double bh = (double)rh / (double)OH, bw = (double)rw / (double)OW;                              \
            const T *xp = x + (idx[r] * C + c) * H * W;                                                     \
            T *yp = y + rc * OH * OW;                                                                       \
            int32_t *ap = am + rc * OH * OW;                                                                \
            for (int64_t i = 0; i < OH; i++) {                                                              \
                int64_t h0, h1;                                                                             \
                bin_range(i, bh, y0, H, &h0, &h1);                                                          \
                for (int64_t j = 0; j < OW; j++) {                                                          \
                    int64_t w0, w1;                                                                         \
                    bin_range(j, bw, x0, W, &w0, &w1);                                                      \
                    T best = 0;                                                                             \
                    int64_t bi = -1;                                                                        \
                    for (int64_t h = h0; h < h1; h++)                                                       \
                        for (int64_t w = w0; w < w1; w++) {                                                 \
                            T v = xp[h * W + w];                                                            \
                            /* strict '>' keeps the first maximum, as numpy's argmax */                     \
                            if (bi < 0 || v > best) {                                                       \
                                best = v;                                                                   \
                                bi = h * W + w;                                                             \
                            }                                                                               \
                        }                                                                                   \
                    yp[i * OW + j] = best;                                                                  \
                    ap[i * OW + j] = (int32_t)bi;                                                           \
                }                                                                                           \
            }                                                                                               \
        });                                                                                                 \
    }
ROI_MAX(float)
ROI_MAX(double)

ch_status ch_roi_max_pool_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices, int64_t outh,
                             int64_t outw, double spatial_scale, ch_tensor **y, ch_tensor **argmax) {
    const char *fn = "roi_pooling_2d";
    if (!y || !argmax)
        return ch_fail(CH_ERR_ARG, "%s: NULL result", fn);
    CH_TRY(check_x(fn, "x", x, 4));
    if (outh < 1 || outw < 1)
        return ch_fail(CH_ERR_ARG, "%s: outsize must be positive (got %lld, %lld)", fn, (long long)outh,
                       (long long)outw);
    roi_args a;
    CH_TRY(roi_args_init(fn, rois, roi_indices, x->dim[0], &a));
    int64_t C = x->dim[1], H = x->dim[2], W = x->dim[3];
    int64_t dim[4] = {a.R, C, outh, outw};
    ch_tensor *xc = NULL, *yt = NULL, *at = NULL;
    ch_status st = ch_contiguous_as(x, (ch_dtype)x->dt, &xc);
    if (st == CH_OK)
        st = ch_tensor_new((ch_dtype)x->dt, 4, dim, CH_CPU, &yt);
    if (st == CH_OK)
        st = ch_tensor_new(CH_INT32, 4, dim, CH_CPU, &at);
    if (st == CH_OK) {
        const double *rp = (const double *)ch_base(a.rois);
        const int64_t *ip = (const int64_t *)ch_base(a.idx);
        if (x->dt == CH_FLOAT32)
            roi_max_float((const float *)ch_base(xc), rp, ip, a.R, C, H, W, outh, outw, spatial_scale,
                          (float *)yt->data, (int32_t *)at->data);
        else
            roi_max_double((const double *)ch_base(xc), rp, ip, a.R, C, H, W, outh, outw, spatial_scale,
                           (double *)yt->data, (int32_t *)at->data);
    }
    ch_tensor_release(xc);
    roi_args_release(&a);
    if (st != CH_OK) {
        ch_tensor_release(yt);
        ch_tensor_release(at);
        return st;
    }
    *y = yt;
    *argmax = at;
    return CH_OK;
}

/* Checks argmax (R, C, OH, OW) int32 and the g / x it goes with. */
static ch_status check_argmax(const char *fn, const ch_tensor *argmax, int64_t R, int64_t C) {
    CH_CHECK_CPU(argmax, fn, "argmax");
    if (argmax->nd != 4 || argmax->dt != CH_INT32 || argmax->dim[0] != R || argmax->dim[1] != C)
        return ch_fail(CH_ERR_SHAPE, "%s: argmax must be int32 (R, C, outh, outw) with R = %lld, C = %lld", fn,
                       (long long)R, (long long)C);
    return CH_OK;
}

#define ROI_SCATTER(T)                                                                                     \
    static void roi_scatter_##T(const T *g, const int32_t *am, const int64_t *idx, int64_t R, int64_t C,      \
                                int64_t HW, int64_t OHW, int64_t N, T *gx) {                                 \
        int par = par_ok(C, R * C * OHW + N * C * HW);                                                      \
        CH_PAR_FOR(par, int64_t c = 0; c < C; c++, {                                                        \
            for (int64_t n = 0; n < N; n++)                                                                 \
                memset(gx + (n * C + c) * HW, 0, sizeof(T) * (size_t)HW);                                   \
            for (int64_t r = 0; r < R; r++) {                                                               \
                T *gp = gx + (idx[r] * C + c) * HW;                                                         \
                const T *src = g + (r * C + c) * OHW;                                                       \
                const int32_t *ap = am + (r * C + c) * OHW;                                                 \
                for (int64_t o = 0; o < OHW; o++)                                                           \
                    if (ap[o] >= 0 && ap[o] < HW)                                                           \
                        gp[ap[o]] += src[o];                                                                \
            }                                                                                               \
        });                                                                                                 \
    }
ROI_SCATTER(float)
ROI_SCATTER(double)

ch_status ch_roi_max_pool_2d_scatter(const ch_tensor *g, const ch_tensor *roi_indices, const ch_tensor *argmax,
                                     int64_t n, int64_t h, int64_t w, ch_tensor **result) {
    const char *fn = "roi_pooling_2d";
    if (!result)
        return ch_fail(CH_ERR_ARG, "%s: NULL result", fn);
    CH_TRY(check_x(fn, "gy", g, 4));
    CH_TRY(check_argmax(fn, argmax, g->dim[0], g->dim[1]));
    if (argmax->dim[2] != g->dim[2] || argmax->dim[3] != g->dim[3])
        return ch_fail(CH_ERR_SHAPE, "%s: gy and argmax must have the same shape", fn);
    if (n < 1 || h < 1 || w < 1)
        return ch_fail(CH_ERR_ARG, "%s: bad input shape (%lld, C, %lld, %lld)", fn, (long long)n, (long long)h,
                       (long long)w);
    int64_t R = g->dim[0], C = g->dim[1];
    CH_CHECK_CPU(roi_indices, fn, "roi_indices");
    if (roi_indices->nd != 1 || roi_indices->dim[0] != R)
        return ch_fail(CH_ERR_SHAPE, "%s: roi_indices must be (R) with R = %lld", fn, (long long)R);
    ch_tensor *ic = NULL, *gc = NULL, *ac = NULL, *out = NULL;
    CH_TRY(ch_contiguous_as(roi_indices, CH_INT64, &ic));
    const int64_t *ip = (const int64_t *)ch_base(ic);
    ch_status st = CH_OK;
    for (int64_t r = 0; r < R && st == CH_OK; r++)
        if (ip[r] < 0 || ip[r] >= n)
            st = ch_fail(CH_ERR_ARG, "%s: roi_indices[%lld] = %lld is out of range for a batch of %lld images", fn,
                         (long long)r, (long long)ip[r], (long long)n);
    if (st == CH_OK)
        st = ch_contiguous_as(g, (ch_dtype)g->dt, &gc);
    if (st == CH_OK)
        st = ch_contiguous_as(argmax, CH_INT32, &ac);
    int64_t dim[4] = {n, C, h, w};
    if (st == CH_OK)
        st = ch_tensor_new((ch_dtype)g->dt, 4, dim, CH_CPU, &out);
    if (st == CH_OK) {
        int64_t OHW = g->dim[2] * g->dim[3];
        if (g->dt == CH_FLOAT32)
            roi_scatter_float((const float *)ch_base(gc), (const int32_t *)ch_base(ac), ip, R, C, h * w, OHW, n,
                              (float *)out->data);
        else
            roi_scatter_double((const double *)ch_base(gc), (const int32_t *)ch_base(ac), ip, R, C, h * w, OHW, n,
                               (double *)out->data);
    }
    ch_tensor_release(ic);
    ch_tensor_release(gc);
    ch_tensor_release(ac);
    if (st != CH_OK) {
        ch_tensor_release(out);
        return st;
    }
    *result = out;
    return CH_OK;
}

#define ROI_GATHER(T)                                                                                      \
    static void roi_gather_##T(const T *x, const int32_t *am, const int64_t *idx, int64_t R, int64_t C,       \
                               int64_t HW, int64_t OHW, T *y) {                                             \
        int par = par_ok(R * C, R * C * OHW);                                                               \
        CH_PAR_FOR(par, int64_t rc = 0; rc < R * C; rc++, {                                                 \
            int64_t r = rc / C, c = rc % C;                                                                 \
            const T *xp = x + (idx[r] * C + c) * HW;                                                        \
            const int32_t *ap = am + rc * OHW;                                                              \
            for (int64_t o = 0; o < OHW; o++)                                                               \
                y[rc * OHW + o] = (ap[o] >= 0 && ap[o] < HW) ? xp[ap[o]] : (T)0;                            \
        });                                                                                                 \
    }
ROI_GATHER(float)
ROI_GATHER(double)

ch_status ch_roi_max_pool_2d_gather(const ch_tensor *x, const ch_tensor *roi_indices, const ch_tensor *argmax,
                                    ch_tensor **result) {
    const char *fn = "roi_pooling_2d";
    if (!result)
        return ch_fail(CH_ERR_ARG, "%s: NULL result", fn);
    CH_TRY(check_x(fn, "x", x, 4));
    CH_CHECK_CPU(argmax, fn, "argmax");
    if (argmax->nd != 4 || argmax->dt != CH_INT32 || argmax->dim[1] != x->dim[1])
        return ch_fail(CH_ERR_SHAPE, "%s: argmax must be int32 (R, C, outh, outw) with C = %lld", fn,
                       (long long)x->dim[1]);
    roi_args a = {0};
    /* only the indices are needed: check them with a dummy rois shape */
    CH_CHECK_CPU(roi_indices, fn, "roi_indices");
    if (roi_indices->nd != 1 || roi_indices->dim[0] != argmax->dim[0])
        return ch_fail(CH_ERR_SHAPE, "%s: roi_indices must be (R) with R = %lld", fn, (long long)argmax->dim[0]);
    CH_TRY(ch_contiguous_as(roi_indices, CH_INT64, &a.idx));
    int64_t R = argmax->dim[0], C = x->dim[1], N = x->dim[0];
    const int64_t *ip = (const int64_t *)ch_base(a.idx);
    ch_status st = CH_OK;
    for (int64_t r = 0; r < R && st == CH_OK; r++)
        if (ip[r] < 0 || ip[r] >= N)
            st = ch_fail(CH_ERR_ARG, "%s: roi_indices[%lld] = %lld is out of range for a batch of %lld images", fn,
                         (long long)r, (long long)ip[r], (long long)N);
    ch_tensor *xc = NULL, *ac = NULL, *out = NULL;
    if (st == CH_OK)
        st = ch_contiguous_as(x, (ch_dtype)x->dt, &xc);
    if (st == CH_OK)
        st = ch_contiguous_as(argmax, CH_INT32, &ac);
    if (st == CH_OK)
        st = ch_tensor_new((ch_dtype)x->dt, 4, argmax->dim, CH_CPU, &out);
    if (st == CH_OK) {
        int64_t HW = x->dim[2] * x->dim[3], OHW = argmax->dim[2] * argmax->dim[3];
        if (x->dt == CH_FLOAT32)
            roi_gather_float((const float *)ch_base(xc), (const int32_t *)ch_base(ac), ip, R, C, HW, OHW,
                             (float *)out->data);
        else
            roi_gather_double((const double *)ch_base(xc), (const int32_t *)ch_base(ac), ip, R, C, HW, OHW,
                              (double *)out->data);
    }
    ch_tensor_release(xc);
    ch_tensor_release(ac);
    roi_args_release(&a);
    if (st != CH_OK) {
        ch_tensor_release(out);
        return st;
    }
    *result = out;
    return CH_OK;
}

/* ---- ROIAlign (average) -------------------------------------------------- */
/* The bilinear neighbours and weights of sample point (y, x) in an H x W
 * plane, or 0 when the point lies more than one cell outside. */
typedef struct tap4 {
    int64_t o[4];
    double w[4];
} tap4;

static inline int bilinear_taps(double y, double x, int64_t H, int64_t W, tap4 *t) {
    if (y < -1.0 || y > (double)H || x < -1.0 || x > (double)W)
        return 0;
    if (y <= 0)
        y = 0;
    if (x <= 0)
        x = 0;
    int64_t yl = (int64_t)y, xl = (int64_t)x, yh, xh;
    if (yl >= H - 1) {
        yh = yl = H - 1;
        y = (double)yl;
    } else
        yh = yl + 1;
    if (xl >= W - 1) {
        xh = xl = W - 1;
        x = (double)xl;
    } else
        xh = xl + 1;
    double ly = y - (double)yl, lx = x - (double)xl, hy = 1.0 - ly, hx = 1.0 - lx;
    t->o[0] = yl * W + xl;
    t->o[1] = yl * W + xh;
    t->o[2] = yh * W + xl;
    t->o[3] = yh * W + xh;
    t->w[0] = hy * hx;
    t->w[1] = hy * lx;
    t->w[2] = ly * hx;
    t->w[3] = ly * lx;
    return 1;
}

/* The sampling geometry of one ROI. */
typedef struct align_geom {
    double y0, x0, bh, bw;
    int64_t gh, gw;
} align_geom;

static inline void align_geometry(const double *b, double scale, int64_t OH, int64_t OW, int64_t sh, int64_t sw,
                                  align_geom *g) {
    g->y0 = b[0] * scale;
    g->x0 = b[1] * scale;
    double rh = b[2] * scale - g->y0, rw = b[3] * scale - g->x0;
    if (rh < 1.0)
        rh = 1.0;
    if (rw < 1.0)
        rw = 1.0;
    g->bh = rh / (double)OH;
    g->bw = rw / (double)OW;
    g->gh = sh > 0 ? sh : (int64_t)ceil(rh / (double)OH);
    g->gw = sw > 0 ? sw : (int64_t)ceil(rw / (double)OW);
}

#define ROI_ALIGN(T)                                                                                       \
    static void roi_align_##T(const T *x, const double *rois, const int64_t *idx, int64_t R, int64_t C,       \
                              int64_t H, int64_t W, int64_t OH, int64_t OW, double scale, int64_t sh,        \
                              int64_t sw, T *y) {                                                           \
        int par = par_ok(R * C, R * C * OH * OW * 4);                                                       \
        CH_PAR_FOR(par, int64_t rc = 0; rc < R * C; rc++, {                                                 \
            int64_t r = rc / C, c = rc % C;                                                                 \
            align_geom g;                                                                                   \
            align_geometry(rois + 4 * r, scale, OH, OW, sh, sw, &g);                                        \
            const T *xp = x + (idx[r] * C + c) * H * W;                                                     \
            double count = (double)(g.gh * g.gw);                                                           \
            for (int64_t i = 0; i < OH; i++)                                                                \
                for (int64_t j = 0; j < OW; j++) {                                                          \
                    double acc = 0;                                                                         \
                    for (int64_t iy = 0; iy < g.gh; iy++) {                                                 \
                        double yy = g.y0 + (double)i * g.bh + ((double)iy + 0.5) * g.bh / (double)g.gh;     \
                        for (int64_t ix = 0; ix < g.gw; ix++) {                                             \
                            double xx = g.x0 + (double)j * g.bw + ((double)ix + 0.5) * g.bw / (double)g.gw; \
                            tap4 t;                                                                         \
                            if (bilinear_taps(yy, xx, H, W, &t))                                            \
                                acc += t.w[0] * xp[t.o[0]] + t.w[1] * xp[t.o[1]] + t.w[2] * xp[t.o[2]] +    \
                                       t.w[3] * xp[t.o[3]];                                                 \
                        }                                                                                   \
                    }                                                                                       \
                    y[(rc * OH + i) * OW + j] = count > 0 ? (T)(acc / count) : (T)0;                        \
                }                                                                                           \
        });                                                                                                 \
    }
ROI_ALIGN(float)
ROI_ALIGN(double)

ch_status ch_roi_average_align_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices,
                                  int64_t outh, int64_t outw, double spatial_scale, int64_t sampling_h,
                                  int64_t sampling_w, ch_tensor **result) {
    const char *fn = "roi_average_align_2d";
    if (!result)
        return ch_fail(CH_ERR_ARG, "%s: NULL result", fn);
    CH_TRY(check_x(fn, "x", x, 4));
    if (outh < 1 || outw < 1)
        return ch_fail(CH_ERR_ARG, "%s: outsize must be positive (got %lld, %lld)", fn, (long long)outh,
                       (long long)outw);
    roi_args a;
    CH_TRY(roi_args_init(fn, rois, roi_indices, x->dim[0], &a));
    int64_t C = x->dim[1], H = x->dim[2], W = x->dim[3];
    int64_t dim[4] = {a.R, C, outh, outw};
    ch_tensor *xc = NULL, *yt = NULL;
    ch_status st = ch_contiguous_as(x, (ch_dtype)x->dt, &xc);
    if (st == CH_OK)
        st = ch_tensor_new((ch_dtype)x->dt, 4, dim, CH_CPU, &yt);
    if (st == CH_OK) {
        const double *rp = (const double *)ch_base(a.rois);
        const int64_t *ip = (const int64_t *)ch_base(a.idx);
        if (x->dt == CH_FLOAT32)
            roi_align_float((const float *)ch_base(xc), rp, ip, a.R, C, H, W, outh, outw, spatial_scale,
                            sampling_h, sampling_w, (float *)yt->data);
        else
            roi_align_double((const double *)ch_base(xc), rp, ip, a.R, C, H, W, outh, outw, spatial_scale,
                             sampling_h, sampling_w, (double *)yt->data);
    }
    ch_tensor_release(xc);
    roi_args_release(&a);
    if (st != CH_OK) {
        ch_tensor_release(yt);
        return st;
    }
    *result = yt;
    return CH_OK;
}

#define ROI_ALIGN_BACK(T)                                                                                  \
    static void roi_align_back_##T(const T *gy, const double *rois, const int64_t *idx, int64_t R, int64_t C, \
                                   int64_t N, int64_t H, int64_t W, int64_t OH, int64_t OW, double scale,   \
                                   int64_t sh, int64_t sw, T *gx) {                                         \
        int par = par_ok(C, R * C * OH * OW * 4 + N * C * H * W);                                           \
        CH_PAR_FOR(par, int64_t c = 0; c < C; c++, {                                                        \
            for (int64_t n = 0; n < N; n++)                                                                 \
                memset(gx + (n * C + c) * H * W, 0, sizeof(T) * (size_t)(H * W));                           \
            for (int64_t r = 0; r < R; r++) {                                                               \
                align_geom g;                                                                               \
                align_geometry(rois + 4 * r, scale, OH, OW, sh, sw, &g);                                    \
                T *gp = gx + (idx[r] * C + c) * H * W;                                                      \
                const T *src = gy + (r * C + c) * OH * OW;                                                  \
                double count = (double)(g.gh * g.gw);                                                       \
                if (count <= 0)                                                                             \
                    continue;                                                                               \
                for (int64_t i = 0; i < OH; i++)                                                            \
                    for (int64_t j = 0; j < OW; j++) {                                                      \
                        double v = (double)src[i * OW + j] / count;                                         \
                        for (int64_t iy = 0; iy < g.gh; iy++) {                                             \
                            double yy = g.y0 + (double)i * g.bh + ((double)iy + 0.5) * g.bh / (double)g.gh; \
                            for (int64_t ix = 0; ix < g.gw; ix++) {                                         \
                                double xx =                                                                 \
                                    g.x0 + (double)j * g.bw + ((double)ix + 0.5) * g.bw / (double)g.gw;     \
                                tap4 t;                                                                     \
                                if (bilinear_taps(yy, xx, H, W, &t))                                        \
                                    for (int k = 0; k < 4; k++)                                             \
                                        gp[t.o[k]] += (T)(t.w[k] * v);                                      \
                            }                                                                               \
                        }                                                                                   \
                    }                                                                                       \
            }                                                                                               \
        });                                                                                                 \
    }
ROI_ALIGN_BACK(float)
ROI_ALIGN_BACK(double)

ch_status ch_roi_average_align_2d_backward(const ch_tensor *gy, const ch_tensor *rois, const ch_tensor *roi_indices,
                                           int64_t n, int64_t h, int64_t w, double spatial_scale, int64_t sampling_h,
                                           int64_t sampling_w, ch_tensor **result) {
    const char *fn = "roi_average_align_2d";
    if (!result)
        return ch_fail(CH_ERR_ARG, "%s: NULL result", fn);
    CH_TRY(check_x(fn, "gy", gy, 4));
    if (n < 1 || h < 1 || w < 1)
        return ch_fail(CH_ERR_ARG, "%s: bad input shape (%lld, C, %lld, %lld)", fn, (long long)n, (long long)h,
                       (long long)w);
    roi_args a;
    CH_TRY(roi_args_init(fn, rois, roi_indices, n, &a));
    if (a.R != gy->dim[0]) {
        roi_args_release(&a);
        return ch_fail(CH_ERR_SHAPE, "%s: gy has %lld rows, rois %lld", fn, (long long)gy->dim[0], (long long)a.R);
    }
    int64_t C = gy->dim[1];
    int64_t dim[4] = {n, C, h, w};
    ch_tensor *gc = NULL, *out = NULL;
    ch_status st = ch_contiguous_as(gy, (ch_dtype)gy->dt, &gc);
    if (st == CH_OK)
        st = ch_tensor_new((ch_dtype)gy->dt, 4, dim, CH_CPU, &out);
    if (st == CH_OK) {
        const double *rp = (const double *)ch_base(a.rois);
        const int64_t *ip = (const int64_t *)ch_base(a.idx);
        if (gy->dt == CH_FLOAT32)
            roi_align_back_float((const float *)ch_base(gc), rp, ip, a.R, C, n, h, w, gy->dim[2], gy->dim[3],
                                 spatial_scale, sampling_h, sampling_w, (float *)out->data);
        else
            roi_align_back_double((const double *)ch_base(gc), rp, ip, a.R, C, n, h, w, gy->dim[2], gy->dim[3],
                                  spatial_scale, sampling_h, sampling_w, (double *)out->data);
    }
    ch_tensor_release(gc);
    roi_args_release(&a);
    if (st != CH_OK) {
        ch_tensor_release(out);
        return st;
    }
    *result = out;
    return CH_OK;
}

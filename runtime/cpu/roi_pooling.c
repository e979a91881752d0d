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
 * Front doors (checks, contiguous operands, outputs):
 * runtime/ops/roi_pooling.c.
 */
#include "../core/internal.h"
#include "../core/kernels.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static inline int par_ok(int64_t items, int64_t work) {
    return items > 1 && work >= CH_PARALLEL_GRAIN && ch_threads() > 1;
}

/* Clears channel c of the N planes (HW elements of `size` bytes each) of a
 * gradient gx (N, C, H, W), before a scatter adds into it. */
static inline void zero_planes(void *gx, size_t size, int64_t N, int64_t C, int64_t c, int64_t HW) {
    for (int64_t n = 0; n < N; n++)
        memset((char *)gx + (size_t)((n * C + c) * HW) * size, 0, size * (size_t)HW);
}

/* ---- ROI max / average pooling ------------------------------------------ */
/* The bins of one ROI: corners rounded half to even (Python's round()), a
 * span of max(end - start + extra, 1) cells: extra is 1 for roi_pooling_2d,
 * 0 for Chainer 7's roi_max/average_pooling_2d. */
typedef struct pool_geom {
    int64_t y0, x0;
    double bh, bw;
} pool_geom;

static inline void pool_geometry(const double *b, double scale, int64_t OH, int64_t OW, int64_t extra, pool_geom *g) {
    int64_t y0 = (int64_t)nearbyint(b[0] * scale), x0 = (int64_t)nearbyint(b[1] * scale);
    int64_t y1 = (int64_t)nearbyint(b[2] * scale), x1 = (int64_t)nearbyint(b[3] * scale);
    int64_t sh = y1 - y0 + extra, sw = x1 - x0 + extra;
    int64_t rh = sh > 1 ? sh : 1, rw = sw > 1 ? sw : 1;
    g->y0 = y0;
    g->x0 = x0;
    g->bh = (double)rh / (double)OH;
    g->bw = (double)rw / (double)OW;
}

/* Bin b of a ROI starting at `start` with bins of `bin` cells covers
 * [floor(b bin), ceil((b + 1) bin)) shifted by start, clipped to [0, size). */
static inline void bin_range(int64_t b, double bin, int64_t start, int64_t size, int64_t *lo, int64_t *hi) {
    int64_t s = (int64_t)floor((double)b * bin) + start, e = (int64_t)ceil((double)(b + 1) * bin) + start;
    *lo = s < 0 ? 0 : (s > size ? size : s);
    *hi = e < 0 ? 0 : (e > size ? size : e);
}

/* y and argmax of both max poolings, NAME_T: the ROI span's EXTRA cells
 * (1 for roi_pooling_2d, 0 for Chainer 7's) and what an empty bin gives,
 * EMPTY (0 and -inf, as in Chainer), with argmax -1.  Both are constants of
 * the instance: the bin loop is the hot one. */
#define ROI_MAX(T, NAME, EXTRA, EMPTY)                                                                     \
    static void NAME##_##T(const void *x_v, const double *rois, const int64_t *idx, int64_t R, int64_t C,     \
                           int64_t H, int64_t W, int64_t OH, int64_t OW, double scale, void *y_v,            \
                           int32_t *am) {                                                                   \
        const T *x = (const T *)x_v; T *y = (T *)y_v;                                                       \
        int par = par_ok(R * C, R * C * H * W);                                                             \
        CH_PAR_FOR(par, int64_t rc = 0; rc < R * C; rc++, {                                                 \
            int64_t r = rc / C, c = rc % C;                                                                 \
            pool_geom g;                                                                                    \
            pool_geometry(rois + 4 * r, scale, OH, OW, EXTRA, &g);                                          \
            const T *xp = x + (idx[r] * C + c) * H * W;                                                     \
            T *yp = y + rc * OH * OW;                                                                       \
            int32_t *ap = am + rc * OH * OW;                                                                \
            for (int64_t i = 0; i < OH; i++) {                                                              \
                int64_t h0, h1;                                                                             \
                bin_range(i, g.bh, g.y0, H, &h0, &h1);                                                      \
                for (int64_t j = 0; j < OW; j++) {                                                          \
                    int64_t w0, w1;                                                                         \
                    bin_range(j, g.bw, g.x0, W, &w0, &w1);                                                  \
                    T best = (T)EMPTY;                                                                       \
                    int64_t bi = -1;                                                                        \
                    for (int64_t h = h0; h < h1; h++)                                                       \
                        for (int64_t w = w0; w < w1; w++) {                                                 \
                            T v = xp[h * W + w];                                                            \
                            if (bi < 0 || v > best) { /* the first maximum, as numpy's argmax */            \
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
ROI_MAX(float, roi_max_pool, 1, 0)
ROI_MAX(double, roi_max_pool, 1, 0)
ROI_MAX(float, roi_max_pooling, 0, -INFINITY)
ROI_MAX(double, roi_max_pooling, 0, -INFINITY)

/* Runs NAME_float or NAME_double of the ROI_MAX instances on x, y, argmax. */
#define RUN_ROI_MAX(NAME, x, rois, roi_indices, spatial_scale, y, argmax)                                       \
    CH_FLOAT_KERNEL((x)->dt, NAME)(ch_base(x), (const double *)ch_base(rois), (const int64_t *)ch_base(roi_indices), \
                                   (y)->dim[0], (x)->dim[1], (x)->dim[2], (x)->dim[3], (y)->dim[2], (y)->dim[3],   \
                                   spatial_scale, (y)->data, (int32_t *)(argmax)->data)

#define ROI_SCATTER(T)                                                                                     \
    static void roi_scatter_##T(const void *g_v, const int32_t *am, const int64_t *idx, int64_t R, int64_t C, \
                                int64_t HW, int64_t OHW, int64_t N, void *gx_v) {                             \
        const T *g = (const T *)g_v; T *gx = (T *)gx_v;                                                       \
        int par = par_ok(C, R * C * OHW + N * C * HW);                                                      \
        CH_PAR_FOR(par, int64_t c = 0; c < C; c++, {                                                        \
            zero_planes(gx, sizeof(T), N, C, c, HW);                                                        \
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

#define ROI_GATHER(T)                                                                                      \
    static void roi_gather_##T(const void *x_v, const int32_t *am, const int64_t *idx, int64_t R, int64_t C,  \
                               int64_t HW, int64_t OHW, void *y_v) {                                          \
        const T *x = (const T *)x_v; T *y = (T *)y_v;                                                         \
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

/* The bilinear sum of xp at the taps, and the scatter of v to them. */
#define TAPS(T)                                                                                            \
    static inline double taps_dot_##T(const tap4 *t, const T *xp) {                                         \
        return t->w[0] * xp[t->o[0]] + t->w[1] * xp[t->o[1]] + t->w[2] * xp[t->o[2]] + t->w[3] * xp[t->o[3]]; \
    }                                                                                                       \
    static inline void taps_add_##T(const tap4 *t, T *gp, double v) {                                       \
        for (int k = 0; k < 4; k++)                                                                         \
            gp[t->o[k]] += (T)(t->w[k] * v);                                                                \
    }
TAPS(float)
TAPS(double)

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

/* One coordinate of sample `sample` (of `samples`) in bin `cell`: the
 * points ROIAlign averages, and takes the max of. */
static inline double align_coord(double origin, double bin, int64_t cell, int64_t sample, int64_t samples) {
    return origin + (double)cell * bin + ((double)sample + 0.5) * bin / (double)samples;
}

#define ROI_ALIGN(T)                                                                                       \
    static void roi_align_##T(const void *x_v, const double *rois, const int64_t *idx, int64_t R, int64_t C,  \
                              int64_t H, int64_t W, int64_t OH, int64_t OW, double scale, int64_t sh,         \
                              int64_t sw, void *y_v) {                                                        \
        const T *x = (const T *)x_v; T *y = (T *)y_v;                                                         \
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
                        double yy = align_coord(g.y0, g.bh, i, iy, g.gh);                                   \
                        for (int64_t ix = 0; ix < g.gw; ix++) {                                             \
                            double xx = align_coord(g.x0, g.bw, j, ix, g.gw);                               \
                            tap4 t;                                                                         \
                            if (bilinear_taps(yy, xx, H, W, &t))                                            \
                                acc += taps_dot_##T(&t, xp);                                                \
                        }                                                                                   \
                    }                                                                                       \
                    y[(rc * OH + i) * OW + j] = count > 0 ? (T)(acc / count) : (T)0;                        \
                }                                                                                           \
        });                                                                                                 \
    }
ROI_ALIGN(float)
ROI_ALIGN(double)

#define ROI_ALIGN_BACK(T)                                                                                  \
    static void roi_align_back_##T(const void *gy_v, const double *rois, const int64_t *idx, int64_t R,       \
                                   int64_t C, int64_t N, int64_t H, int64_t W, int64_t OH, int64_t OW,        \
                                   double scale, int64_t sh, int64_t sw, void *gx_v) {                        \
        const T *gy = (const T *)gy_v; T *gx = (T *)gx_v;                                                     \
        int par = par_ok(C, R * C * OH * OW * 4 + N * C * H * W);                                           \
        CH_PAR_FOR(par, int64_t c = 0; c < C; c++, {                                                        \
            zero_planes(gx, sizeof(T), N, C, c, H * W);                                                     \
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
                            double yy = align_coord(g.y0, g.bh, i, iy, g.gh);                               \
                            for (int64_t ix = 0; ix < g.gw; ix++) {                                         \
                                tap4 t;                                                                     \
                                if (bilinear_taps(yy, align_coord(g.x0, g.bw, j, ix, g.gw), H, W, &t))      \
                                    taps_add_##T(&t, gp, v);                                                \
                            }                                                                               \
                        }                                                                                   \
                    }                                                                                       \
            }                                                                                               \
        });                                                                                                 \
    }
ROI_ALIGN_BACK(float)
ROI_ALIGN_BACK(double)

/* ---- kernels ----------------------------------------------------------- */
ch_status ch_cpu_roi_max_pool_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices,
                                 double spatial_scale, ch_tensor *y, ch_tensor *argmax) {
    RUN_ROI_MAX(roi_max_pool, x, rois, roi_indices, spatial_scale, y, argmax);
    return CH_OK;
}

ch_status ch_cpu_roi_max_pool_2d_scatter(const ch_tensor *gy, const ch_tensor *roi_indices, const ch_tensor *argmax,
                                         ch_tensor *gx) {
    int64_t R = gy->dim[0], C = gy->dim[1], OHW = gy->dim[2] * gy->dim[3];
    int64_t n = gx->dim[0], HW = gx->dim[2] * gx->dim[3];
    const int64_t *ip = (const int64_t *)ch_base(roi_indices);
    CH_FLOAT_KERNEL(gy->dt, roi_scatter)(ch_base(gy), (const int32_t *)ch_base(argmax), ip, R, C, HW, OHW, n,
            gx->data);
    return CH_OK;
}

ch_status ch_cpu_roi_max_pool_2d_gather(const ch_tensor *x, const ch_tensor *roi_indices, const ch_tensor *argmax,
                                        ch_tensor *y) {
    int64_t R = argmax->dim[0], C = x->dim[1];
    int64_t HW = x->dim[2] * x->dim[3], OHW = argmax->dim[2] * argmax->dim[3];
    const int64_t *ip = (const int64_t *)ch_base(roi_indices);
    CH_FLOAT_KERNEL(x->dt, roi_gather)(ch_base(x), (const int32_t *)ch_base(argmax), ip, R, C, HW, OHW, y->data);
    return CH_OK;
}

ch_status ch_cpu_roi_average_align_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices,
                                      double spatial_scale, int64_t sampling_h, int64_t sampling_w, ch_tensor *y) {
    int64_t R = y->dim[0], C = x->dim[1], H = x->dim[2], W = x->dim[3], OH = y->dim[2], OW = y->dim[3];
    const double *rp = (const double *)ch_base(rois);
    const int64_t *ip = (const int64_t *)ch_base(roi_indices);
    CH_FLOAT_KERNEL(x->dt, roi_align)(ch_base(x), rp, ip, R, C, H, W, OH, OW, spatial_scale, sampling_h, sampling_w,
            y->data);
    return CH_OK;
}

ch_status ch_cpu_roi_average_align_2d_backward(const ch_tensor *gy, const ch_tensor *rois,
                                               const ch_tensor *roi_indices, double spatial_scale, int64_t sampling_h,
                                               int64_t sampling_w, ch_tensor *gx) {
    int64_t R = gy->dim[0], C = gy->dim[1], n = gx->dim[0], h = gx->dim[2], w = gx->dim[3];
    const double *rp = (const double *)ch_base(rois);
    const int64_t *ip = (const int64_t *)ch_base(roi_indices);
    CH_FLOAT_KERNEL(gy->dt, roi_align_back)(ch_base(gy), rp, ip, R, C, n, h, w, gy->dim[2], gy->dim[3],
            spatial_scale, sampling_h, sampling_w, gx->data);
    return CH_OK;
}

/* ---- Chainer 7's ROI average pooling ----------------------------------- */
#define ROI_AVG(T)                                                                                         \
    static void roi_avg_##T(const void *x_v, const double *rois, const int64_t *idx, int64_t R, int64_t C,    \
                            int64_t H, int64_t W, int64_t OH, int64_t OW, double scale, void *y_v) {          \
        const T *x = (const T *)x_v; T *y = (T *)y_v;                                                         \
        int par = par_ok(R * C, R * C * H * W);                                                             \
        CH_PAR_FOR(par, int64_t rc = 0; rc < R * C; rc++, {                                                 \
            int64_t r = rc / C, c = rc % C;                                                                 \
            pool_geom g;                                                                                    \
            pool_geometry(rois + 4 * r, scale, OH, OW, 0, &g);                                                 \
            const T *xp = x + (idx[r] * C + c) * H * W;                                                     \
            for (int64_t i = 0; i < OH; i++) {                                                              \
                int64_t h0, h1;                                                                             \
                bin_range(i, g.bh, g.y0, H, &h0, &h1);                                                      \
                for (int64_t j = 0; j < OW; j++) {                                                          \
                    int64_t w0, w1;                                                                         \
                    bin_range(j, g.bw, g.x0, W, &w0, &w1);                                                  \
                    double acc = 0;                                                                         \
                    for (int64_t h = h0; h < h1; h++)                                                       \
                        for (int64_t w = w0; w < w1; w++)                                                   \
                            acc += (double)xp[h * W + w];                                                   \
                    int64_t n = (h1 - h0) * (w1 - w0);                                                      \
                    y[(rc * OH + i) * OW + j] = (h1 > h0 && w1 > w0) ? (T)(acc / (double)n) : (T)0;         \
                }                                                                                           \
            }                                                                                               \
        });                                                                                                 \
    }
ROI_AVG(float)
ROI_AVG(double)

#define ROI_AVG_BACK(T)                                                                                    \
    static void roi_avg_back_##T(const void *gy_v, const double *rois, const int64_t *idx, int64_t R,         \
                                 int64_t C, int64_t N, int64_t H, int64_t W, int64_t OH, int64_t OW,          \
                                 double scale, void *gx_v) {                                                  \
        const T *gy = (const T *)gy_v; T *gx = (T *)gx_v;                                                     \
        int par = par_ok(C, R * C * H * W + N * C * H * W);                                                 \
        CH_PAR_FOR(par, int64_t c = 0; c < C; c++, {                                                        \
            zero_planes(gx, sizeof(T), N, C, c, H * W);                                                     \
            for (int64_t r = 0; r < R; r++) {                                                               \
                pool_geom g;                                                                                \
                pool_geometry(rois + 4 * r, scale, OH, OW, 0, &g);                                             \
                T *gp = gx + (idx[r] * C + c) * H * W;                                                      \
                const T *src = gy + (r * C + c) * OH * OW;                                                  \
                for (int64_t i = 0; i < OH; i++) {                                                          \
                    int64_t h0, h1;                                                                         \
                    bin_range(i, g.bh, g.y0, H, &h0, &h1);                                                  \
                    for (int64_t j = 0; j < OW; j++) {                                                      \
                        int64_t w0, w1;                                                                     \
                        bin_range(j, g.bw, g.x0, W, &w0, &w1);                                              \
                        if (h1 <= h0 || w1 <= w0)                                                           \
                            continue;                                                                       \
                        T v = (T)((double)src[i * OW + j] / (double)((h1 - h0) * (w1 - w0)));               \
                        for (int64_t h = h0; h < h1; h++)                                                   \
                            for (int64_t w = w0; w < w1; w++)                                               \
                                gp[h * W + w] += v;                                                         \
                    }                                                                                       \
                }                                                                                           \
            }                                                                                               \
        });                                                                                                 \
    }
ROI_AVG_BACK(float)
ROI_AVG_BACK(double)

/* ---- ROIAlign with max ----------------------------------------------------- */
/* Sample (iy, ix) of bin (i, j): the same points ROIAlign averages. */
static inline void align_point(const align_geom *g, int64_t i, int64_t j, int64_t iy, int64_t ix, double *yy,
                               double *xx) {
    *yy = align_coord(g->y0, g->bh, i, iy, g->gh);
    *xx = align_coord(g->x0, g->bw, j, ix, g->gw);
}

#define ROI_MAX_ALIGN(T)                                                                                   \
    static void roi_max_align_##T(const void *x_v, const double *rois, const int64_t *idx, int64_t R,         \
                                  int64_t C, int64_t H, int64_t W, int64_t OH, int64_t OW, double scale,      \
                                  int64_t sh, int64_t sw, void *y_v, int32_t *am) {                           \
        const T *x = (const T *)x_v; T *y = (T *)y_v;                                                         \
        int par = par_ok(R * C, R * C * OH * OW * 4);                                                       \
        CH_PAR_FOR(par, int64_t rc = 0; rc < R * C; rc++, {                                                 \
            int64_t r = rc / C, c = rc % C;                                                                 \
            align_geom g;                                                                                   \
            align_geometry(rois + 4 * r, scale, OH, OW, sh, sw, &g);                                        \
            const T *xp = x + (idx[r] * C + c) * H * W;                                                     \
            for (int64_t i = 0; i < OH; i++)                                                                \
                for (int64_t j = 0; j < OW; j++) {                                                          \
                    double best = -INFINITY; /* no sample in the image: -inf, as in Chainer */              \
                    int64_t bi = -1;                                                                        \
                    for (int64_t iy = 0; iy < g.gh; iy++)                                                   \
                        for (int64_t ix = 0; ix < g.gw; ix++) {                                             \
                            double yy, xx;                                                                  \
                            tap4 t;                                                                         \
                            align_point(&g, i, j, iy, ix, &yy, &xx);                                        \
                            if (!bilinear_taps(yy, xx, H, W, &t))                                           \
                                continue;                                                                   \
                            double v = taps_dot_##T(&t, xp);                                                \
                            if (v > best) { /* strict: the first maximum */                                 \
                                best = v;                                                                   \
                                bi = iy * g.gw + ix;                                                        \
                            }                                                                               \
                        }                                                                                   \
                    y[(rc * OH + i) * OW + j] = (T)best;                                                    \
                    am[(rc * OH + i) * OW + j] = (int32_t)bi;                                               \
                }                                                                                           \
        });                                                                                                 \
    }
ROI_MAX_ALIGN(float)
ROI_MAX_ALIGN(double)

/* The bilinear taps of the argmax sample a of bin (i, j); 0 when none. */
static inline int argmax_taps(const align_geom *g, int64_t i, int64_t j, int32_t a, int64_t H, int64_t W, tap4 *t) {
    if (a < 0 || a >= g->gh * g->gw)
        return 0;
    double yy, xx;
    align_point(g, i, j, a / g->gw, a % g->gw, &yy, &xx);
    return bilinear_taps(yy, xx, H, W, t);
}

#define ROI_MAX_ALIGN_SCATTER(T)                                                                           \
    static void roi_max_align_scatter_##T(const void *gy_v, const int32_t *am, const double *rois,           \
                                          const int64_t *idx, int64_t R, int64_t C, int64_t N, int64_t H,    \
                                          int64_t W, int64_t OH, int64_t OW, double scale, int64_t sh,       \
                                          int64_t sw, void *gx_v) {                                          \
        const T *gy = (const T *)gy_v; T *gx = (T *)gx_v;                                                    \
        int par = par_ok(C, R * C * OH * OW * 4 + N * C * H * W);                                           \
        CH_PAR_FOR(par, int64_t c = 0; c < C; c++, {                                                        \
            zero_planes(gx, sizeof(T), N, C, c, H * W);                                                     \
            for (int64_t r = 0; r < R; r++) {                                                               \
                align_geom g;                                                                               \
                align_geometry(rois + 4 * r, scale, OH, OW, sh, sw, &g);                                    \
                T *gp = gx + (idx[r] * C + c) * H * W;                                                      \
                const T *src = gy + (r * C + c) * OH * OW;                                                  \
                const int32_t *ap = am + (r * C + c) * OH * OW;                                             \
                for (int64_t i = 0; i < OH; i++)                                                            \
                    for (int64_t j = 0; j < OW; j++) {                                                      \
                        tap4 t;                                                                             \
                        if (argmax_taps(&g, i, j, ap[i * OW + j], H, W, &t))                                \
                            taps_add_##T(&t, gp, (double)src[i * OW + j]);                                  \
                    }                                                                                       \
            }                                                                                               \
        });                                                                                                 \
    }
ROI_MAX_ALIGN_SCATTER(float)
ROI_MAX_ALIGN_SCATTER(double)

#define ROI_MAX_ALIGN_GATHER(T)                                                                            \
    static void roi_max_align_gather_##T(const void *x_v, const int32_t *am, const double *rois,                \
                                         const int64_t *idx, int64_t R, int64_t C, int64_t H, int64_t W,        \
                                         int64_t OH, int64_t OW, double scale, int64_t sh, int64_t sw,          \
                                         void *y_v) {                                                           \
        const T *x = (const T *)x_v; T *y = (T *)y_v;                                                           \
        int par = par_ok(R * C, R * C * OH * OW * 4);                                                       \
        CH_PAR_FOR(par, int64_t rc = 0; rc < R * C; rc++, {                                                 \
            int64_t r = rc / C, c = rc % C;                                                                 \
            align_geom g;                                                                                   \
            align_geometry(rois + 4 * r, scale, OH, OW, sh, sw, &g);                                        \
            const T *xp = x + (idx[r] * C + c) * H * W;                                                     \
            for (int64_t i = 0; i < OH; i++)                                                                \
                for (int64_t j = 0; j < OW; j++) {                                                          \
                    tap4 t;                                                                                 \
                    double v = 0;                                                                           \
                    if (argmax_taps(&g, i, j, am[(rc * OH + i) * OW + j], H, W, &t))                        \
                        v = taps_dot_##T(&t, xp);                                                           \
                    y[(rc * OH + i) * OW + j] = (T)v;                                                       \
                }                                                                                           \
        });                                                                                                 \
    }
ROI_MAX_ALIGN_GATHER(float)
ROI_MAX_ALIGN_GATHER(double)

/* ---- kernels (Chainer 7 pooling, max align) -------------------------------- */
ch_status ch_cpu_roi_max_pooling_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices,
                                    double spatial_scale, ch_tensor *y, ch_tensor *argmax) {
    RUN_ROI_MAX(roi_max_pooling, x, rois, roi_indices, spatial_scale, y, argmax);
    return CH_OK;
}

ch_status ch_cpu_roi_average_pooling_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices,
                                        double spatial_scale, ch_tensor *y) {
    int64_t R = y->dim[0], C = x->dim[1], H = x->dim[2], W = x->dim[3], OH = y->dim[2], OW = y->dim[3];
    const double *rp = (const double *)ch_base(rois);
    const int64_t *ip = (const int64_t *)ch_base(roi_indices);
    CH_FLOAT_KERNEL(x->dt, roi_avg)(ch_base(x), rp, ip, R, C, H, W, OH, OW, spatial_scale, y->data);
    return CH_OK;
}

ch_status ch_cpu_roi_average_pooling_2d_backward(const ch_tensor *gy, const ch_tensor *rois,
                                                 const ch_tensor *roi_indices, double spatial_scale, ch_tensor *gx) {
    int64_t R = gy->dim[0], C = gy->dim[1], n = gx->dim[0], h = gx->dim[2], w = gx->dim[3];
    const double *rp = (const double *)ch_base(rois);
    const int64_t *ip = (const int64_t *)ch_base(roi_indices);
    CH_FLOAT_KERNEL(gy->dt, roi_avg_back)(ch_base(gy), rp, ip, R, C, n, h, w, gy->dim[2], gy->dim[3], spatial_scale,
            gx->data);
    return CH_OK;
}

ch_status ch_cpu_roi_max_align_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices,
                                  double spatial_scale, int64_t sampling_h, int64_t sampling_w, ch_tensor *y,
                                  ch_tensor *argmax) {
    int64_t R = y->dim[0], C = x->dim[1], H = x->dim[2], W = x->dim[3], OH = y->dim[2], OW = y->dim[3];
    const double *rp = (const double *)ch_base(rois);
    const int64_t *ip = (const int64_t *)ch_base(roi_indices);
    CH_FLOAT_KERNEL(x->dt, roi_max_align)(ch_base(x), rp, ip, R, C, H, W, OH, OW, spatial_scale, sampling_h,
            sampling_w, y->data, (int32_t *)argmax->data);
    return CH_OK;
}

ch_status ch_cpu_roi_max_align_2d_scatter(const ch_tensor *gy, const ch_tensor *rois, const ch_tensor *roi_indices,
                                          const ch_tensor *argmax, double spatial_scale, int64_t sampling_h,
                                          int64_t sampling_w, ch_tensor *gx) {
    int64_t R = gy->dim[0], C = gy->dim[1], n = gx->dim[0], h = gx->dim[2], w = gx->dim[3];
    const double *rp = (const double *)ch_base(rois);
    const int64_t *ip = (const int64_t *)ch_base(roi_indices);
    const int32_t *ap = (const int32_t *)ch_base(argmax);
    CH_FLOAT_KERNEL(gy->dt, roi_max_align_scatter)(ch_base(gy), ap, rp, ip, R, C, n, h, w, gy->dim[2], gy->dim[3],
            spatial_scale, sampling_h, sampling_w, gx->data);
    return CH_OK;
}

ch_status ch_cpu_roi_max_align_2d_gather(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices,
                                         const ch_tensor *argmax, double spatial_scale, int64_t sampling_h,
                                         int64_t sampling_w, ch_tensor *y) {
    int64_t R = y->dim[0], C = x->dim[1], H = x->dim[2], W = x->dim[3], OH = y->dim[2], OW = y->dim[3];
    const double *rp = (const double *)ch_base(rois);
    const int64_t *ip = (const int64_t *)ch_base(roi_indices);
    const int32_t *ap = (const int32_t *)ch_base(argmax);
    CH_FLOAT_KERNEL(x->dt, roi_max_align_gather)(ch_base(x), ap, rp, ip, R, C, H, W, OH, OW, spatial_scale,
            sampling_h, sampling_w, y->data);
    return CH_OK;
}

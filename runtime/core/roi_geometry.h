/*
 * roi_geometry.h -- the geometry of the ROI pooling family, written once
 * for the CPU kernels (runtime/cpu/roi_pooling.c) and the CUDA kernels
 * (runtime/cuda/roi.cu), so that both devices pick the same bins, samples
 * and bilinear weights.
 *
 * Under nvcc every function is __host__ __device__; in C they are static
 * inline.  A ROI b is (y_min, x_min, y_max, x_max) in image coordinates,
 * scaled here by `scale`; bins are outh x outw.
 */
#ifndef CHAINLUA_ROI_GEOMETRY_H
#define CHAINLUA_ROI_GEOMETRY_H

#include <math.h>
#include <stdint.h>

#ifdef __CUDACC__
#define CH_ROI static __host__ __device__ __forceinline__
#else
#define CH_ROI static inline
#endif

/* ---- ROI max / average pooling ------------------------------------------ */
/* The bins of one ROI: corners rounded half to even (Python's round()), a
 * span of max(end - start + extra, 1) cells: extra is 1 for roi_pooling_2d,
 * 0 for Chainer 7's roi_max/average_pooling_2d. */
typedef struct pool_geom {
    int64_t y0, x0;
    double bh, bw;
} pool_geom;

CH_ROI pool_geom pool_geometry(const double *b, double scale, int64_t extra, int64_t outh, int64_t outw) {
    int64_t y0 = (int64_t)nearbyint(b[0] * scale), x0 = (int64_t)nearbyint(b[1] * scale);
    int64_t y1 = (int64_t)nearbyint(b[2] * scale), x1 = (int64_t)nearbyint(b[3] * scale);
    int64_t sh = y1 - y0 + extra, sw = x1 - x0 + extra;
    int64_t rh = sh > 1 ? sh : 1, rw = sw > 1 ? sw : 1;
    pool_geom g = {y0, x0, (double)rh / (double)outh, (double)rw / (double)outw};
    return g;
}

/* Bin b of a ROI starting at `start` with bins of `bin` cells covers
 * [floor(b bin), ceil((b + 1) bin)) shifted by start, clipped to [0, size). */
CH_ROI void bin_range(int64_t b, double bin, int64_t start, int64_t size, int64_t *lo, int64_t *hi) {
    int64_t s = (int64_t)floor((double)b * bin) + start, e = (int64_t)ceil((double)(b + 1) * bin) + start;
    *lo = s < 0 ? 0 : (s > size ? size : s);
    *hi = e < 0 ? 0 : (e > size ? size : e);
}

/* ---- ROIAlign ------------------------------------------------------------- */
/* The bilinear neighbours and weights of sample point (y, x) in an H x W
 * plane, or 0 when the point lies more than one cell outside. */
typedef struct tap4 {
    int64_t o[4];
    double w[4];
} tap4;

CH_ROI int bilinear_taps(double y, double x, int64_t H, int64_t W, tap4 *t) {
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

/* The sampling geometry of one ROI: origin, bin size, and gh x gw samples
 * per bin (sampling sh, sw; <= 0: ceil(roi size / bins)). */
typedef struct align_geom {
    double y0, x0, bh, bw;
    int64_t gh, gw;
} align_geom;

CH_ROI align_geom align_geometry(const double *b, double scale, int64_t outh, int64_t outw, int64_t sh, int64_t sw) {
    align_geom g;
    g.y0 = b[0] * scale;
    g.x0 = b[1] * scale;
    double rh = b[2] * scale - g.y0, rw = b[3] * scale - g.x0;
    if (rh < 1.0)
        rh = 1.0;
    if (rw < 1.0)
        rw = 1.0;
    g.bh = rh / (double)outh;
    g.bw = rw / (double)outw;
    g.gh = sh > 0 ? sh : (int64_t)ceil(rh / (double)outh);
    g.gw = sw > 0 ? sw : (int64_t)ceil(rw / (double)outw);
    return g;
}

/* One coordinate of sample `sample` (of `samples`) in bin `cell`: the
 * points ROIAlign averages, and takes the max of. */
CH_ROI double align_coord(double origin, double bin, int64_t cell, int64_t sample, int64_t samples) {
    return origin + (double)cell * bin + ((double)sample + 0.5) * bin / (double)samples;
}

/* The bilinear taps of the argmax sample a of bin (i, j); 0 when none. */
CH_ROI int argmax_taps(const align_geom *g, int64_t i, int64_t j, int32_t a, int64_t H, int64_t W, tap4 *t) {
    if (a < 0 || a >= g->gh * g->gw)
        return 0;
    double yy = align_coord(g->y0, g->bh, i, a / g->gw, g->gh), xx = align_coord(g->x0, g->bw, j, a % g->gw, g->gw);
    return bilinear_taps(yy, xx, H, W, t);
}

#endif

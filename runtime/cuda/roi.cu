/*
 * roi.cu -- the ROI pooling family on the GPU (Fast R-CNN's ROI max
 * pooling, Chainer 7's roi_max/average_pooling_2d, ROIAlign with average
 * and max, and the scatter/gather kernels of their gradients), with the
 * geometry and arithmetic of runtime/cpu/roi_pooling.c, item-parallel with
 * cu_each:
 *   - forward and gather kernels: one item per output cell (r, c, i, j);
 *   - gradient (scatter) kernels: one item per input plane (n, c), which
 *     clears it and adds the contributions of the ROIs of image n in ROI
 *     order, cell by cell, exactly the CPU's order: no atomics, the CPU's
 *     bits, deterministic.  The cost: only N * C items (e.g. 2 x 256), each
 *     walking every ROI; a per-cell atomic scatter would use the GPU
 *     better but sum in an order that depends on the schedule.
 * Compiled with --fmad=false (runtime/cuda/CMakeLists.txt): the bilinear
 * sums round each product as the CPU does.
 *
 * Compiled; the per-item code is tested emulated on the host against the
 * CPU (tests/cuda/test_roi.cu).  NOT yet run on a GPU.
 */
#include <math.h>

#include "backend.h"
#include "launch.cuh"
#include "roi_geometry.h"

/* The geometry (bins, samples, bilinear weights) is the CPU's: core/roi_geometry.h. */
template <typename T> CU_HD double taps_dot(const tap4 &t, const T *xp) {
    return t.w[0] * xp[t.o[0]] + t.w[1] * xp[t.o[1]] + t.w[2] * xp[t.o[2]] + t.w[3] * xp[t.o[3]];
}
template <typename T> CU_HD void taps_add(const tap4 &t, T *gp, double v) {
    for (int k = 0; k < 4; k++)
        gp[t.o[k]] += (T)(t.w[k] * v);
}

/* ---- forward and gather: one item per output cell ------------------------- */
template <typename T> struct roi_cell_body {
    cu_roi_job j;
    const T *x;
    T *y;
    CU_HD void operator()(int64_t e) const {
        int64_t jj = e % j.OW, i = (e / j.OW) % j.OH, rc = e / (j.OH * j.OW);
        int64_t r = rc / j.C, c = rc % j.C;
        const T *xp = x + (j.idx[r] * j.C + c) * j.H * j.W;
        int32_t *am = j.argmax;
        switch (j.kind) {
        case CU_ROI_MAX_POOL:
        case CU_ROI_MAX_POOLING: {
            bool chainer7 = j.kind == CU_ROI_MAX_POOLING;
            pool_geom g = pool_geometry(j.rois + 4 * r, j.scale, chainer7 ? 0 : 1, j.OH, j.OW);
            int64_t h0, h1, w0, w1;
            bin_range(i, g.bh, g.y0, j.H, &h0, &h1);
            bin_range(jj, g.bw, g.x0, j.W, &w0, &w1);
            T best = chainer7 ? (T)-INFINITY : (T)0;
            int64_t bi = -1;
            for (int64_t h = h0; h < h1; h++)
                for (int64_t w = w0; w < w1; w++) {
                    T v = xp[h * j.W + w];
                    if (bi < 0 || v > best) { /* the first maximum */
                        best = v;
                        bi = h * j.W + w;
                    }
                }
            y[e] = best;
            am[e] = (int32_t)bi;
            break;
        }
        case CU_ROI_AVG_POOLING: {
            pool_geom g = pool_geometry(j.rois + 4 * r, j.scale, 0, j.OH, j.OW);
            int64_t h0, h1, w0, w1;
            bin_range(i, g.bh, g.y0, j.H, &h0, &h1);
            bin_range(jj, g.bw, g.x0, j.W, &w0, &w1);
            double acc = 0;
            for (int64_t h = h0; h < h1; h++)
                for (int64_t w = w0; w < w1; w++)
                    acc += (double)xp[h * j.W + w];
            y[e] = (h1 > h0 && w1 > w0) ? (T)(acc / (double)((h1 - h0) * (w1 - w0))) : (T)0;
            break;
        }
        case CU_ROI_MAX_POOL_GATHER: {
            int32_t a = am[e];
            y[e] = (a >= 0 && a < j.H * j.W) ? xp[a] : (T)0;
            break;
        }
        case CU_ROI_ALIGN_AVG:
        case CU_ROI_ALIGN_MAX: {
            align_geom g = align_geometry(j.rois + 4 * r, j.scale, j.OH, j.OW, j.sh, j.sw);
            double acc = 0, best = -INFINITY;
            int64_t bi = -1;
            for (int64_t iy = 0; iy < g.gh; iy++) {
                double yy = align_coord(g.y0, g.bh, i, iy, g.gh);
                for (int64_t ix = 0; ix < g.gw; ix++) {
                    tap4 t;
                    if (!bilinear_taps(yy, align_coord(g.x0, g.bw, jj, ix, g.gw), j.H, j.W, &t))
                        continue;
                    double v = taps_dot(t, xp);
                    acc += v;
                    if (v > best) { /* strict: the first maximum */
                        best = v;
                        bi = iy * g.gw + ix;
                    }
                }
            }
            if (j.kind == CU_ROI_ALIGN_MAX) {
                y[e] = (T)best;
                am[e] = (int32_t)bi;
            } else {
                double count = (double)(g.gh * g.gw);
                y[e] = count > 0 ? (T)(acc / count) : (T)0;
            }
            break;
        }
        default: { /* CU_ROI_ALIGN_MAX_GATHER */
            align_geom g = align_geometry(j.rois + 4 * r, j.scale, j.OH, j.OW, j.sh, j.sw);
            tap4 t;
            y[e] = argmax_taps(&g, i, jj, am[e], j.H, j.W, &t) ? (T)taps_dot(t, xp) : (T)0;
        }
        }
    }
};

/* ---- gradients: one item per input plane ---------------------------------- */
template <typename T> struct roi_plane_body {
    cu_roi_job j;
    const T *gy;
    T *gx;
    CU_HD void operator()(int64_t nc) const {
        int64_t n = nc / j.C, c = nc % j.C, HW = j.H * j.W, cells = j.OH * j.OW;
        T *gp = gx + nc * HW;
        for (int64_t k = 0; k < HW; k++)
            gp[k] = (T)0;
        for (int64_t r = 0; r < j.R; r++) {
            if (j.idx[r] != n)
                continue;
            const T *src = gy + (r * j.C + c) * cells;
            const int32_t *ap = j.argmax ? j.argmax + (r * j.C + c) * cells : NULL;
            if (j.kind == CU_ROI_MAX_POOL_SCATTER) {
                for (int64_t o = 0; o < cells; o++)
                    if (ap[o] >= 0 && ap[o] < HW)
                        gp[ap[o]] += src[o];
                continue;
            }
            pool_geom pg = {};
            align_geom ag = {};
            if (j.kind == CU_ROI_AVG_POOLING_BACK)
                pg = pool_geometry(j.rois + 4 * r, j.scale, 0, j.OH, j.OW);
            else
                ag = align_geometry(j.rois + 4 * r, j.scale, j.OH, j.OW, j.sh, j.sw);
            for (int64_t i = 0; i < j.OH; i++)
                for (int64_t jj = 0; jj < j.OW; jj++) {
                    if (j.kind == CU_ROI_AVG_POOLING_BACK) {
                        int64_t h0, h1, w0, w1;
                        bin_range(i, pg.bh, pg.y0, j.H, &h0, &h1);
                        bin_range(jj, pg.bw, pg.x0, j.W, &w0, &w1);
                        if (h1 <= h0 || w1 <= w0)
                            continue;
                        T v = (T)((double)src[i * j.OW + jj] / (double)((h1 - h0) * (w1 - w0)));
                        for (int64_t h = h0; h < h1; h++)
                            for (int64_t w = w0; w < w1; w++)
                                gp[h * j.W + w] += v;
                    } else if (j.kind == CU_ROI_ALIGN_AVG_BACK) {
                        double count = (double)(ag.gh * ag.gw);
                        if (count <= 0)
                            continue;
                        double v = (double)src[i * j.OW + jj] / count;
                        for (int64_t iy = 0; iy < ag.gh; iy++) {
                            double yy = align_coord(ag.y0, ag.bh, i, iy, ag.gh);
                            for (int64_t ix = 0; ix < ag.gw; ix++) {
                                tap4 t;
                                if (bilinear_taps(yy, align_coord(ag.x0, ag.bw, jj, ix, ag.gw), j.H, j.W, &t))
                                    taps_add(t, gp, v);
                            }
                        }
                    } else { /* CU_ROI_ALIGN_MAX_SCATTER */
                        tap4 t;
                        if (argmax_taps(&ag, i, jj, ap[i * j.OW + jj], j.H, j.W, &t))
                            taps_add(t, gp, (double)src[i * j.OW + jj]);
                    }
                }
        }
    }
};

extern "C" ch_status cu_roi_launch(const cu_roi_job *j, int dt, const char *in, char *out) {
    bool planes = j->kind == CU_ROI_MAX_POOL_SCATTER || j->kind == CU_ROI_AVG_POOLING_BACK ||
                  j->kind == CU_ROI_ALIGN_AVG_BACK || j->kind == CU_ROI_ALIGN_MAX_SCATTER;
    int64_t n = planes ? j->N * j->C : j->R * j->C * j->OH * j->OW;
    if (dt == CH_FLOAT32)
        return planes ? cu_each("roi pooling", n, roi_plane_body<float>{*j, (const float *)in, (float *)out})
                      : cu_each("roi pooling", n, roi_cell_body<float>{*j, (const float *)in, (float *)out});
    return planes ? cu_each("roi pooling", n, roi_plane_body<double>{*j, (const double *)in, (double *)out})
                  : cu_each("roi pooling", n, roi_cell_body<double>{*j, (const double *)in, (double *)out});
}

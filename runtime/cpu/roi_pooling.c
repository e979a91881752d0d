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
 * runtime/ops/roi_pooling.c.  The geometry (bins, samples, bilinear
 * weights) is shared with the GPU: core/roi_geometry.h.
 */
#include "../core/internal.h"
#include "../core/kernels.h"
#include "../core/roi_geometry.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* What every kernel here reads: the sizes of the image planes x or gx
 * (N, C, H, W) and of the per-ROI planes y or gy (R, C, OH, OW), the ROIs
 * and their images, the argmax (written by the forward max kernels, read by
 * their scatter and gather; NULL where there is none) and the parameters. */
typedef struct roi_job {
    const double *rois;
    const int64_t *idx;
    int32_t *argmax;
    int64_t R, C, N, H, W, OH, OW;
    double scale;
    int64_t sh, sw;
} roi_job;

static roi_job roi_job_of(const ch_tensor *planes, const ch_tensor *per_roi, const ch_tensor *rois,
                          const ch_tensor *roi_indices, const ch_tensor *argmax, double scale, int64_t sampling_h,
                          int64_t sampling_w) {
    roi_job job = {
        .rois = rois ? (const double *)ch_base(rois) : NULL,
        .idx = (const int64_t *)ch_base(roi_indices),
        .argmax = argmax ? (int32_t *)ch_base(argmax) : NULL,
        .R = per_roi->dim[0], .C = planes->dim[1], .N = planes->dim[0], .H = planes->dim[2], .W = planes->dim[3],
        .OH = per_roi->dim[2], .OW = per_roi->dim[3],
        .scale = scale, .sh = sampling_h, .sw = sampling_w,
    };
    return job;
}

static inline int par_ok(int64_t items, int64_t work) {
    return items > 1 && work >= CH_PARALLEL_GRAIN && ch_threads() > 1;
}

/* Clears channel c of the N planes (HW elements of `size` bytes each) of a
 * gradient gx (N, C, H, W), before a scatter adds into it. */
static inline void zero_planes(void *gx, size_t size, int64_t N, int64_t C, int64_t c, int64_t HW) {
    for (int64_t n = 0; n < N; n++)
        memset((char *)gx + (size_t)((n * C + c) * HW) * size, 0, size * (size_t)HW);
}

/* ---- the loops every kernel is made of --------------------------------- */
/* NAME_T(job, in, out) for one element type T; BODY sees in (const T *) and
 * out (T *): x and y, or gy and gx. */
#define ROI_KERNEL(NAME, T, ...)                                                                           \
    static void NAME##_##T(const roi_job *job, const void *in_v, void *out_v) {                             \
        const T *in = (const T *)in_v;                                                                       \
        T *out = (T *)out_v;                                                                                 \
        __VA_ARGS__;                                                                                         \
    }

/* A forward kernel's loop: over (roi, channel) pairs, in parallel when the
 * work is large enough; binds r, c, rc = r * C + c and xp, the pair's plane
 * of the input. */
#define FOR_EACH_ROI_CHANNEL(work, ...)                                                                    \
    CH_PAR_FOR(par_ok(job->R * job->C, work), int64_t rc = 0; rc < job->R * job->C; rc++, {                 \
        int64_t r = rc / job->C, c = rc % job->C;                                                            \
        const __typeof__(*in) *xp = in + (job->idx[r] * job->C + c) * job->H * job->W;                       \
        __VA_ARGS__                                                                                          \
    })

/* A gradient kernel's loop: over channels, in parallel; clears the channel's
 * planes of gx, then binds, for every ROI r, gp (the plane of gx it adds
 * into) and src (its plane of gy). */
#define FOR_EACH_CHANNEL_ROI(work, ...)                                                                    \
    CH_PAR_FOR(par_ok(job->C, work), int64_t c = 0; c < job->C; c++, {                                      \
        zero_planes(out, sizeof(*out), job->N, job->C, c, job->H * job->W);                                  \
        for (int64_t r = 0; r < job->R; r++) {                                                               \
            __typeof__(*out) *gp = out + (job->idx[r] * job->C + c) * job->H * job->W;                       \
            const __typeof__(*in) *src = in + (r * job->C + c) * job->OH * job->OW;                          \
            __VA_ARGS__                                                                                      \
        }                                                                                                    \
    })

/* Every output cell (i, j) of a ROI's plane. */
#define FOR_EACH_CELL(...)                                                                                 \
    for (int64_t i = 0; i < job->OH; i++)                                                                   \
        for (int64_t j = 0; j < job->OW; j++) {                                                              \
            __VA_ARGS__                                                                                      \
        }

/* ---- ROI max / average pooling ------------------------------------------ */
/* Every bin (i, j) of ROI r, extending its span by EXTRA cells, with the
 * cells [h0, h1) x [w0, w1) it covers. */
#define FOR_EACH_POOL_BIN(EXTRA, ...)                                                                      \
    pool_geom g = pool_geometry(job->rois + 4 * r, job->scale, EXTRA, job->OH, job->OW);                     \
    for (int64_t i = 0; i < job->OH; i++) {                                                                 \
        int64_t h0, h1;                                                                                      \
        bin_range(i, g.bh, g.y0, job->H, &h0, &h1);                                                          \
        for (int64_t j = 0; j < job->OW; j++) {                                                              \
            int64_t w0, w1;                                                                                  \
            bin_range(j, g.bw, g.x0, job->W, &w0, &w1);                                                      \
            __VA_ARGS__                                                                                      \
        }                                                                                                    \
    }

/* y and argmax of both max poolings, NAME_T: the ROI span's EXTRA cells
 * (1 for roi_pooling_2d, 0 for Chainer 7's) and what an empty bin gives,
 * EMPTY (0 and -inf, as in Chainer), with argmax -1.  Both are constants of
 * the instance: the bin loop is the hot one. */
#define ROI_MAX(T, NAME, EXTRA, EMPTY)                                                                     \
    ROI_KERNEL(NAME, T, FOR_EACH_ROI_CHANNEL(job->R * job->C * job->H * job->W,                              \
        T *yp = out + rc * job->OH * job->OW;                                                                \
        int32_t *ap = job->argmax + rc * job->OH * job->OW;                                                  \
        FOR_EACH_POOL_BIN(EXTRA,                                                                             \
            T best = (T)EMPTY;                                                                               \
            int64_t bi = -1;                                                                                 \
            for (int64_t h = h0; h < h1; h++)                                                                \
                for (int64_t w = w0; w < w1; w++) {                                                          \
                    T v = xp[h * job->W + w];                                                                \
                    if (bi < 0 || v > best) { /* the first maximum, as numpy's argmax */                     \
                        best = v;                                                                            \
                        bi = h * job->W + w;                                                                 \
                    }                                                                                        \
                }                                                                                            \
            yp[i * job->OW + j] = best;                                                                      \
            ap[i * job->OW + j] = (int32_t)bi;)))
ROI_MAX(float, roi_max_pool, 1, 0)
ROI_MAX(double, roi_max_pool, 1, 0)
ROI_MAX(float, roi_max_pooling, 0, -INFINITY)
ROI_MAX(double, roi_max_pooling, 0, -INFINITY)

/* gx = gy summed at the argmax cells. */
#define ROI_SCATTER(T)                                                                                     \
    ROI_KERNEL(roi_scatter, T, FOR_EACH_CHANNEL_ROI(job->R * job->C * job->OH * job->OW + job->N * job->C * job->H * job->W, \
        const int32_t *ap = job->argmax + (r * job->C + c) * job->OH * job->OW;                              \
        for (int64_t o = 0; o < job->OH * job->OW; o++)                                                      \
            if (ap[o] >= 0 && ap[o] < job->H * job->W)                                                       \
                gp[ap[o]] += src[o];))
ROI_SCATTER(float)
ROI_SCATTER(double)

/* y = x at the argmax cells (0 out of range). */
#define ROI_GATHER(T)                                                                                      \
    ROI_KERNEL(roi_gather, T, FOR_EACH_ROI_CHANNEL(job->R * job->C * job->OH * job->OW,                      \
        const int32_t *ap = job->argmax + rc * job->OH * job->OW;                                            \
        for (int64_t o = 0; o < job->OH * job->OW; o++)                                                      \
            out[rc * job->OH * job->OW + o] = (ap[o] >= 0 && ap[o] < job->H * job->W) ? xp[ap[o]] : (T)0;))
ROI_GATHER(float)
ROI_GATHER(double)

/* Chainer 7's ROI average pooling: the bin means (0 for an empty bin). */
#define ROI_AVG(T)                                                                                         \
    ROI_KERNEL(roi_avg, T, FOR_EACH_ROI_CHANNEL(job->R * job->C * job->H * job->W,                           \
        FOR_EACH_POOL_BIN(0,                                                                                 \
            double acc = 0;                                                                                  \
            for (int64_t h = h0; h < h1; h++)                                                                \
                for (int64_t w = w0; w < w1; w++)                                                            \
                    acc += (double)xp[h * job->W + w];                                                       \
            int64_t n = (h1 - h0) * (w1 - w0);                                                               \
            out[(rc * job->OH + i) * job->OW + j] = (h1 > h0 && w1 > w0) ? (T)(acc / (double)n) : (T)0;)))
ROI_AVG(float)
ROI_AVG(double)

/* Its gradient: each bin's gy spread evenly over its cells. */
#define ROI_AVG_BACK(T)                                                                                    \
    ROI_KERNEL(roi_avg_back, T, FOR_EACH_CHANNEL_ROI(job->R * job->C * job->H * job->W + job->N * job->C * job->H * job->W, \
        FOR_EACH_POOL_BIN(0,                                                                                 \
            if (h1 <= h0 || w1 <= w0)                                                                        \
                continue;                                                                                    \
            T v = (T)((double)src[i * job->OW + j] / (double)((h1 - h0) * (w1 - w0)));                       \
            for (int64_t h = h0; h < h1; h++)                                                                \
                for (int64_t w = w0; w < w1; w++)                                                            \
                    gp[h * job->W + w] += v;)))
ROI_AVG_BACK(float)
ROI_AVG_BACK(double)

/* ---- ROIAlign (average and max) ----------------------------------------- */
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

/* Every sample (iy, ix) of bin (i, j) that falls in the image, with its
 * bilinear taps t. */
#define FOR_EACH_SAMPLE(...)                                                                               \
    for (int64_t iy = 0; iy < g.gh; iy++) {                                                                 \
        double yy = align_coord(g.y0, g.bh, i, iy, g.gh);                                                    \
        for (int64_t ix = 0; ix < g.gw; ix++) {                                                              \
            tap4 t;                                                                                          \
            if (bilinear_taps(yy, align_coord(g.x0, g.bw, j, ix, g.gw), job->H, job->W, &t)) {               \
                __VA_ARGS__                                                                                  \
            }                                                                                                \
        }                                                                                                    \
    }

/* Every output cell (i, j) of ROI r, with the ROI's sampling geometry g. */
#define FOR_EACH_ALIGN_CELL(...)                                                                           \
    align_geom g = align_geometry(job->rois + 4 * r, job->scale, job->OH, job->OW, job->sh, job->sw);        \
    FOR_EACH_CELL(__VA_ARGS__)

/* ROIAlign with average: the mean of the bin's samples (outside ones count
 * as 0). */
#define ROI_ALIGN(T)                                                                                       \
    ROI_KERNEL(roi_align, T, FOR_EACH_ROI_CHANNEL(job->R * job->C * job->OH * job->OW * 4,                   \
        FOR_EACH_ALIGN_CELL(                                                                                 \
            double count = (double)(g.gh * g.gw);                                                            \
            double acc = 0;                                                                                  \
            FOR_EACH_SAMPLE(acc += taps_dot_##T(&t, xp);)                                                    \
            out[(rc * job->OH + i) * job->OW + j] = count > 0 ? (T)(acc / count) : (T)0;)))
ROI_ALIGN(float)
ROI_ALIGN(double)

#define ROI_ALIGN_BACK(T)                                                                                  \
    ROI_KERNEL(roi_align_back, T, FOR_EACH_CHANNEL_ROI(job->R * job->C * job->OH * job->OW * 4 + job->N * job->C * job->H * job->W, \
        FOR_EACH_ALIGN_CELL(                                                                                 \
            double count = (double)(g.gh * g.gw);                                                            \
            if (count <= 0)                                                                                  \
                continue;                                                                                    \
            double v = (double)src[i * job->OW + j] / count;                                                 \
            FOR_EACH_SAMPLE(taps_add_##T(&t, gp, v);))))
ROI_ALIGN_BACK(float)
ROI_ALIGN_BACK(double)

/* ROIAlign with max: y and argmax, the first sample with the largest
 * interpolated value (-inf and -1 when no sample is in the image, as in
 * Chainer). */
#define ROI_MAX_ALIGN(T)                                                                                   \
    ROI_KERNEL(roi_max_align, T, FOR_EACH_ROI_CHANNEL(job->R * job->C * job->OH * job->OW * 4,               \
        FOR_EACH_ALIGN_CELL(                                                                                 \
            double best = -INFINITY;                                                                         \
            int64_t bi = -1;                                                                                 \
            FOR_EACH_SAMPLE(                                                                                 \
                double v = taps_dot_##T(&t, xp);                                                             \
                if (v > best) { /* strict: the first maximum */                                              \
                    best = v;                                                                                \
                    bi = iy * g.gw + ix;                                                                     \
                })                                                                                           \
            out[(rc * job->OH + i) * job->OW + j] = (T)best;                                                 \
            job->argmax[(rc * job->OH + i) * job->OW + j] = (int32_t)bi;)))
ROI_MAX_ALIGN(float)
ROI_MAX_ALIGN(double)

/* Its scatter: gy added to the argmax samples' bilinear neighbours. */
#define ROI_MAX_ALIGN_SCATTER(T)                                                                           \
    ROI_KERNEL(roi_max_align_scatter, T,                                                                     \
               FOR_EACH_CHANNEL_ROI(job->R * job->C * job->OH * job->OW * 4 + job->N * job->C * job->H * job->W, \
        const int32_t *ap = job->argmax + (r * job->C + c) * job->OH * job->OW;                              \
        FOR_EACH_ALIGN_CELL(                                                                                 \
            tap4 t;                                                                                          \
            if (argmax_taps(&g, i, j, ap[i * job->OW + j], job->H, job->W, &t))                              \
                taps_add_##T(&t, gp, (double)src[i * job->OW + j]);)))
ROI_MAX_ALIGN_SCATTER(float)
ROI_MAX_ALIGN_SCATTER(double)

/* Its gather: x interpolated at the argmax samples (0 where none). */
#define ROI_MAX_ALIGN_GATHER(T)                                                                            \
    ROI_KERNEL(roi_max_align_gather, T, FOR_EACH_ROI_CHANNEL(job->R * job->C * job->OH * job->OW * 4,        \
        FOR_EACH_ALIGN_CELL(                                                                                 \
            tap4 t;                                                                                          \
            double v = 0;                                                                                    \
            if (argmax_taps(&g, i, j, job->argmax[(rc * job->OH + i) * job->OW + j], job->H, job->W, &t))   \
                v = taps_dot_##T(&t, xp);                                                                    \
            out[(rc * job->OH + i) * job->OW + j] = (T)v;)))
ROI_MAX_ALIGN_GATHER(float)
ROI_MAX_ALIGN_GATHER(double)

/* ---- kernels ----------------------------------------------------------- */
typedef void roi_kernel(const roi_job *job, const void *in, void *out);

/* Runs a float or double instance on `in` (x or gy) into `out` (y or gx). */
static ch_status run(roi_kernel *kernel, roi_job job, const ch_tensor *in, ch_tensor *out) {
    kernel(&job, ch_base(in), out->data);
    return CH_OK;
}

ch_status ch_cpu_roi_max_pool_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices,
                                 double spatial_scale, ch_tensor *y, ch_tensor *argmax) {
    return run(CH_FLOAT_KERNEL(x->dt, roi_max_pool), roi_job_of(x, y, rois, roi_indices, argmax, spatial_scale, 0, 0),
               x, y);
}

ch_status ch_cpu_roi_max_pool_2d_scatter(const ch_tensor *gy, const ch_tensor *roi_indices, const ch_tensor *argmax,
                                         ch_tensor *gx) {
    return run(CH_FLOAT_KERNEL(gy->dt, roi_scatter), roi_job_of(gx, gy, NULL, roi_indices, argmax, 0, 0, 0), gy, gx);
}

ch_status ch_cpu_roi_max_pool_2d_gather(const ch_tensor *x, const ch_tensor *roi_indices, const ch_tensor *argmax,
                                        ch_tensor *y) {
    return run(CH_FLOAT_KERNEL(x->dt, roi_gather), roi_job_of(x, argmax, NULL, roi_indices, argmax, 0, 0, 0), x, y);
}

ch_status ch_cpu_roi_average_align_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices,
                                      double spatial_scale, int64_t sampling_h, int64_t sampling_w, ch_tensor *y) {
    roi_job job = roi_job_of(x, y, rois, roi_indices, NULL, spatial_scale, sampling_h, sampling_w);
    return run(CH_FLOAT_KERNEL(x->dt, roi_align), job, x, y);
}

ch_status ch_cpu_roi_average_align_2d_backward(const ch_tensor *gy, const ch_tensor *rois,
                                               const ch_tensor *roi_indices, double spatial_scale, int64_t sampling_h,
                                               int64_t sampling_w, ch_tensor *gx) {
    roi_job job = roi_job_of(gx, gy, rois, roi_indices, NULL, spatial_scale, sampling_h, sampling_w);
    return run(CH_FLOAT_KERNEL(gy->dt, roi_align_back), job, gy, gx);
}

ch_status ch_cpu_roi_max_pooling_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices,
                                    double spatial_scale, ch_tensor *y, ch_tensor *argmax) {
    roi_job job = roi_job_of(x, y, rois, roi_indices, argmax, spatial_scale, 0, 0);
    return run(CH_FLOAT_KERNEL(x->dt, roi_max_pooling), job, x, y);
}

ch_status ch_cpu_roi_average_pooling_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices,
                                        double spatial_scale, ch_tensor *y) {
    return run(CH_FLOAT_KERNEL(x->dt, roi_avg), roi_job_of(x, y, rois, roi_indices, NULL, spatial_scale, 0, 0), x, y);
}

ch_status ch_cpu_roi_average_pooling_2d_backward(const ch_tensor *gy, const ch_tensor *rois,
                                                 const ch_tensor *roi_indices, double spatial_scale, ch_tensor *gx) {
    roi_job job = roi_job_of(gx, gy, rois, roi_indices, NULL, spatial_scale, 0, 0);
    return run(CH_FLOAT_KERNEL(gy->dt, roi_avg_back), job, gy, gx);
}

ch_status ch_cpu_roi_max_align_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices,
                                  double spatial_scale, int64_t sampling_h, int64_t sampling_w, ch_tensor *y,
                                  ch_tensor *argmax) {
    roi_job job = roi_job_of(x, y, rois, roi_indices, argmax, spatial_scale, sampling_h, sampling_w);
    return run(CH_FLOAT_KERNEL(x->dt, roi_max_align), job, x, y);
}

ch_status ch_cpu_roi_max_align_2d_scatter(const ch_tensor *gy, const ch_tensor *rois, const ch_tensor *roi_indices,
                                          const ch_tensor *argmax, double spatial_scale, int64_t sampling_h,
                                          int64_t sampling_w, ch_tensor *gx) {
    roi_job job = roi_job_of(gx, gy, rois, roi_indices, argmax, spatial_scale, sampling_h, sampling_w);
    return run(CH_FLOAT_KERNEL(gy->dt, roi_max_align_scatter), job, gy, gx);
}

ch_status ch_cpu_roi_max_align_2d_gather(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices,
                                         const ch_tensor *argmax, double spatial_scale, int64_t sampling_h,
                                         int64_t sampling_w, ch_tensor *y) {
    roi_job job = roi_job_of(x, y, rois, roi_indices, argmax, spatial_scale, sampling_h, sampling_w);
    return run(CH_FLOAT_KERNEL(x->dt, roi_max_align_gather), job, x, y);
}

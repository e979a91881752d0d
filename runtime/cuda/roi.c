/*
 * roi.c -- the ROI pooling kernels of the table (roi_max_pool_2d and its
 * scatter/gather, roi_average_align_2d and its backward, roi_max_pooling_2d,
 * roi_average_pooling_2d and its backward, roi_max_align_2d and its
 * scatter/gather): the front doors (runtime/ops/roi_pooling.c) have checked
 * the arguments, made rois float64 and roi_indices int64 (in range) and
 * allocated the outputs; here the backend's contract is verified and the
 * kernels of roi.cu launched.
 *
 * Compiled; tested emulated (tests/cuda/test_roi.cu).  NOT yet run on a GPU.
 */
#include "backend.h"

/* t is contiguous 4-d of dtype dt on device dev. */
static int plane4(const ch_tensor *t, int dt, int dev) {
    return t && t->nd == 4 && cu_dense(t, dt, t->numel, dev);
}

/* Checks the operands and fills the job: planes (N, C, H, W) are x or gx,
 * per_roi (R, C, OH, OW) are y or gy; rois may be NULL for kinds that do
 * not read them, argmax NULL for kinds without one. */
static ch_status job_of(int kind, const char *fn, const ch_tensor *planes, const ch_tensor *per_roi,
                        const ch_tensor *rois, const ch_tensor *idx, const ch_tensor *argmax, int need_rois,
                        int need_argmax, double scale, int64_t sh, int64_t sw, cu_roi_job *j) {
    int ok = planes && (planes->dt == CH_FLOAT32 || planes->dt == CH_FLOAT64) && plane4(planes, planes->dt, planes->dev);
    int dev = ok ? planes->dev : 0;
    ok = ok && plane4(per_roi, planes->dt, dev) && per_roi->dim[1] == planes->dim[1] &&
         cu_dense(idx, CH_INT64, per_roi->dim[0], dev);
    if (ok && need_rois)
        ok = cu_dense(rois, CH_FLOAT64, 4 * per_roi->dim[0], dev);
    if (ok && need_argmax) {
        ok = plane4(argmax, CH_INT32, dev);
        for (int d = 0; ok && d < 4; d++)
            ok = argmax->dim[d] == per_roi->dim[d];
    }
    if (!ok)
        return cu_fail(CH_ERR_INTERNAL, "%s: the image planes (N, C, H, W), the per-ROI planes (R, C, outh, outw) "
                       "of one float dtype, float64 rois (R, 4), int64 roi_indices (R) and int32 argmax must be "
                       "contiguous on one device", fn);
    j->kind = kind;
    j->rois = need_rois ? (const double *)cu_base(rois) : NULL;
    j->idx = (const int64_t *)cu_base(idx);
    j->argmax = need_argmax ? (int32_t *)cu_base(argmax) : NULL;
    j->N = planes->dim[0], j->C = planes->dim[1], j->H = planes->dim[2], j->W = planes->dim[3];
    j->R = per_roi->dim[0], j->OH = per_roi->dim[2], j->OW = per_roi->dim[3];
    j->scale = scale, j->sh = sh, j->sw = sw;
    return cu_use(dev, fn);
}

/* Runs the job on in -> out; nothing to do when out is empty (gradients:
 * the planes; forward: the per-ROI cells). */
static ch_status launch(const cu_roi_job *j, const ch_tensor *in, ch_tensor *out) {
    if (out->numel == 0)
        return CH_OK;
    return cu_roi_launch(j, out->dt, cu_base(in), cu_base(out));
}

ch_status cu_roi_max_pool_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices,
                             double spatial_scale, ch_tensor *y, ch_tensor *argmax) {
    cu_roi_job j;
    CU_TRY(job_of(CU_ROI_MAX_POOL, "roi_max_pool_2d", x, y, rois, roi_indices, argmax, 1, 1, spatial_scale, 0, 0, &j));
    return launch(&j, x, y);
}

ch_status cu_roi_max_pool_2d_scatter(const ch_tensor *gy, const ch_tensor *roi_indices, const ch_tensor *argmax,
                                     ch_tensor *gx) {
    cu_roi_job j;
    CU_TRY(job_of(CU_ROI_MAX_POOL_SCATTER, "roi_max_pool_2d_scatter", gx, gy, NULL, roi_indices, argmax, 0, 1, 0, 0,
                  0, &j));
    return launch(&j, gy, gx);
}

ch_status cu_roi_max_pool_2d_gather(const ch_tensor *x, const ch_tensor *roi_indices, const ch_tensor *argmax,
                                    ch_tensor *y) {
    cu_roi_job j;
    CU_TRY(job_of(CU_ROI_MAX_POOL_GATHER, "roi_max_pool_2d_gather", x, y, NULL, roi_indices, argmax, 0, 1, 0, 0, 0,
                  &j));
    return launch(&j, x, y);
}

ch_status cu_roi_average_align_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices,
                                  double spatial_scale, int64_t sampling_h, int64_t sampling_w, ch_tensor *y) {
    cu_roi_job j;
    CU_TRY(job_of(CU_ROI_ALIGN_AVG, "roi_average_align_2d", x, y, rois, roi_indices, NULL, 1, 0, spatial_scale,
                  sampling_h, sampling_w, &j));
    return launch(&j, x, y);
}

ch_status cu_roi_average_align_2d_backward(const ch_tensor *gy, const ch_tensor *rois, const ch_tensor *roi_indices,
                                           double spatial_scale, int64_t sampling_h, int64_t sampling_w,
                                           ch_tensor *gx) {
    cu_roi_job j;
    CU_TRY(job_of(CU_ROI_ALIGN_AVG_BACK, "roi_average_align_2d", gx, gy, rois, roi_indices, NULL, 1, 0,
                  spatial_scale, sampling_h, sampling_w, &j));
    return launch(&j, gy, gx);
}

ch_status cu_roi_max_pooling_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices,
                                double spatial_scale, ch_tensor *y, ch_tensor *argmax) {
    cu_roi_job j;
    CU_TRY(job_of(CU_ROI_MAX_POOLING, "roi_max_pooling_2d", x, y, rois, roi_indices, argmax, 1, 1, spatial_scale, 0,
                  0, &j));
    return launch(&j, x, y);
}

ch_status cu_roi_average_pooling_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices,
                                    double spatial_scale, ch_tensor *y) {
    cu_roi_job j;
    CU_TRY(job_of(CU_ROI_AVG_POOLING, "roi_average_pooling_2d", x, y, rois, roi_indices, NULL, 1, 0, spatial_scale, 0,
                  0, &j));
    return launch(&j, x, y);
}

ch_status cu_roi_average_pooling_2d_backward(const ch_tensor *gy, const ch_tensor *rois, const ch_tensor *roi_indices,
                                             double spatial_scale, ch_tensor *gx) {
    cu_roi_job j;
    CU_TRY(job_of(CU_ROI_AVG_POOLING_BACK, "roi_average_pooling_2d", gx, gy, rois, roi_indices, NULL, 1, 0,
                  spatial_scale, 0, 0, &j));
    return launch(&j, gy, gx);
}

ch_status cu_roi_max_align_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices,
                              double spatial_scale, int64_t sampling_h, int64_t sampling_w, ch_tensor *y,
                              ch_tensor *argmax) {
    cu_roi_job j;
    CU_TRY(job_of(CU_ROI_ALIGN_MAX, "roi_max_align_2d", x, y, rois, roi_indices, argmax, 1, 1, spatial_scale,
                  sampling_h, sampling_w, &j));
    return launch(&j, x, y);
}

ch_status cu_roi_max_align_2d_scatter(const ch_tensor *gy, const ch_tensor *rois, const ch_tensor *roi_indices,
                                      const ch_tensor *argmax, double spatial_scale, int64_t sampling_h,
                                      int64_t sampling_w, ch_tensor *gx) {
    cu_roi_job j;
    CU_TRY(job_of(CU_ROI_ALIGN_MAX_SCATTER, "roi_max_align_2d_scatter", gx, gy, rois, roi_indices, argmax, 1, 1,
                  spatial_scale, sampling_h, sampling_w, &j));
    return launch(&j, gy, gx);
}

ch_status cu_roi_max_align_2d_gather(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices,
                                     const ch_tensor *argmax, double spatial_scale, int64_t sampling_h,
                                     int64_t sampling_w, ch_tensor *y) {
    cu_roi_job j;
    CU_TRY(job_of(CU_ROI_ALIGN_MAX_GATHER, "roi_max_align_2d_gather", x, y, rois, roi_indices, argmax, 1, 1,
                  spatial_scale, sampling_h, sampling_w, &j));
    return launch(&j, x, y);
}

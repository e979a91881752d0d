/*
 * roi_pooling.c -- front doors of region-of-interest pooling (Fast R-CNN's
 * ROI max pooling and Mask R-CNN's ROIAlign with average) and of the
 * scatter / gather their gradients are made of (kernels:
 * runtime/cpu/roi_pooling.c).
 *
 * x is (N, C, H, W); rois (R, 4) hold (y_min, x_min, y_max, x_max) in the
 * coordinates of the original image, and roi_indices (R) the image each
 * ROI belongs to; the kernels get them as contiguous float64 and int64,
 * the indices checked to be in range.  Outputs are (R, C, outh, outw).
 */
#include "prologue.h"

typedef struct roi_args {
    ch_tensor *rois;    /* contiguous float64 (R, 4) */
    ch_tensor *idx;     /* contiguous int64 (R) */
    int64_t R;
} roi_args;

static void roi_args_release(roi_args *a) {
    ch_tensor_release(a->rois);
    ch_tensor_release(a->idx);
    a->rois = a->idx = NULL;
}

/* Fails unless the R int64 entries of contiguous idx lie in 0..n-1.  They
 * are read on the host: a tensor on another device is copied to the CPU
 * for the check. */
static ch_status check_index_range(const char *fn, const ch_tensor *idx, int64_t R, int64_t n) {
    ch_tensor *host = NULL;
    const void *data = NULL;
    CH_TRY(ch_host_data(idx, &host, &data));
    const int64_t *ip = (const int64_t *)data;
    ch_status st = CH_OK;
    for (int64_t r = 0; r < R && st == CH_OK; r++)
        if (ip[r] < 0 || ip[r] >= n)
            st = ch_fail(CH_ERR_ARG, "%s: roi_indices[%lld] = %lld is out of range for a batch of %lld images", fn,
                         (long long)r, (long long)ip[r], (long long)n);
    ch_tensor_release(host);
    return st;
}

/* roi_indices as contiguous int64, checked against an n-image batch. */
static ch_status indices_in_range(const char *fn, const ch_tensor *roi_indices, int64_t R, int64_t n,
                                  ch_tensor **out) {
    ch_tensor *ic = NULL;
    CH_TRY(ch_contiguous_as(roi_indices, CH_INT64, &ic));
    ch_status st = check_index_range(fn, ic, R, n);
    if (st != CH_OK) {
        ch_tensor_release(ic);
        return st;
    }
    *out = ic;
    return CH_OK;
}

/* Checks rois / roi_indices (on x's device) against an N-image batch and
 * normalises them. */
static ch_status roi_args_init(const char *fn, const ch_tensor *x, const ch_tensor *rois,
                               const ch_tensor *roi_indices, int64_t n, roi_args *a) {
    a->rois = a->idx = NULL;
    CH_CHECK_ARG(rois, fn, "rois");
    CH_CHECK_ARG(roi_indices, fn, "roi_indices");
    CH_TRY(ch_same_device(fn, "x", x, "rois", rois));
    CH_TRY(ch_same_device(fn, "x", x, "roi_indices", roi_indices));
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
    ch_status st = indices_in_range(fn, roi_indices, a->R, n, &a->idx);
    if (st != CH_OK)
        roi_args_release(a);
    return st;
}

static ch_status check_x(const char *fn, const char *arg, const ch_tensor *x, int nd) {
    CH_CHECK_ARG(x, fn, arg);
    if (x->nd != nd)
        return ch_fail(CH_ERR_SHAPE, "%s: %s must be %d-d, got %d-d", fn, arg, nd, x->nd);
    if (x->dt != CH_FLOAT32 && x->dt != CH_FLOAT64)
        return ch_fail(CH_ERR_DTYPE, "%s: %s must be float32 or float64 (got %s)", fn, arg,
                       ch_dtype_name((ch_dtype)x->dt));
    return CH_OK;
}

/* Checks argmax (R, C, OH, OW) int32 on g's device. */
static ch_status check_argmax(const char *fn, const ch_tensor *argmax, const ch_tensor *g, int64_t R, int64_t C) {
    CH_CHECK_ARG(argmax, fn, "argmax");
    CH_TRY(ch_same_device(fn, "gy", g, "argmax", argmax));
    if (argmax->nd != 4 || argmax->dt != CH_INT32 || argmax->dim[0] != R || argmax->dim[1] != C)
        return ch_fail(CH_ERR_SHAPE, "%s: argmax must be int32 (R, C, outh, outw) with R = %lld, C = %lld", fn,
                       (long long)R, (long long)C);
    return CH_OK;
}

ch_status ch_roi_max_pool_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices, int64_t outh,
                             int64_t outw, double spatial_scale, ch_tensor **y, ch_tensor **argmax) {
    const char *fn = "roi_pooling_2d";
    if (!y || !argmax)
        return ch_fail(CH_ERR_ARG, "%s: NULL result", fn);
    CH_TRY(check_x(fn, "x", x, 4));
    if (outh < 1 || outw < 1)
        return ch_fail(CH_ERR_ARG, "%s: outsize must be positive (got %lld, %lld)", fn, (long long)outh,
                       (long long)outw);
    CH_KERNEL(kernel, roi_max_pool_2d, x->dev, fn);
    roi_args a;
    CH_TRY(roi_args_init(fn, x, rois, roi_indices, x->dim[0], &a));
    int64_t dim[4] = {a.R, x->dim[1], outh, outw};
    ch_tensor *xc = NULL, *yt = NULL, *at = NULL;
    ch_status st = ch_contiguous_as(x, (ch_dtype)x->dt, &xc);
    if (st == CH_OK)
        st = ch_tensor_new((ch_dtype)x->dt, 4, dim, x->dev, &yt);
    if (st == CH_OK)
        st = ch_tensor_new(CH_INT32, 4, dim, x->dev, &at);
    if (st == CH_OK)
        st = kernel(xc, a.rois, a.idx, spatial_scale, yt, at);
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

ch_status ch_roi_max_pool_2d_scatter(const ch_tensor *g, const ch_tensor *roi_indices, const ch_tensor *argmax,
                                     int64_t n, int64_t h, int64_t w, ch_tensor **result) {
    const char *fn = "roi_pooling_2d";
    if (!result)
        return ch_fail(CH_ERR_ARG, "%s: NULL result", fn);
    CH_TRY(check_x(fn, "gy", g, 4));
    CH_TRY(check_argmax(fn, argmax, g, g->dim[0], g->dim[1]));
    if (argmax->dim[2] != g->dim[2] || argmax->dim[3] != g->dim[3])
        return ch_fail(CH_ERR_SHAPE, "%s: gy and argmax must have the same shape", fn);
    if (n < 1 || h < 1 || w < 1)
        return ch_fail(CH_ERR_ARG, "%s: bad input shape (%lld, C, %lld, %lld)", fn, (long long)n, (long long)h,
                       (long long)w);
    int64_t R = g->dim[0], C = g->dim[1];
    CH_CHECK_ARG(roi_indices, fn, "roi_indices");
    CH_TRY(ch_same_device(fn, "gy", g, "roi_indices", roi_indices));
    if (roi_indices->nd != 1 || roi_indices->dim[0] != R)
        return ch_fail(CH_ERR_SHAPE, "%s: roi_indices must be (R) with R = %lld", fn, (long long)R);
    CH_KERNEL(kernel, roi_max_pool_2d_scatter, g->dev, fn);
    ch_tensor *ic = NULL, *gc = NULL, *ac = NULL, *out = NULL;
    CH_TRY(indices_in_range(fn, roi_indices, R, n, &ic));
    ch_status st = ch_contiguous_as(g, (ch_dtype)g->dt, &gc);
    if (st == CH_OK)
        st = ch_contiguous_as(argmax, CH_INT32, &ac);
    int64_t dim[4] = {n, C, h, w};
    if (st == CH_OK)
        st = ch_tensor_new((ch_dtype)g->dt, 4, dim, g->dev, &out);
    if (st == CH_OK)
        st = kernel(gc, ic, ac, out);
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

ch_status ch_roi_max_pool_2d_gather(const ch_tensor *x, const ch_tensor *roi_indices, const ch_tensor *argmax,
                                    ch_tensor **result) {
    const char *fn = "roi_pooling_2d";
    if (!result)
        return ch_fail(CH_ERR_ARG, "%s: NULL result", fn);
    CH_TRY(check_x(fn, "x", x, 4));
    CH_CHECK_ARG(argmax, fn, "argmax");
    CH_TRY(ch_same_device(fn, "x", x, "argmax", argmax));
    if (argmax->nd != 4 || argmax->dt != CH_INT32 || argmax->dim[1] != x->dim[1])
        return ch_fail(CH_ERR_SHAPE, "%s: argmax must be int32 (R, C, outh, outw) with C = %lld", fn,
                       (long long)x->dim[1]);
    CH_CHECK_ARG(roi_indices, fn, "roi_indices");
    CH_TRY(ch_same_device(fn, "x", x, "roi_indices", roi_indices));
    if (roi_indices->nd != 1 || roi_indices->dim[0] != argmax->dim[0])
        return ch_fail(CH_ERR_SHAPE, "%s: roi_indices must be (R) with R = %lld", fn, (long long)argmax->dim[0]);
    CH_KERNEL(kernel, roi_max_pool_2d_gather, x->dev, fn);
    ch_tensor *ic = NULL, *xc = NULL, *ac = NULL, *out = NULL;
    CH_TRY(indices_in_range(fn, roi_indices, argmax->dim[0], x->dim[0], &ic));
    ch_status st = ch_contiguous_as(x, (ch_dtype)x->dt, &xc);
    if (st == CH_OK)
        st = ch_contiguous_as(argmax, CH_INT32, &ac);
    if (st == CH_OK)
        st = ch_tensor_new((ch_dtype)x->dt, 4, argmax->dim, x->dev, &out);
    if (st == CH_OK)
        st = kernel(xc, ic, ac, out);
    ch_tensor_release(xc);
    ch_tensor_release(ac);
    ch_tensor_release(ic);
    if (st != CH_OK) {
        ch_tensor_release(out);
        return st;
    }
    *result = out;
    return CH_OK;
}

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
    CH_KERNEL(kernel, roi_average_align_2d, x->dev, fn);
    roi_args a;
    CH_TRY(roi_args_init(fn, x, rois, roi_indices, x->dim[0], &a));
    int64_t dim[4] = {a.R, x->dim[1], outh, outw};
    ch_tensor *xc = NULL, *yt = NULL;
    ch_status st = ch_contiguous_as(x, (ch_dtype)x->dt, &xc);
    if (st == CH_OK)
        st = ch_tensor_new((ch_dtype)x->dt, 4, dim, x->dev, &yt);
    if (st == CH_OK)
        st = kernel(xc, a.rois, a.idx, spatial_scale, sampling_h, sampling_w, yt);
    ch_tensor_release(xc);
    roi_args_release(&a);
    if (st != CH_OK) {
        ch_tensor_release(yt);
        return st;
    }
    *result = yt;
    return CH_OK;
}

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
    CH_KERNEL(kernel, roi_average_align_2d_backward, gy->dev, fn);
    roi_args a;
    CH_TRY(roi_args_init(fn, gy, rois, roi_indices, n, &a));
    if (a.R != gy->dim[0]) {
        roi_args_release(&a);
        return ch_fail(CH_ERR_SHAPE, "%s: gy has %lld rows, rois %lld", fn, (long long)gy->dim[0], (long long)a.R);
    }
    int64_t dim[4] = {n, gy->dim[1], h, w};
    ch_tensor *gc = NULL, *out = NULL;
    ch_status st = ch_contiguous_as(gy, (ch_dtype)gy->dt, &gc);
    if (st == CH_OK)
        st = ch_tensor_new((ch_dtype)gy->dt, 4, dim, gy->dev, &out);
    if (st == CH_OK)
        st = kernel(gc, a.rois, a.idx, spatial_scale, sampling_h, sampling_w, out);
    ch_tensor_release(gc);
    roi_args_release(&a);
    if (st != CH_OK) {
        ch_tensor_release(out);
        return st;
    }
    *result = out;
    return CH_OK;
}

/* ---- Chainer 7's roi_max_pooling_2d / roi_average_pooling_2d ------------ */

/* The checks every forward front door shares: x, outsize. */
static ch_status check_forward(const char *fn, const ch_tensor *x, int64_t outh, int64_t outw) {
    CH_TRY(check_x(fn, "x", x, 4));
    if (outh < 1 || outw < 1)
        return ch_fail(CH_ERR_ARG, "%s: outsize must be positive (got %lld, %lld)", fn, (long long)outh,
                       (long long)outw);
    return CH_OK;
}

ch_status ch_roi_max_pooling_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices, int64_t outh,
                                int64_t outw, double spatial_scale, ch_tensor **y, ch_tensor **argmax) {
    const char *fn = "roi_max_pooling_2d";
    if (!y || !argmax)
        return ch_fail(CH_ERR_ARG, "%s: NULL result", fn);
    CH_TRY(check_forward(fn, x, outh, outw));
    CH_KERNEL(kernel, roi_max_pooling_2d, x->dev, fn);
    roi_args a;
    CH_TRY(roi_args_init(fn, x, rois, roi_indices, x->dim[0], &a));
    int64_t dim[4] = {a.R, x->dim[1], outh, outw};
    ch_tensor *xc = NULL, *yt = NULL, *at = NULL;
    ch_status st = ch_contiguous_as(x, (ch_dtype)x->dt, &xc);
    if (st == CH_OK)
        st = ch_tensor_new((ch_dtype)x->dt, 4, dim, x->dev, &yt);
    if (st == CH_OK)
        st = ch_tensor_new(CH_INT32, 4, dim, x->dev, &at);
    if (st == CH_OK)
        st = kernel(xc, a.rois, a.idx, spatial_scale, yt, at);
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

ch_status ch_roi_average_pooling_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices,
                                    int64_t outh, int64_t outw, double spatial_scale, ch_tensor **result) {
    const char *fn = "roi_average_pooling_2d";
    if (!result)
        return ch_fail(CH_ERR_ARG, "%s: NULL result", fn);
    CH_TRY(check_forward(fn, x, outh, outw));
    CH_KERNEL(kernel, roi_average_pooling_2d, x->dev, fn);
    roi_args a;
    CH_TRY(roi_args_init(fn, x, rois, roi_indices, x->dim[0], &a));
    int64_t dim[4] = {a.R, x->dim[1], outh, outw};
    ch_tensor *xc = NULL, *yt = NULL;
    ch_status st = ch_contiguous_as(x, (ch_dtype)x->dt, &xc);
    if (st == CH_OK)
        st = ch_tensor_new((ch_dtype)x->dt, 4, dim, x->dev, &yt);
    if (st == CH_OK)
        st = kernel(xc, a.rois, a.idx, spatial_scale, yt);
    ch_tensor_release(xc);
    roi_args_release(&a);
    if (st != CH_OK) {
        ch_tensor_release(yt);
        return st;
    }
    *result = yt;
    return CH_OK;
}

/* The checks of a gradient front door: gy (R, C, oh, ow) against rois and
 * the input shape (n, C, h, w); fills a. */
static ch_status check_backward(const char *fn, const ch_tensor *gy, const ch_tensor *rois,
                                const ch_tensor *roi_indices, int64_t n, int64_t h, int64_t w, roi_args *a) {
    CH_TRY(check_x(fn, "gy", gy, 4));
    if (n < 1 || h < 1 || w < 1)
        return ch_fail(CH_ERR_ARG, "%s: bad input shape (%lld, C, %lld, %lld)", fn, (long long)n, (long long)h,
                       (long long)w);
    CH_TRY(roi_args_init(fn, gy, rois, roi_indices, n, a));
    if (a->R != gy->dim[0]) {
        roi_args_release(a);
        return ch_fail(CH_ERR_SHAPE, "%s: gy has %lld rows, rois %lld", fn, (long long)gy->dim[0], (long long)a->R);
    }
    return CH_OK;
}

ch_status ch_roi_average_pooling_2d_backward(const ch_tensor *gy, const ch_tensor *rois, const ch_tensor *roi_indices,
                                             int64_t n, int64_t h, int64_t w, double spatial_scale,
                                             ch_tensor **result) {
    const char *fn = "roi_average_pooling_2d";
    if (!result)
        return ch_fail(CH_ERR_ARG, "%s: NULL result", fn);
    CH_TRY(check_x(fn, "gy", gy, 4));
    CH_KERNEL(kernel, roi_average_pooling_2d_backward, gy->dev, fn);
    roi_args a;
    CH_TRY(check_backward(fn, gy, rois, roi_indices, n, h, w, &a));
    int64_t dim[4] = {n, gy->dim[1], h, w};
    ch_tensor *gc = NULL, *out = NULL;
    ch_status st = ch_contiguous_as(gy, (ch_dtype)gy->dt, &gc);
    if (st == CH_OK)
        st = ch_tensor_new((ch_dtype)gy->dt, 4, dim, gy->dev, &out);
    if (st == CH_OK)
        st = kernel(gc, a.rois, a.idx, spatial_scale, out);
    ch_tensor_release(gc);
    roi_args_release(&a);
    if (st != CH_OK) {
        ch_tensor_release(out);
        return st;
    }
    *result = out;
    return CH_OK;
}

/* ---- ROIAlign with max ---------------------------------------------------- */

ch_status ch_roi_max_align_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices, int64_t outh,
                              int64_t outw, double spatial_scale, int64_t sampling_h, int64_t sampling_w,
                              ch_tensor **y, ch_tensor **argmax) {
    const char *fn = "roi_max_align_2d";
    if (!y || !argmax)
        return ch_fail(CH_ERR_ARG, "%s: NULL result", fn);
    CH_TRY(check_forward(fn, x, outh, outw));
    CH_KERNEL(kernel, roi_max_align_2d, x->dev, fn);
    roi_args a;
    CH_TRY(roi_args_init(fn, x, rois, roi_indices, x->dim[0], &a));
    int64_t dim[4] = {a.R, x->dim[1], outh, outw};
    ch_tensor *xc = NULL, *yt = NULL, *at = NULL;
    ch_status st = ch_contiguous_as(x, (ch_dtype)x->dt, &xc);
    if (st == CH_OK)
        st = ch_tensor_new((ch_dtype)x->dt, 4, dim, x->dev, &yt);
    if (st == CH_OK)
        st = ch_tensor_new(CH_INT32, 4, dim, x->dev, &at);
    if (st == CH_OK)
        st = kernel(xc, a.rois, a.idx, spatial_scale, sampling_h, sampling_w, yt, at);
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

ch_status ch_roi_max_align_2d_scatter(const ch_tensor *gy, const ch_tensor *rois, const ch_tensor *roi_indices,
                                      const ch_tensor *argmax, int64_t n, int64_t h, int64_t w, double spatial_scale,
                                      int64_t sampling_h, int64_t sampling_w, ch_tensor **result) {
    const char *fn = "roi_max_align_2d";
    if (!result)
        return ch_fail(CH_ERR_ARG, "%s: NULL result", fn);
    CH_TRY(check_x(fn, "gy", gy, 4));
    CH_TRY(check_argmax(fn, argmax, gy, gy->dim[0], gy->dim[1]));
    if (argmax->dim[2] != gy->dim[2] || argmax->dim[3] != gy->dim[3])
        return ch_fail(CH_ERR_SHAPE, "%s: gy and argmax must have the same shape", fn);
    CH_KERNEL(kernel, roi_max_align_2d_scatter, gy->dev, fn);
    roi_args a;
    CH_TRY(check_backward(fn, gy, rois, roi_indices, n, h, w, &a));
    int64_t dim[4] = {n, gy->dim[1], h, w};
    ch_tensor *gc = NULL, *ac = NULL, *out = NULL;
    ch_status st = ch_contiguous_as(gy, (ch_dtype)gy->dt, &gc);
    if (st == CH_OK)
        st = ch_contiguous_as(argmax, CH_INT32, &ac);
    if (st == CH_OK)
        st = ch_tensor_new((ch_dtype)gy->dt, 4, dim, gy->dev, &out);
    if (st == CH_OK)
        st = kernel(gc, a.rois, a.idx, ac, spatial_scale, sampling_h, sampling_w, out);
    ch_tensor_release(gc);
    ch_tensor_release(ac);
    roi_args_release(&a);
    if (st != CH_OK) {
        ch_tensor_release(out);
        return st;
    }
    *result = out;
    return CH_OK;
}

ch_status ch_roi_max_align_2d_gather(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices,
                                     const ch_tensor *argmax, double spatial_scale, int64_t sampling_h,
                                     int64_t sampling_w, ch_tensor **result) {
    const char *fn = "roi_max_align_2d";
    if (!result)
        return ch_fail(CH_ERR_ARG, "%s: NULL result", fn);
    CH_TRY(check_x(fn, "x", x, 4));
    CH_CHECK_ARG(argmax, fn, "argmax");
    CH_TRY(ch_same_device(fn, "x", x, "argmax", argmax));
    if (argmax->nd != 4 || argmax->dt != CH_INT32 || argmax->dim[1] != x->dim[1])
        return ch_fail(CH_ERR_SHAPE, "%s: argmax must be int32 (R, C, outh, outw) with C = %lld", fn,
                       (long long)x->dim[1]);
    CH_KERNEL(kernel, roi_max_align_2d_gather, x->dev, fn);
    roi_args a;
    CH_TRY(roi_args_init(fn, x, rois, roi_indices, x->dim[0], &a));
    if (a.R != argmax->dim[0]) {
        roi_args_release(&a);
        return ch_fail(CH_ERR_SHAPE, "%s: argmax has %lld rows, rois %lld", fn, (long long)argmax->dim[0],
                       (long long)a.R);
    }
    ch_tensor *xc = NULL, *ac = NULL, *out = NULL;
    ch_status st = ch_contiguous_as(x, (ch_dtype)x->dt, &xc);
    if (st == CH_OK)
        st = ch_contiguous_as(argmax, CH_INT32, &ac);
    if (st == CH_OK)
        st = ch_tensor_new((ch_dtype)x->dt, 4, argmax->dim, x->dev, &out);
    if (st == CH_OK)
        st = kernel(xc, a.rois, a.idx, ac, spatial_scale, sampling_h, sampling_w, out);
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

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
    return ch_hand_over(st, ic, out);
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

/* ---- checks made before a front door looks up its kernel ----------------- */

/* Somewhere for the results, and the float operand t (x or gy), named arg:
 * 4-d, float32 or float64. */
static ch_status check_operand(const char *fn, int has_result, const char *arg, const ch_tensor *t) {
    if (!has_result)
        return ch_fail(CH_ERR_ARG, "%s: NULL result", fn);
    CH_CHECK_ARG(t, fn, arg);
    if (t->nd != 4)
        return ch_fail(CH_ERR_SHAPE, "%s: %s must be 4-d, got %d-d", fn, arg, t->nd);
    if (t->dt != CH_FLOAT32 && t->dt != CH_FLOAT64)
        return ch_fail(CH_ERR_DTYPE, "%s: %s must be float32 or float64 (got %s)", fn, arg,
                       ch_dtype_name((ch_dtype)t->dt));
    return CH_OK;
}

/* A forward's: somewhere for the results, x, outsize. */
static ch_status check_forward(const char *fn, int has_result, const ch_tensor *x, int64_t outh, int64_t outw) {
    CH_TRY(check_operand(fn, has_result, "x", x));
    if (outh < 1 || outw < 1)
        return ch_fail(CH_ERR_ARG, "%s: outsize must be positive (got %lld, %lld)", fn, (long long)outh,
                       (long long)outw);
    return CH_OK;
}

/* The input shape (n, C, h, w) a gradient is made for. */
static ch_status check_input_shape(const char *fn, int64_t n, int64_t h, int64_t w) {
    if (n < 1 || h < 1 || w < 1)
        return ch_fail(CH_ERR_ARG, "%s: bad input shape (%lld, C, %lld, %lld)", fn, (long long)n, (long long)h,
                       (long long)w);
    return CH_OK;
}

/* A gradient's (gx from gy): somewhere for the result, gy, the input shape. */
static ch_status check_gradient(const char *fn, int has_result, const ch_tensor *gy, int64_t n, int64_t h, int64_t w) {
    CH_TRY(check_operand(fn, has_result, "gy", gy));
    return check_input_shape(fn, n, h, w);
}

/* A scatter's (gx from gy at the argmax cells): as a gradient's, and argmax
 * int32 with gy's shape on gy's device. */
static ch_status check_scatter(const char *fn, int has_result, const ch_tensor *gy, const ch_tensor *argmax, int64_t n,
                               int64_t h, int64_t w) {
    CH_TRY(check_operand(fn, has_result, "gy", gy));
    CH_CHECK_ARG(argmax, fn, "argmax");
    CH_TRY(ch_same_device(fn, "gy", gy, "argmax", argmax));
    if (argmax->nd != 4 || argmax->dt != CH_INT32 || argmax->dim[0] != gy->dim[0] || argmax->dim[1] != gy->dim[1])
        return ch_fail(CH_ERR_SHAPE, "%s: argmax must be int32 (R, C, outh, outw) with R = %lld, C = %lld", fn,
                       (long long)gy->dim[0], (long long)gy->dim[1]);
    if (argmax->dim[2] != gy->dim[2] || argmax->dim[3] != gy->dim[3])
        return ch_fail(CH_ERR_SHAPE, "%s: gy and argmax must have the same shape", fn);
    return check_input_shape(fn, n, h, w);
}

/* A gather's (y = x at the argmax cells): somewhere for the result, x, and
 * argmax int32 (R, C, outh, outw) on x's device. */
static ch_status check_gather(const char *fn, int has_result, const ch_tensor *x, const ch_tensor *argmax) {
    CH_TRY(check_operand(fn, has_result, "x", x));
    CH_CHECK_ARG(argmax, fn, "argmax");
    CH_TRY(ch_same_device(fn, "x", x, "argmax", argmax));
    if (argmax->nd != 4 || argmax->dt != CH_INT32 || argmax->dim[1] != x->dim[1])
        return ch_fail(CH_ERR_SHAPE, "%s: argmax must be int32 (R, C, outh, outw) with C = %lld", fn,
                       (long long)x->dim[1]);
    return CH_OK;
}

/* roi_indices (R) on t's device, for the kernels that take no rois. */
static ch_status check_indices(const char *fn, const char *tname, const ch_tensor *t, const ch_tensor *roi_indices,
                               int64_t R) {
    CH_CHECK_ARG(roi_indices, fn, "roi_indices");
    CH_TRY(ch_same_device(fn, tname, t, "roi_indices", roi_indices));
    if (roi_indices->nd != 1 || roi_indices->dim[0] != R)
        return ch_fail(CH_ERR_SHAPE, "%s: roi_indices must be (R) with R = %lld", fn, (long long)R);
    return CH_OK;
}

/* ---- plans: what a front door hands its kernel ---------------------------- */
/* Made after the kernel lookup: rois and roi_indices normalised, the float
 * operand (x or gy) and a given argmax contiguous, the outputs allocated. */
typedef struct roi_plan {
    roi_args a;
    ch_tensor *in;         /* x or gy, contiguous */
    ch_tensor *argmax;     /* the argmax given, contiguous int32, or NULL */
    ch_tensor *out;        /* y or gx */
    ch_tensor *out_argmax; /* the argmax a max forward makes, or NULL */
} roi_plan;

/* Releases what the plan holds, its outputs too unless the kernel
 * succeeded (st == CH_OK): then they go to *out and *out_argmax.  Returns st. */
static ch_status plan_finish(roi_plan *p, ch_status st, ch_tensor **out, ch_tensor **out_argmax) {
    ch_tensor_release(p->in);
    ch_tensor_release(p->argmax);
    roi_args_release(&p->a);
    if (st != CH_OK) {
        ch_tensor_release(p->out);
        ch_tensor_release(p->out_argmax);
        return st;
    }
    *out = p->out;
    if (out_argmax)
        *out_argmax = p->out_argmax;
    return CH_OK;
}

/* The tensors of a plan whose p->a is filled: `in` and `argmax` (NULL:
 * none) contiguous, an output of in's dtype and, when makes_argmax, an int32
 * one, both out_dim.  On failure nothing is held, p->a included. */
static ch_status plan_tensors(roi_plan *p, const ch_tensor *in, const ch_tensor *argmax, const int64_t *out_dim,
                              int makes_argmax) {
    p->in = p->argmax = p->out = p->out_argmax = NULL;
    ch_status st = ch_contiguous_as(in, (ch_dtype)in->dt, &p->in);
    if (st == CH_OK && argmax)
        st = ch_contiguous_as(argmax, CH_INT32, &p->argmax);
    if (st == CH_OK)
        st = ch_tensor_new((ch_dtype)in->dt, 4, out_dim, in->dev, &p->out);
    if (st == CH_OK && makes_argmax)
        st = ch_tensor_new(CH_INT32, 4, out_dim, in->dev, &p->out_argmax);
    return st == CH_OK ? CH_OK : plan_finish(p, st, NULL, NULL);
}

/* Fails (releasing a) unless t, named tname, has one row per ROI. */
static ch_status check_rows(const char *fn, const char *tname, const ch_tensor *t, roi_args *a) {
    if (t->dim[0] == a->R)
        return CH_OK;
    roi_args_release(a);
    return ch_fail(CH_ERR_SHAPE, "%s: %s has %lld rows, rois %lld", fn, tname, (long long)t->dim[0], (long long)a->R);
}

/* A forward: y (and argmax) (R, C, outh, outw) from x. */
static ch_status plan_forward(const char *fn, const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices,
                              int64_t outh, int64_t outw, int makes_argmax, roi_plan *p) {
    CH_TRY(roi_args_init(fn, x, rois, roi_indices, x->dim[0], &p->a));
    int64_t dim[4] = {p->a.R, x->dim[1], outh, outw};
    return plan_tensors(p, x, NULL, dim, makes_argmax);
}

/* A gradient: gx (n, C, h, w) from gy (R, C, outh, outw) and, for a
 * scatter, argmax. */
static ch_status plan_gradient(const char *fn, const ch_tensor *gy, const ch_tensor *rois, const ch_tensor *roi_indices,
                               const ch_tensor *argmax, int64_t n, int64_t h, int64_t w, roi_plan *p) {
    CH_TRY(roi_args_init(fn, gy, rois, roi_indices, n, &p->a));
    CH_TRY(check_rows(fn, "gy", gy, &p->a));
    int64_t dim[4] = {n, gy->dim[1], h, w};
    return plan_tensors(p, gy, argmax, dim, 0);
}

/* A gather: y (argmax's shape) from x at the argmax cells. */
static ch_status plan_gather(const char *fn, const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices,
                             const ch_tensor *argmax, roi_plan *p) {
    CH_TRY(roi_args_init(fn, x, rois, roi_indices, x->dim[0], &p->a));
    CH_TRY(check_rows(fn, "argmax", argmax, &p->a));
    return plan_tensors(p, x, argmax, argmax->dim, 0);
}

/* The plan of a kernel that takes roi_indices (R) alone, over an n-image
 * batch: `in` and argmax contiguous, an output out_dim. */
static ch_status plan_indices_only(const char *fn, const ch_tensor *roi_indices, int64_t R, int64_t n,
                                   const ch_tensor *in, const ch_tensor *argmax, const int64_t *out_dim, roi_plan *p) {
    p->a.rois = NULL;
    p->a.R = R;
    CH_TRY(indices_in_range(fn, roi_indices, R, n, &p->a.idx));
    return plan_tensors(p, in, argmax, out_dim, 0);
}

/* Both ROI max poolings' forward: roi_pooling_2d's (a span of end - start + 1
 * cells, empty bins 0) and, with chainer7, roi_max_pooling_2d's (end - start,
 * -inf); their kernels share a type. */
static ch_status max_pool_forward(const char *fn, int chainer7, const ch_tensor *x, const ch_tensor *rois,
                                  const ch_tensor *roi_indices, int64_t outh, int64_t outw, double spatial_scale,
                                  ch_tensor **y, ch_tensor **argmax) {
    CH_TRY(check_forward(fn, y && argmax, x, outh, outw));
    const ch_kernel_table *table = ch_kernels(x->dev);
    ch_roi_max_pool_2d_kernel *kernel = chainer7 ? table->roi_max_pooling_2d : table->roi_max_pool_2d;
    if (!kernel)
        return ch_no_kernel(fn, x->dev);
    roi_plan p;
    CH_TRY(plan_forward(fn, x, rois, roi_indices, outh, outw, 1, &p));
    return plan_finish(&p, kernel(p.in, p.a.rois, p.a.idx, spatial_scale, p.out, p.out_argmax), y, argmax);
}

/* ---- roi_pooling_2d (Fast R-CNN) and roi_average_align_2d ----------------- */

ch_status ch_roi_max_pool_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices, int64_t outh,
                             int64_t outw, double spatial_scale, ch_tensor **y, ch_tensor **argmax) {
    return max_pool_forward("roi_pooling_2d", 0, x, rois, roi_indices, outh, outw, spatial_scale, y, argmax);
}

ch_status ch_roi_max_pool_2d_scatter(const ch_tensor *g, const ch_tensor *roi_indices, const ch_tensor *argmax,
                                     int64_t n, int64_t h, int64_t w, ch_tensor **result) {
    const char *fn = "roi_pooling_2d";
    CH_TRY(check_scatter(fn, result != NULL, g, argmax, n, h, w));
    CH_TRY(check_indices(fn, "gy", g, roi_indices, g->dim[0]));
    CH_KERNEL(kernel, roi_max_pool_2d_scatter, g->dev, fn);
    int64_t dim[4] = {n, g->dim[1], h, w};
    roi_plan p;
    CH_TRY(plan_indices_only(fn, roi_indices, g->dim[0], n, g, argmax, dim, &p));
    return plan_finish(&p, kernel(p.in, p.a.idx, p.argmax, p.out), result, NULL);
}

ch_status ch_roi_max_pool_2d_gather(const ch_tensor *x, const ch_tensor *roi_indices, const ch_tensor *argmax,
                                    ch_tensor **result) {
    const char *fn = "roi_pooling_2d";
    CH_TRY(check_gather(fn, result != NULL, x, argmax));
    CH_TRY(check_indices(fn, "x", x, roi_indices, argmax->dim[0]));
    CH_KERNEL(kernel, roi_max_pool_2d_gather, x->dev, fn);
    roi_plan p;
    CH_TRY(plan_indices_only(fn, roi_indices, argmax->dim[0], x->dim[0], x, argmax, argmax->dim, &p));
    return plan_finish(&p, kernel(p.in, p.a.idx, p.argmax, p.out), result, NULL);
}

ch_status ch_roi_average_align_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices, int64_t outh,
                                  int64_t outw, double spatial_scale, int64_t sampling_h, int64_t sampling_w,
                                  ch_tensor **result) {
    const char *fn = "roi_average_align_2d";
    CH_TRY(check_forward(fn, result != NULL, x, outh, outw));
    CH_KERNEL(kernel, roi_average_align_2d, x->dev, fn);
    roi_plan p;
    CH_TRY(plan_forward(fn, x, rois, roi_indices, outh, outw, 0, &p));
    return plan_finish(&p, kernel(p.in, p.a.rois, p.a.idx, spatial_scale, sampling_h, sampling_w, p.out), result, NULL);
}

ch_status ch_roi_average_align_2d_backward(const ch_tensor *gy, const ch_tensor *rois, const ch_tensor *roi_indices,
                                           int64_t n, int64_t h, int64_t w, double spatial_scale, int64_t sampling_h,
                                           int64_t sampling_w, ch_tensor **result) {
    const char *fn = "roi_average_align_2d";
    CH_TRY(check_gradient(fn, result != NULL, gy, n, h, w));
    CH_KERNEL(kernel, roi_average_align_2d_backward, gy->dev, fn);
    roi_plan p;
    CH_TRY(plan_gradient(fn, gy, rois, roi_indices, NULL, n, h, w, &p));
    return plan_finish(&p, kernel(p.in, p.a.rois, p.a.idx, spatial_scale, sampling_h, sampling_w, p.out), result, NULL);
}

/* ---- Chainer 7's roi_max_pooling_2d / roi_average_pooling_2d ------------ */

ch_status ch_roi_max_pooling_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices, int64_t outh,
                                int64_t outw, double spatial_scale, ch_tensor **y, ch_tensor **argmax) {
    return max_pool_forward("roi_max_pooling_2d", 1, x, rois, roi_indices, outh, outw, spatial_scale, y, argmax);
}

ch_status ch_roi_average_pooling_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices,
                                    int64_t outh, int64_t outw, double spatial_scale, ch_tensor **result) {
    const char *fn = "roi_average_pooling_2d";
    CH_TRY(check_forward(fn, result != NULL, x, outh, outw));
    CH_KERNEL(kernel, roi_average_pooling_2d, x->dev, fn);
    roi_plan p;
    CH_TRY(plan_forward(fn, x, rois, roi_indices, outh, outw, 0, &p));
    return plan_finish(&p, kernel(p.in, p.a.rois, p.a.idx, spatial_scale, p.out), result, NULL);
}

ch_status ch_roi_average_pooling_2d_backward(const ch_tensor *gy, const ch_tensor *rois, const ch_tensor *roi_indices,
                                             int64_t n, int64_t h, int64_t w, double spatial_scale,
                                             ch_tensor **result) {
    const char *fn = "roi_average_pooling_2d";
    CH_TRY(check_gradient(fn, result != NULL, gy, n, h, w));
    CH_KERNEL(kernel, roi_average_pooling_2d_backward, gy->dev, fn);
    roi_plan p;
    CH_TRY(plan_gradient(fn, gy, rois, roi_indices, NULL, n, h, w, &p));
    return plan_finish(&p, kernel(p.in, p.a.rois, p.a.idx, spatial_scale, p.out), result, NULL);
}

/* ---- ROIAlign with max ---------------------------------------------------- */

ch_status ch_roi_max_align_2d(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices, int64_t outh,
                              int64_t outw, double spatial_scale, int64_t sampling_h, int64_t sampling_w, ch_tensor **y,
                              ch_tensor **argmax) {
    const char *fn = "roi_max_align_2d";
    CH_TRY(check_forward(fn, y && argmax, x, outh, outw));
    CH_KERNEL(kernel, roi_max_align_2d, x->dev, fn);
    roi_plan p;
    CH_TRY(plan_forward(fn, x, rois, roi_indices, outh, outw, 1, &p));
    return plan_finish(&p, kernel(p.in, p.a.rois, p.a.idx, spatial_scale, sampling_h, sampling_w, p.out, p.out_argmax),
                       y, argmax);
}

ch_status ch_roi_max_align_2d_scatter(const ch_tensor *gy, const ch_tensor *rois, const ch_tensor *roi_indices,
                                      const ch_tensor *argmax, int64_t n, int64_t h, int64_t w, double spatial_scale,
                                      int64_t sampling_h, int64_t sampling_w, ch_tensor **result) {
    const char *fn = "roi_max_align_2d";
    CH_TRY(check_scatter(fn, result != NULL, gy, argmax, n, h, w));
    CH_KERNEL(kernel, roi_max_align_2d_scatter, gy->dev, fn);
    roi_plan p;
    CH_TRY(plan_gradient(fn, gy, rois, roi_indices, argmax, n, h, w, &p));
    return plan_finish(&p, kernel(p.in, p.a.rois, p.a.idx, p.argmax, spatial_scale, sampling_h, sampling_w, p.out),
                       result, NULL);
}

ch_status ch_roi_max_align_2d_gather(const ch_tensor *x, const ch_tensor *rois, const ch_tensor *roi_indices,
                                     const ch_tensor *argmax, double spatial_scale, int64_t sampling_h,
                                     int64_t sampling_w, ch_tensor **result) {
    const char *fn = "roi_max_align_2d";
    CH_TRY(check_gather(fn, result != NULL, x, argmax));
    CH_KERNEL(kernel, roi_max_align_2d_gather, x->dev, fn);
    roi_plan p;
    CH_TRY(plan_gather(fn, x, rois, roi_indices, argmax, &p));
    return plan_finish(&p, kernel(p.in, p.a.rois, p.a.idx, p.argmax, spatial_scale, sampling_h, sampling_w, p.out),
                       result, NULL);
}

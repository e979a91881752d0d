/*
 * index.c -- front doors of integer and boolean indexing (kernels:
 * runtime/cpu/index.c): take, take_along_axis, scatter_add (numpy.add.at),
 * scatter_add_along_axis, masked_select, nonzero.
 *
 * Index tensors of any integer dtype are first copied to int64, checked and
 * wrapped (negative positions count from the end, as in NumPy) by the
 * wrap_indices kernel, so the gather/scatter kernels never see a bad index
 * and never fail half-way.
 */
#include "prologue.h"

/* A contiguous int64 copy of idx (on idx's device) with every entry checked
 * against n and wrapped into [0, n). */
static ch_status checked_indices(const ch_tensor *idx, int64_t n, int axis, const char *fn, ch_tensor **out) {
    ch_dtype dt = (ch_dtype)idx->dt;
    if (dt == CH_BOOL || ch_dtype_is_float(dt))
        return ch_fail(CH_ERR_DTYPE, "%s: indices must be an integer tensor (int32 or int64; got %s)", fn,
                       ch_dtype_name(dt));
    CH_KERNEL(kernel, wrap_indices, idx->dev, fn);
    ch_tensor *t;
    CH_TRY(ch_astype(idx, CH_INT64, &t));
    int bad = 0;
    int64_t v = 0;
    ch_status st = kernel(t, n, &bad, &v);
    if (st == CH_OK && bad)
        st = ch_fail(CH_ERR_ARG, "%s: index %lld is out of bounds for axis %d with size %lld", fn, (long long)v, axis,
                     (long long)n);
    return ch_hand_over(st, t, out);
}

ch_status ch_take(const ch_tensor *x, const ch_tensor *indices, int axis, int flat, ch_tensor **result) {
    static const char *fn = "take";
    CH_TRY(ch_check_pair(fn, "x", x, "indices", indices));
    if (flat) {
        int64_t len = x->numel;
        ch_tensor *f;
        CH_TRY(ch_reshape(x, 1, &len, &f));
        ch_status st = ch_take(f, indices, 0, 0, result);
        ch_tensor_release(f);
        return st;
    }
    if (x->nd == 0) return ch_fail(CH_ERR_SHAPE, "take: x is 0-d (pass no axis to take from the flattened tensor)");
    CH_TRY(ch_norm_axis(&axis, x->nd, fn));
    int nd = x->nd - 1 + indices->nd;
    if (nd > CH_MAX_DIMS) return ch_fail(CH_ERR_SHAPE, "take: the result would have %d axes (at most %d)", nd, CH_MAX_DIMS);
    CH_KERNEL(kernel, take, x->dev, fn);
    int64_t n = x->dim[axis];
    int64_t odim[CH_MAX_DIMS];
    int k = 0;
    for (int d = 0; d < axis; d++) odim[k++] = x->dim[d];
    for (int d = 0; d < indices->nd; d++) odim[k++] = indices->dim[d];
    for (int d = axis + 1; d < x->nd; d++) odim[k++] = x->dim[d];
    ch_tensor *idx = NULL, *xc = NULL, *out = NULL;
    ch_status st;
    if ((st = checked_indices(indices, n, axis, fn, &idx)) != CH_OK) goto done;
    if ((st = ch_contiguous(x, &xc)) != CH_OK) goto done;
    if ((st = ch_tensor_new((ch_dtype)x->dt, nd, odim, x->dev, &out)) != CH_OK) goto done;
    st = kernel(xc, idx, axis, out);
done:
    ch_tensor_release(idx);
    ch_tensor_release(xc);
    return ch_hand_over(st, out, result);
}

/* Shape of an along-axis operation: idx's extent on axis, the broadcast of
 * x's and idx's extents elsewhere. */
static ch_status along_shape(const ch_tensor *x, const ch_tensor *idx, int *axis, const char *fn, int64_t *sdim) {
    if (idx->nd != x->nd)
        return ch_fail(CH_ERR_SHAPE, "%s: indices must have as many dimensions as the tensor (%d), got %d", fn, x->nd,
                       idx->nd);
    if (x->nd == 0) return ch_fail(CH_ERR_SHAPE, "%s: the tensor is 0-d", fn);
    CH_TRY(ch_norm_axis(axis, x->nd, fn));
    for (int d = 0; d < x->nd; d++) {
        int64_t a = x->dim[d], b = idx->dim[d];
        if (d == *axis) sdim[d] = b;
        else if (a == b || b == 1) sdim[d] = a;
        else if (a == 1) sdim[d] = b;
        else {
            char sx[CH_SHAPE_BUF], si[CH_SHAPE_BUF];
            return ch_fail(CH_ERR_SHAPE, "%s: indices of shape %s do not broadcast against the tensor of shape %s "
                           "(axis %d)", fn, ch_shape_str(si, sizeof si, idx->nd, idx->dim),
                           ch_shape_str(sx, sizeof sx, x->nd, x->dim), d);
        }
    }
    return CH_OK;
}

ch_status ch_take_along_axis(const ch_tensor *x, const ch_tensor *indices, int axis, ch_tensor **result) {
    static const char *fn = "take_along_axis";
    CH_TRY(ch_check_pair(fn, "x", x, "indices", indices));
    int64_t sdim[CH_MAX_DIMS];
    CH_TRY(along_shape(x, indices, &axis, fn, sdim));
    CH_KERNEL(kernel, take_along_axis, x->dev, fn);
    ch_tensor *idx = NULL, *out = NULL;
    CH_TRY(checked_indices(indices, x->dim[axis], axis, fn, &idx));
    ch_status st = ch_tensor_new((ch_dtype)x->dt, x->nd, sdim, x->dev, &out);
    if (st == CH_OK)
        st = kernel(x, idx, axis, out);
    ch_tensor_release(idx);
    return ch_hand_over(st, out, result);
}

/* values cast to target's dtype (a new reference); they must broadcast to
 * the indexed shape (nd, dim). */
static ch_status values_as(const ch_tensor *target, const ch_tensor *values, int nd, const int64_t *dim,
                           const char *fn, ch_tensor **vc) {
    bool same = values->nd <= nd;
    for (int d = 0; d < values->nd && same; d++) {
        int64_t v = values->dim[values->nd - 1 - d];
        same = v == 1 || v == dim[nd - 1 - d];
    }
    if (!same) {
        char sv[CH_SHAPE_BUF], si[CH_SHAPE_BUF];
        return ch_fail(CH_ERR_SHAPE, "%s: values of shape %s do not broadcast to the indexed shape %s", fn,
                       ch_shape_str(sv, sizeof sv, values->nd, values->dim), ch_shape_str(si, sizeof si, nd, dim));
    }
    if (values->dt == target->dt) {
        ch_tensor_retain((ch_tensor *)values);
        *vc = (ch_tensor *)values;
        return CH_OK;
    }
    return ch_astype(values, (ch_dtype)target->dt, vc);
}

/* The common part of both scatters once the indexed shape (nd, sdim) is known. */
static ch_status scatter(ch_scatter_add_kernel *kernel, ch_tensor *target, int axis, const ch_tensor *indices,
                         const ch_tensor *values, int nd, const int64_t *sdim, const char *fn) {
    ch_tensor *idx = NULL, *vc = NULL;
    CH_TRY(checked_indices(indices, target->dim[axis], axis, fn, &idx));
    ch_status st = values_as(target, values, nd, sdim, fn, &vc);
    if (st == CH_OK)
        st = kernel(target, axis, idx, vc);
    ch_tensor_release(idx);
    ch_tensor_release(vc);
    return st;
}

static ch_status scatter_args(ch_tensor *target, const ch_tensor *indices, const ch_tensor *values, const char *fn) {
    CH_CHECK_ARG(target, fn, "target");
    CH_CHECK_ARG(indices, fn, "indices");
    CH_CHECK_ARG(values, fn, "values");
    CH_TRY(ch_same_device(fn, "target", target, "indices", indices));
    return ch_same_device(fn, "target", target, "values", values);
}

ch_status ch_scatter_add(ch_tensor *target, int axis, const ch_tensor *indices, const ch_tensor *values) {
    static const char *fn = "scatter_add";
    CH_TRY(scatter_args(target, indices, values, fn));
    if (target->nd == 0) return ch_fail(CH_ERR_SHAPE, "scatter_add: target is 0-d");
    CH_TRY(ch_norm_axis(&axis, target->nd, fn));
    int nd = target->nd - 1 + indices->nd;
    if (nd > CH_MAX_DIMS) return ch_fail(CH_ERR_SHAPE, "scatter_add: the indexed shape would have %d axes", nd);
    CH_KERNEL(kernel, scatter_add, target->dev, fn);
    /* indexed shape: target[:axis] + indices.shape + target[axis+1:] */
    int64_t sdim[CH_MAX_DIMS];
    int k = 0;
    for (int d = 0; d < axis; d++) sdim[k++] = target->dim[d];
    for (int d = 0; d < indices->nd; d++) sdim[k++] = indices->dim[d];
    for (int d = axis + 1; d < target->nd; d++) sdim[k++] = target->dim[d];
    return scatter(kernel, target, axis, indices, values, nd, sdim, fn);
}

ch_status ch_scatter_add_along_axis(ch_tensor *target, int axis, const ch_tensor *indices, const ch_tensor *values) {
    static const char *fn = "scatter_add_along_axis";
    CH_TRY(scatter_args(target, indices, values, fn));
    int64_t sdim[CH_MAX_DIMS];
    CH_TRY(along_shape(target, indices, &axis, fn, sdim));
    CH_KERNEL(kernel, scatter_add_along_axis, target->dev, fn);
    return scatter(kernel, target, axis, indices, values, target->nd, sdim, fn);
}

ch_status ch_masked_select(const ch_tensor *x, const ch_tensor *mask, ch_tensor **result) {
    static const char *fn = "masked_select";
    CH_TRY(ch_check_pair(fn, "x", x, "mask", mask));
    if (mask->dt != CH_BOOL)
        return ch_fail(CH_ERR_DTYPE, "masked_select: mask must be a bool tensor (got %s)", ch_dtype_name((ch_dtype)mask->dt));
    int nd;
    int64_t dim[CH_MAX_DIMS];
    CH_TRY(ch_broadcast_shape(x->nd, x->dim, mask->nd, mask->dim, &nd, dim, fn));
    CH_KERNEL(count, count_nonzero, x->dev, fn);
    CH_KERNEL(kernel, masked_select, x->dev, fn);
    int64_t n = 0;
    CH_TRY(count(mask, nd, dim, &n));
    ch_tensor *out;
    CH_TRY(ch_tensor_new((ch_dtype)x->dt, 1, &n, x->dev, &out));
    ch_status st = kernel(x, mask, nd, dim, out);
    return ch_hand_over(st, out, result);
}

ch_status ch_nonzero(const ch_tensor *x, ch_tensor **result) {
    static const char *fn = "nonzero";
    CH_CHECK_ARG(x, fn, "x");
    CH_KERNEL(count, count_nonzero, x->dev, fn);
    CH_KERNEL(kernel, nonzero, x->dev, fn);
    int64_t n = 0;
    CH_TRY(count(x, x->nd, x->dim, &n));
    ch_tensor *out;
    int64_t odim[2] = {n, x->nd};
    CH_TRY(ch_tensor_new(CH_INT64, 2, odim, x->dev, &out));
    ch_status st = kernel(x, out);
    return ch_hand_over(st, out, result);
}

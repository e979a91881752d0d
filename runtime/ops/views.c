/* views.c -- operations that return a new view onto the same storage. */
#include "internal.h"

#include <stdlib.h>

/* Resolves a -1 in `shape` against numel; errors name fn. */
static ch_status infer_shape(const ch_tensor *x, int nd, const int64_t *shape, int64_t *out, const char *fn) {
    if (nd < 0 || nd > CH_MAX_DIMS)
        return ch_fail(CH_ERR_ARG, "%s: %d dimensions requested (expected 0..%d)", fn, nd, CH_MAX_DIMS);
    int infer = -1;
    int64_t known = 1;
    for (int i = 0; i < nd; i++) {
        if (shape[i] == -1) {
            if (infer >= 0)
                return ch_fail(CH_ERR_ARG, "%s: only one dimension can be -1", fn);
            infer = i;
        } else if (shape[i] < 0) {
            return ch_fail(CH_ERR_ARG, "%s: negative dimension %lld", fn, (long long)shape[i]);
        } else if (__builtin_mul_overflow(known, shape[i], &known)) {
            goto bad;   /* more elements than int64 holds: never x's count */
        }
        out[i] = shape[i];
    }
    if (infer >= 0) {
        if (known == 0 || x->numel % known != 0)
            goto bad;
        out[infer] = x->numel / known;
    } else if (known != x->numel) {
        goto bad;
    }
    return CH_OK;
bad : {
    char a[CH_SHAPE_BUF], b[CH_SHAPE_BUF];
    return ch_fail(CH_ERR_SHAPE, "%s: cannot reshape a tensor of shape %s (%lld elements) into shape %s", fn,
                   ch_shape_str(a, sizeof a, x->nd, x->dim), (long long)x->numel, ch_shape_str(b, sizeof b, nd, shape));
}
}

/* Strides for viewing x with a new shape without copying, when possible
 * (NumPy's no-copy reshape: each group of old axes that maps onto a group
 * of new axes must be laid out as one strided run). */
static bool nocopy_strides(const ch_tensor *x, int nd, const int64_t *dim, int64_t *stride) {
    int64_t od[CH_MAX_DIMS], os[CH_MAX_DIMS];
    int ond = 0;
    for (int i = 0; i < x->nd; i++)
        if (x->dim[i] != 1) {
            od[ond] = x->dim[i];
            os[ond] = x->stride[i];
            ond++;
        }
    int oi = 0, oj = 1, ni = 0, nj = 1;
    while (ni < nd && oi < ond) {
        int64_t np = dim[ni], op = od[oi];
        while (np != op) {
            if (np < op) {
                if (nj >= nd) return false;
                np *= dim[nj++];
            } else {
                if (oj >= ond) return false;
                op *= od[oj++];
            }
        }
        for (int k = oi; k < oj - 1; k++)
            if (os[k] != od[k + 1] * os[k + 1])
                return false;
        stride[nj - 1] = os[oj - 1];
        for (int k = nj - 1; k > ni; k--)
            stride[k - 1] = stride[k] * dim[k];
        ni = nj++;
        oi = oj++;
    }
    /* trailing size-1 axes of the new shape */
    int64_t last = nd > 0 && ni > 0 ? stride[ni - 1] : 1;
    for (int k = ni; k < nd; k++)
        stride[k] = last;
    return true;
}

ch_status ch_view(const ch_tensor *x, int ndim, const int64_t *shape, ch_tensor **result) {
    CH_CHECK_ARG(x, "view", "x");
    int64_t dim[CH_MAX_DIMS], stride[CH_MAX_DIMS];
    CH_TRY(infer_shape(x, ndim, shape, dim, "view"));
    if (x->numel == 0) {
        ch_contiguous_strides(ndim, dim, stride);
    } else if (!nocopy_strides(x, ndim, dim, stride)) {
        char a[CH_SHAPE_BUF];
        return ch_fail(CH_ERR_SHAPE, "view: a tensor of shape %s with these strides cannot be viewed with the new "
                       "shape without copying (use reshape)", ch_shape_str(a, sizeof a, x->nd, x->dim));
    }
    return ch_view_of(x, ndim, dim, stride, x->offset, result);
}

ch_status ch_reshape(const ch_tensor *x, int ndim, const int64_t *shape, ch_tensor **result) {
    CH_CHECK_ARG(x, "reshape", "x");
    int64_t dim[CH_MAX_DIMS], stride[CH_MAX_DIMS];
    CH_TRY(infer_shape(x, ndim, shape, dim, "reshape"));
    if (x->numel == 0) {
        ch_contiguous_strides(ndim, dim, stride);
        return ch_view_of(x, ndim, dim, stride, x->offset, result);
    }
    if (nocopy_strides(x, ndim, dim, stride))
        return ch_view_of(x, ndim, dim, stride, x->offset, result);
    ch_tensor *c;
    CH_TRY(ch_copy(x, &c));
    ch_contiguous_strides(ndim, dim, stride);
    ch_status st = ch_view_of(c, ndim, dim, stride, 0, result);
    ch_tensor_release(c);
    return st;
}

ch_status ch_permute(const ch_tensor *x, const int32_t *axes, ch_tensor **result) {
    CH_CHECK_ARG(x, "transpose", "x");
    int64_t dim[CH_MAX_DIMS], stride[CH_MAX_DIMS];
    bool seen[CH_MAX_DIMS] = {false};
    for (int i = 0; i < x->nd; i++) {
        int a = axes[i];
        CH_TRY(ch_norm_axis(&a, x->nd, "transpose"));
        if (seen[a])
            return ch_fail(CH_ERR_ARG, "transpose: axis %d appears twice in the permutation", axes[i]);
        seen[a] = true;
        dim[i] = x->dim[a];
        stride[i] = x->stride[a];
    }
    return ch_view_of(x, x->nd, dim, stride, x->offset, result);
}

ch_status ch_expand_dims(const ch_tensor *x, int axis, ch_tensor **result) {
    CH_CHECK_ARG(x, "expand_dims", "x");
    if (x->nd >= CH_MAX_DIMS)
        return ch_fail(CH_ERR_ARG, "expand_dims: tensor already has the maximum of %d dimensions", CH_MAX_DIMS);
    CH_TRY(ch_norm_axis(&axis, x->nd + 1, "expand_dims"));
    int64_t dim[CH_MAX_DIMS], stride[CH_MAX_DIMS];
    for (int i = 0, j = 0; i <= x->nd; i++) {
        if (i == axis) {
            dim[i] = 1;
            stride[i] = (j < x->nd) ? x->stride[j] * x->dim[j] : 1;
        } else {
            dim[i] = x->dim[j];
            stride[i] = x->stride[j];
            j++;
        }
    }
    return ch_view_of(x, x->nd + 1, dim, stride, x->offset, result);
}

ch_status ch_squeeze(const ch_tensor *x, const int32_t *axes, int naxes, ch_tensor **result) {
    CH_CHECK_ARG(x, "squeeze", "x");
    bool drop[CH_MAX_DIMS] = {false};
    if (naxes == 0) {
        for (int i = 0; i < x->nd; i++)
            drop[i] = x->dim[i] == 1;
    } else {
        for (int k = 0; k < naxes; k++) {
            int a = axes[k];
            CH_TRY(ch_norm_axis(&a, x->nd, "squeeze"));
            if (x->dim[a] != 1)
                return ch_fail(CH_ERR_SHAPE, "squeeze: cannot remove axis %d of size %lld (only size-1 axes)",
                               axes[k], (long long)x->dim[a]);
            drop[a] = true;
        }
    }
    int64_t dim[CH_MAX_DIMS], stride[CH_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < x->nd; i++)
        if (!drop[i]) {
            dim[nd] = x->dim[i];
            stride[nd] = x->stride[i];
            nd++;
        }
    return ch_view_of(x, nd, dim, stride, x->offset, result);
}

ch_status ch_broadcast_to(const ch_tensor *x, int ndim, const int64_t *shape, ch_tensor **result) {
    CH_CHECK_ARG(x, "broadcast_to", "x");
    if (ndim < x->nd || ndim > CH_MAX_DIMS)
        goto bad;
    /* the target shape is the user's: no negative dims, no size overflow */
    CH_TRY(ch_check_shape(ndim, shape, "broadcast_to"));
    for (int i = 0; i < x->nd; i++) {
        int64_t d = x->dim[i], t = shape[i + ndim - x->nd];
        if (d != t && d != 1)
            goto bad;
    }
    int64_t stride[CH_MAX_DIMS];
    ch_broadcast_strides(x, ndim, shape, stride);
    return ch_view_of(x, ndim, shape, stride, x->offset, result);
bad : {
    char a[CH_SHAPE_BUF], b[CH_SHAPE_BUF];
    return ch_fail(CH_ERR_SHAPE, "broadcast_to: cannot broadcast a tensor of shape %s to shape %s",
                   ch_shape_str(a, sizeof a, x->nd, x->dim), ch_shape_str(b, sizeof b, ndim, shape));
}
}

ch_status ch_diagonal(const ch_tensor *x, int64_t offset, int axis1, int axis2, ch_tensor **result) {
    CH_CHECK_ARG(x, "diagonal", "x");
    if (x->nd < 2)
        return ch_fail(CH_ERR_SHAPE, "diagonal: needs at least 2 dimensions (got %d)", x->nd);
    CH_TRY(ch_norm_axis(&axis1, x->nd, "diagonal"));
    CH_TRY(ch_norm_axis(&axis2, x->nd, "diagonal"));
    if (axis1 == axis2)
        return ch_fail(CH_ERR_ARG, "diagonal: axis1 and axis2 must differ (both are %d)", axis1);
    int64_t n1 = x->dim[axis1], n2 = x->dim[axis2];
    int64_t start = x->offset, len;
    if (offset >= 0) {
        len = n2 - offset < n1 ? n2 - offset : n1;
        start += offset * x->stride[axis2];
    } else {
        len = n1 + offset < n2 ? n1 + offset : n2;
        start -= offset * x->stride[axis1];
    }
    if (len < 0)
        len = 0;
    if (len == 0)
        start = x->offset;
    int64_t dim[CH_MAX_DIMS], stride[CH_MAX_DIMS];
    int nd = 0;
    for (int i = 0; i < x->nd; i++)
        if (i != axis1 && i != axis2) {
            dim[nd] = x->dim[i];
            stride[nd] = x->stride[i];
            nd++;
        }
    dim[nd] = len;
    stride[nd] = x->stride[axis1] + x->stride[axis2];
    return ch_view_of(x, nd + 1, dim, stride, start, result);
}

ch_status ch_as_strided(const ch_tensor *x, int ndim, const int64_t *shape, const int64_t *strides, int64_t offset,
                        ch_tensor **result) {
    CH_CHECK_ARG(x, "as_strided", "x");
    if (ndim < 0 || ndim > CH_MAX_DIMS)
        return ch_fail(CH_ERR_ARG, "as_strided: %d dimensions requested", ndim);
    /* every reachable element must lie inside the storage */
    int64_t lo = offset, hi = offset;
    for (int i = 0; i < ndim; i++) {
        if (shape[i] < 0)
            return ch_fail(CH_ERR_ARG, "as_strided: negative dimension");
        if (shape[i] == 0) {
            lo = hi = offset;
            break;
        }
        int64_t span = (shape[i] - 1) * strides[i];
        if (span < 0) lo += span; else hi += span;
    }
    int64_t cap = x->storage ? (int64_t)(x->storage->nbytes / ch_dtype_size((ch_dtype)x->dt)) : 0;
    if (ch_numel(ndim, shape) > 0 && (lo < 0 || hi >= cap))
        return ch_fail(CH_ERR_ARG, "as_strided: the view reaches elements %lld..%lld outside the storage of %lld",
                       (long long)lo, (long long)hi, (long long)cap);
    return ch_view_of(x, ndim, shape, strides, offset, result);
}

ch_status ch_slice(const ch_tensor *x, const ch_index *idx, int n, ch_tensor **result) {
    CH_CHECK_ARG(x, "slice", "x");
    int consumed = 0, ellipses = 0;
    for (int k = 0; k < n; k++) {
        if (idx[k].kind == CH_IDX_INT || idx[k].kind == CH_IDX_SLICE)
            consumed++;
        else if (idx[k].kind == CH_IDX_ELLIPSIS)
            ellipses++;
        else if (idx[k].kind != CH_IDX_NEWAXIS)
            return ch_fail(CH_ERR_ARG, "slice: unknown index kind %d", idx[k].kind);
    }
    if (ellipses > 1)
        return ch_fail(CH_ERR_ARG, "slice: an index can only have a single ellipsis");
    if (consumed > x->nd)
        return ch_fail(CH_ERR_ARG, "slice: too many indices for a %d-d tensor (got %d)", x->nd, consumed);
    int64_t dim[CH_MAX_DIMS], stride[CH_MAX_DIMS];
    int nd = 0, ax = 0;
    int64_t off = x->offset;
    for (int k = 0; k < n; k++) {
        const ch_index *ix = &idx[k];
        if (ix->kind == CH_IDX_ELLIPSIS) {
            for (int r = x->nd - consumed; r > 0; r--, ax++) {
                if (nd >= CH_MAX_DIMS) goto toomany;
                dim[nd] = x->dim[ax];
                stride[nd++] = x->stride[ax];
            }
        } else if (ix->kind == CH_IDX_NEWAXIS) {
            if (nd >= CH_MAX_DIMS) goto toomany;
            dim[nd] = 1;
            stride[nd++] = 0;
        } else if (ix->kind == CH_IDX_INT) {
            int64_t d = x->dim[ax], i = ix->start;
            if (i < -d || i >= d)
                return ch_fail(CH_ERR_ARG, "slice: index %lld is out of bounds for axis %d with size %lld",
                               (long long)i, ax, (long long)d);
            if (i < 0) i += d;
            off += i * x->stride[ax];
            ax++;
        } else {
            int64_t d = x->dim[ax];
            int64_t step = ix->has_step ? ix->step : 1;
            if (step == 0)
                return ch_fail(CH_ERR_ARG, "slice: slice step cannot be zero (axis %d)", ax);
            int64_t start, stop;
            if (step > 0) {
                start = ix->has_start ? ix->start : 0;
                stop = ix->has_stop ? ix->stop : d;
                if (start < 0) start += d;
                if (stop < 0) stop += d;
                if (start < 0) start = 0;
                if (start > d) start = d;
                if (stop < 0) stop = 0;
                if (stop > d) stop = d;
            } else {
                start = ix->has_start ? ix->start : d - 1;
                stop = ix->has_stop ? ix->stop : -d - 1;
                if (start < 0) start += d;
                if (ix->has_stop && stop < 0) stop += d;
                if (!ix->has_stop) stop = -1;
                if (start < -1) start = -1;
                if (start > d - 1) start = d - 1;
                if (stop < -1) stop = -1;
                if (stop > d - 1) stop = d - 1;
            }
            int64_t len = step > 0 ? (stop - start + step - 1) / step : (start - stop + (-step) - 1) / (-step);
            if (len < 0) len = 0;
            if (nd >= CH_MAX_DIMS) goto toomany;
            if (len > 0)
                off += start * x->stride[ax];
            dim[nd] = len;
            stride[nd++] = x->stride[ax] * step;
            ax++;
        }
    }
    for (; ax < x->nd; ax++) {
        if (nd >= CH_MAX_DIMS) goto toomany;
        dim[nd] = x->dim[ax];
        stride[nd++] = x->stride[ax];
    }
    return ch_view_of(x, nd, dim, stride, off, result);
toomany:
    return ch_fail(CH_ERR_ARG, "slice: the result would have more than %d dimensions", CH_MAX_DIMS);
}

ch_status ch_flip(const ch_tensor *x, int axis, ch_tensor **result) {
    CH_CHECK_ARG(x, "flip", "x");
    CH_TRY(ch_norm_axis(&axis, x->nd, "flip"));
    int64_t dim[CH_MAX_DIMS], stride[CH_MAX_DIMS];
    memcpy(dim, x->dim, sizeof dim);
    memcpy(stride, x->stride, sizeof stride);
    int64_t off = x->offset;
    if (x->dim[axis] > 0)
        off += (x->dim[axis] - 1) * x->stride[axis];
    stride[axis] = -stride[axis];
    return ch_view_of(x, x->nd, dim, stride, off, result);
}

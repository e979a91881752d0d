/*
 * copy.c -- front doors of copies, casts and fill: copy, astype, contiguous,
 * to_device, copy_into, fill.  Copies within the CPU run cpu/copy.c's
 * kernel; a copy that involves a GPU (either side) goes to the CUDA
 * backend's copy service, which also moves data between host and device.
 */
#include "prologue.h"
#include "../core/cuda_hooks.h"

/* Device-aware copy between same-shaped tensors. */

ch_status ch_copy_any(ch_tensor *dst, const ch_tensor *src) {
    if (dst->dev == CH_CPU && src->dev == CH_CPU)
        return ch_cpu_copy(dst, src);
    if (!ch_device_copy_hook)
        return ch_fail(CH_ERR_DEVICE, "copy: the CUDA backend is not loaded");
    return ch_device_copy_hook(dst, src);
}

ch_status ch_fill(ch_tensor *t, double value) {
    CH_CHECK_ARG(t, "fill", "t");
    CH_KERNEL(kernel, fill, t->dev, "fill");
    return kernel(t, value);
}

ch_status ch_copy(const ch_tensor *x, ch_tensor **result) {
    CH_CHECK_ARG(x, "copy", "x");
    return ch_astype(x, (ch_dtype)x->dt, result);
}

ch_status ch_astype(const ch_tensor *x, ch_dtype dt, ch_tensor **result) {
    CH_CHECK_ARG(x, "astype", "x");
    if ((unsigned)dt >= CH_NDTYPES)
        return ch_fail(CH_ERR_DTYPE, "astype: invalid dtype code %d", (int)dt);
    ch_tensor *t;
    CH_TRY(ch_tensor_new_like(x, dt, &t));
    ch_status st = ch_copy_any(t, x);
    return ch_hand_over(st, t, result);
}

ch_status ch_contiguous(const ch_tensor *x, ch_tensor **result) {
    CH_CHECK_ARG(x, "contiguous", "x");
    if (ch_contig(x)) {
        ch_tensor_retain((ch_tensor *)x);
        *result = (ch_tensor *)x;
        return CH_OK;
    }
    return ch_copy(x, result);
}

ch_status ch_contiguous_as(const ch_tensor *x, ch_dtype dt, ch_tensor **out) {
    if (x->dt == (int)dt && ch_contig(x)) {
        ch_tensor_retain((ch_tensor *)x);
        *out = (ch_tensor *)x;
        return CH_OK;
    }
    return ch_astype(x, dt, out);
}

ch_status ch_to_device(const ch_tensor *x, int device, ch_tensor **result) {
    CH_CHECK_ARG(x, "to_device", "x");
    if (x->dev == device) {
        ch_tensor_retain((ch_tensor *)x);
        *result = (ch_tensor *)x;
        return CH_OK;
    }
    ch_tensor *t;
    CH_TRY(ch_tensor_new((ch_dtype)x->dt, x->nd, x->dim, device, &t));
    ch_status st = ch_copy_any(t, x);
    return ch_hand_over(st, t, result);
}

ch_status ch_copy_into(ch_tensor *dst, const ch_tensor *src) {
    CH_CHECK_ARG(dst, "copy_into", "dst");
    CH_CHECK_ARG(src, "copy_into", "src");
    ch_tensor *view;
    ch_status st = ch_broadcast_to(src, dst->nd, dst->dim, &view);
    if (st != CH_OK) {
        char a[CH_SHAPE_BUF], b[CH_SHAPE_BUF];
        return ch_fail(CH_ERR_SHAPE, "copy_into: cannot assign a tensor of shape %s to one of shape %s",
                       ch_shape_str(a, sizeof a, src->nd, src->dim), ch_shape_str(b, sizeof b, dst->nd, dst->dim));
    }
    /* an overlapping source (e.g. x[1:] = x[:-1]) is copied out first */
    ch_tensor *tmp = NULL;
    if (view->storage == dst->storage && view->storage) {
        st = ch_copy(view, &tmp);
        ch_tensor_release(view);
        if (st != CH_OK)
            return st;
        view = tmp;
    }
    st = ch_copy_any(dst, view);
    ch_tensor_release(view);
    return st;
}

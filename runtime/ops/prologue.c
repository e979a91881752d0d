/*
 * prologue.c -- argument checks shared by the front doors (prologue.h).
 */
#include "prologue.h"

/* "the CPU" or "cuda:N" */
static const char *device_str(char *buf, size_t n, int dev) {
    if (dev == CH_CPU)
        snprintf(buf, n, "the CPU");
    else
        snprintf(buf, n, "cuda:%d", dev);
    return buf;
}

ch_status ch_same_device(const char *fn, const char *an, const ch_tensor *a, const char *bn, const ch_tensor *b) {
    if (a->dev == b->dev)
        return CH_OK;
    char da[32], db[32];
    return ch_fail(CH_ERR_DEVICE, "%s: argument '%s' is on %s but argument '%s' is on %s (both must be on one device; "
                   "move one with :to_device())", fn, an, device_str(da, sizeof da, a->dev), bn,
                   device_str(db, sizeof db, b->dev));
}

ch_status ch_check_pair(const char *fn, const char *an, const ch_tensor *a, const char *bn, const ch_tensor *b) {
    CH_TRY(ch_check_tensor(a, fn, an));
    CH_TRY(ch_check_tensor(b, fn, bn));
    return ch_same_device(fn, an, a, bn, b);
}

ch_status ch_want_float(const char *fn, const char *arg, const ch_tensor *t) {
    CH_TRY(ch_check_tensor(t, fn, arg));
    if (!ch_dtype_is_float((ch_dtype)t->dt))
        return ch_fail(CH_ERR_DTYPE, "%s: %s must be a float tensor (got %s)", fn, arg, ch_dtype_name((ch_dtype)t->dt));
    return CH_OK;
}

ch_status ch_want_f32_f64(const char *fn, const char *arg, const ch_tensor *t) {
    CH_TRY(ch_check_tensor(t, fn, arg));
    if (t->dt != CH_FLOAT32 && t->dt != CH_FLOAT64)
        return ch_fail(CH_ERR_DTYPE, "%s: %s must be float32 or float64 (got %s)", fn, arg,
                       ch_dtype_name((ch_dtype)t->dt));
    return CH_OK;
}

ch_status ch_want_like(const char *fn, const char *arg, const ch_tensor *t, const char *ref_name,
                       const ch_tensor *ref, int same_dtype) {
    CH_TRY(ch_check_tensor(t, fn, arg));
    if (t->dev != ref->dev)
        return ch_same_device(fn, ref_name, ref, arg, t);
    if (same_dtype && t->dt != ref->dt)
        return ch_fail(CH_ERR_DTYPE, "%s: %s and %s have different dtypes (%s and %s)", fn, ref_name, arg,
                       ch_dtype_name((ch_dtype)ref->dt), ch_dtype_name((ch_dtype)t->dt));
    if (!ch_same_shape(t, ref)) {
        char a[CH_SHAPE_BUF], b[CH_SHAPE_BUF];
        return ch_fail(CH_ERR_SHAPE, "%s: %s has shape %s, expected the shape of %s %s", fn, arg,
                       ch_shape_str(a, sizeof a, t->nd, t->dim), ref_name, ch_shape_str(b, sizeof b, ref->nd, ref->dim));
    }
    return CH_OK;
}

ch_status ch_contiguous_all(const ch_tensor *const *in, int n, ch_dtype dt, ch_tensor **out) {
    for (int i = 0; i < n; i++)
        out[i] = NULL;
    for (int i = 0; i < n; i++) {
        ch_status st = ch_contiguous_as(in[i], dt, &out[i]);
        if (st != CH_OK) {
            ch_release_all(out, i);
            return st;
        }
    }
    return CH_OK;
}

ch_status ch_host_int64(const ch_tensor *v, ch_tensor **out) {
    if (v->dev == CH_CPU)
        return ch_contiguous_as(v, CH_INT64, out);
    ch_tensor *m = NULL;
    CH_TRY(ch_to_device(v, CH_CPU, &m));
    ch_status st = ch_contiguous_as(m, CH_INT64, out);
    ch_tensor_release(m);
    return st;
}

void ch_release_all(ch_tensor **t, int n) {
    for (int i = 0; i < n; i++) {
        ch_tensor_release(t[i]);
        t[i] = NULL;
    }
}

ch_status ch_host_data(const ch_tensor *t, ch_tensor **copy, const void **data) {
    *copy = NULL;
    if (t->dev != CH_CPU) {
        CH_TRY(ch_to_device(t, CH_CPU, copy));
        t = *copy;
    }
    *data = ch_base(t);
    return CH_OK;
}

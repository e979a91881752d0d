/*
 * creation.c -- front doors of the creation functions that fill values:
 * full, arange, linspace, eye.  Ranges are computed on the host and then
 * moved to the requested device.
 */
#include "prologue.h"

#include <math.h>

static ch_status check_dtype(ch_dtype dt, const char *fn) {
    if ((unsigned)dt >= CH_NDTYPES)
        return ch_fail(CH_ERR_DTYPE, "%s: invalid dtype code %d", fn, (int)dt);
    return CH_OK;
}

ch_status ch_full(ch_dtype dt, int ndim, const int64_t *shape, double value, int device, ch_tensor **result) {
    ch_tensor *t;
    CH_TRY(ch_tensor_new(dt, ndim, shape, device, &t));
    ch_status st = ch_fill(t, value);
    return ch_hand_over(st, t, result);
}

static ch_status from_flat(ch_tensor *t, int device, ch_tensor **result) {
    if (device == CH_CPU) {
        *result = t;
        return CH_OK;
    }
    ch_status st = ch_to_device(t, device, result);
    ch_tensor_release(t);
    return st;
}

ch_status ch_arange(double start, double stop, double step, ch_dtype dt, int device, ch_tensor **result) {
    CH_TRY(check_dtype(dt, "arange"));
    if (step == 0 || !isfinite(step) || !isfinite(start) || !isfinite(stop))
        return ch_fail(CH_ERR_ARG, "arange: start, stop and step must be finite and step non-zero (got %g, %g, %g)",
                       start, stop, step);
    double nf = ceil((stop - start) / step);
    int64_t n = nf > 0 ? (int64_t)nf : 0;
    ch_tensor *t;
    CH_TRY(ch_tensor_new(dt, 1, &n, CH_CPU, &t));
    char *p = t->data;
    size_t sz = ch_dtype_size(dt);
    for (int64_t i = 0; i < n; i++)
        ch_store(dt, p + i * sz, start + (double)i * step);
    return from_flat(t, device, result);
}

ch_status ch_linspace(double start, double stop, int64_t num, int endpoint, ch_dtype dt, int device,
                      ch_tensor **result) {
    CH_TRY(check_dtype(dt, "linspace"));
    if (num < 0)
        return ch_fail(CH_ERR_ARG, "linspace: num must be non-negative (got %lld)", (long long)num);
    ch_tensor *t;
    CH_TRY(ch_tensor_new(dt, 1, &num, CH_CPU, &t));
    int64_t div = endpoint ? num - 1 : num;
    double step = div > 0 ? (stop - start) / (double)div : 0.0;
    size_t sz = ch_dtype_size(dt);
    for (int64_t i = 0; i < num; i++) {
        double v = start + (double)i * step;
        if (endpoint && i == num - 1 && num > 1)
            v = stop;
        ch_store(dt, (char *)t->data + i * sz, v);
    }
    return from_flat(t, device, result);
}

ch_status ch_eye(int64_t n, int64_t m, int64_t k, ch_dtype dt, int device, ch_tensor **result) {
    if (m < 0)
        m = n;
    int64_t shape[2] = {n, m};
    ch_tensor *t;
    CH_TRY(ch_full(dt, 2, shape, 0.0, CH_CPU, &t));
    size_t sz = ch_dtype_size(dt);
    for (int64_t i = 0; i < n; i++) {
        int64_t j = i + k;
        if (j >= 0 && j < m)
            ch_store(dt, (char *)t->data + (i * m + j) * sz, 1.0);
    }
    return from_flat(t, device, result);
}


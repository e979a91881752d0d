/* copy.c -- fill, casting copies, contiguous/astype/copy_into on the CPU. */
#include "../core/internal.h"

#include <math.h>
#include <stdlib.h>

/* Copies `n` elements from s (stride ss) to d (stride ds), casting. */
static void copy_run(ch_dtype dt_d, char *d, int64_t ds, ch_dtype dt_s, const char *s, int64_t ss, int64_t n) {
    size_t zd = ch_dtype_size(dt_d), zs = ch_dtype_size(dt_s);
    if (dt_d == dt_s) {
        if (ds == 1 && ss == 1) {
            memcpy(d, s, (size_t)n * zd);
            return;
        }
        switch (zd) {
#define STRIDED(T)                                                            \
    for (int64_t i = 0; i < n; i++) ((T *)d)[i * ds] = ((const T *)s)[i * ss]; \
    return;
        case 1: STRIDED(uint8_t)
        case 2: STRIDED(uint16_t)
        case 4: STRIDED(uint32_t)
        case 8: STRIDED(uint64_t)
#undef STRIDED
        }
    }
#define CAST(TD, TS)                                                                       \
    for (int64_t i = 0; i < n; i++) ((TD *)d)[i * ds] = (TD)((const TS *)s)[i * ss]; \
    return;
    if (dt_d == CH_FLOAT32 && dt_s == CH_FLOAT64) { CAST(float, double) }
    if (dt_d == CH_FLOAT64 && dt_s == CH_FLOAT32) { CAST(double, float) }
    if (dt_d == CH_FLOAT32 && dt_s == CH_INT32) { CAST(float, int32_t) }
    if (dt_d == CH_FLOAT32 && dt_s == CH_INT64) { CAST(float, int64_t) }
    if (dt_d == CH_FLOAT64 && dt_s == CH_INT32) { CAST(double, int32_t) }
    if (dt_d == CH_FLOAT64 && dt_s == CH_INT64) { CAST(double, int64_t) }
    if (dt_d == CH_FLOAT32 && dt_s == CH_UINT8) { CAST(float, uint8_t) }
    if (dt_d == CH_INT64 && dt_s == CH_INT32) { CAST(int64_t, int32_t) }
    if (dt_d == CH_INT32 && dt_s == CH_INT64) { CAST(int32_t, int64_t) }
#undef CAST
    if (!ch_dtype_is_float(dt_d) && !ch_dtype_is_float(dt_s)) {
        for (int64_t i = 0; i < n; i++)
            ch_store_i64(dt_d, d + i * ds * (int64_t)zd, ch_load_i64(dt_s, s + i * ss * (int64_t)zs));
        return;
    }
    for (int64_t i = 0; i < n; i++)
        ch_store(dt_d, d + i * ds * (int64_t)zd, ch_load(dt_s, s + i * ss * (int64_t)zs));
}

ch_status ch_cpu_copy(ch_tensor *dst, const ch_tensor *src) {
    ch_iter it;
    const int64_t *strides[2] = {dst->stride, src->stride};
    ch_iter_init(&it, dst->nd, dst->dim, 2, strides);
    ch_dtype dd = (ch_dtype)dst->dt, ds = (ch_dtype)src->dt;
    char *db = ch_base(dst);
    const char *sb = ch_base(src);
    int64_t zd = (int64_t)ch_dtype_size(dd), zs = (int64_t)ch_dtype_size(ds);
    int64_t total = it.outer_count * it.inner;
    CH_PAR_FOR(total >= CH_PARALLEL_GRAIN && it.outer_count > 1, int64_t pos = 0; pos < it.outer_count; pos++, {
        int64_t offs[2];
        ch_iter_offsets(&it, pos, offs);
        copy_run(dd, db + offs[0] * zd, it.inner_stride[0], ds, sb + offs[1] * zs, it.inner_stride[1], it.inner);
    });
    return CH_OK;
}

/* Device-aware copy between same-shaped tensors. */
ch_status (*ch_device_copy_hook)(ch_tensor *dst, const ch_tensor *src) = NULL;

static ch_status copy_any(ch_tensor *dst, const ch_tensor *src) {
    if (dst->dev == CH_CPU && src->dev == CH_CPU)
        return ch_cpu_copy(dst, src);
    if (!ch_device_copy_hook)
        return ch_fail(CH_ERR_DEVICE, "copy: the CUDA backend is not loaded");
    return ch_device_copy_hook(dst, src);
}

ch_status (*ch_device_fill_hook)(ch_tensor *t, double value) = NULL;

ch_status ch_fill(ch_tensor *t, double value) {
    CH_CHECK_ARG(t, "fill", "t");
    if (t->dev != CH_CPU) {
        if (!ch_device_fill_hook)
            return ch_fail(CH_ERR_DEVICE, "fill: the CUDA backend is not loaded");
        return ch_device_fill_hook(t, value);
    }
    ch_dtype dt = (ch_dtype)t->dt;
    size_t z = ch_dtype_size(dt);
    char one[8];
    ch_store(dt, one, value);
    ch_iter it;
    const int64_t *strides[1] = {t->stride};
    ch_iter_init(&it, t->nd, t->dim, 1, strides);
    char *base = ch_base(t);
    int64_t total = it.outer_count * it.inner;
    /* one run of `one`'s bytes (the loop below is a macro argument, so this
     * is defined outside it) */
#define FILL(T)                                                \
    {                                                          \
        T v;                                                   \
        memcpy(&v, one, sizeof v);                             \
        for (int64_t i = 0; i < it.inner; i++) ((T *)p)[i * s] = v; \
    }                                                          \
    break;
    CH_PAR_FOR(total >= CH_PARALLEL_GRAIN && it.outer_count > 1, int64_t pos = 0; pos < it.outer_count; pos++, {
        int64_t off;
        ch_iter_offsets(&it, pos, &off);
        char *p = base + off * (int64_t)z;
        int64_t s = it.inner_stride[0];
        if (value == 0.0 && s == 1) {
            memset(p, 0, (size_t)it.inner * z);
            continue;
        }
        switch (z) {
        case 1: FILL(uint8_t)
        case 2: FILL(uint16_t)
        case 4: FILL(uint32_t)
        case 8: FILL(uint64_t)
        }
    });
#undef FILL
    return CH_OK;
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
    ch_status st = copy_any(t, x);
    if (st != CH_OK) {
        ch_tensor_release(t);
        return st;
    }
    *result = t;
    return CH_OK;
}

ch_status ch_contiguous(const ch_tensor *x, ch_tensor **result) {
    CH_CHECK_ARG(x, "contiguous", "x");
    if (ch_is_contiguous(x)) {
        ch_tensor_retain((ch_tensor *)x);
        *result = (ch_tensor *)x;
        return CH_OK;
    }
    return ch_copy(x, result);
}

ch_status ch_contiguous_as(const ch_tensor *x, ch_dtype dt, ch_tensor **out) {
    if (x->dt == (int)dt && ch_is_contiguous(x)) {
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
    ch_status st = copy_any(t, x);
    if (st != CH_OK) {
        ch_tensor_release(t);
        return st;
    }
    *result = t;
    return CH_OK;
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
    st = copy_any(dst, view);
    ch_tensor_release(view);
    return st;
}

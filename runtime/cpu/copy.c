/* copy.c -- the CPU's copy (with casts, any strides) and fill kernels; their
 * front doors (copy, astype, contiguous, to_device, copy_into, fill) are in
 * runtime/ops/copy.c. */
#include "../core/internal.h"
#include "../core/kernels.h"

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

ch_status ch_cpu_fill(ch_tensor *t, double value) {
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


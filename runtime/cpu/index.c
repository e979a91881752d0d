/* index.c -- CPU kernels of integer and boolean indexing: take,
 * take_along_axis, scatter_add (numpy.add.at), scatter_add_along_axis,
 * masked_select, nonzero, and the index check they share (wrap_indices).
 * Front doors (argument checks, int64 indices, outputs):
 * runtime/ops/index.c.
 */
#include "../core/internal.h"
#include "../core/kernels.h"

#include <stdlib.h>

ch_status ch_cpu_wrap_indices(ch_tensor *idx, int64_t n, int *bad, int64_t *value) {
    int64_t *p = (int64_t *)ch_base(idx);
    *bad = 0;
    for (int64_t i = 0; i < idx->numel; i++) {
        int64_t v = p[i];
        if (v < -n || v >= n) {
            *bad = 1;
            *value = v;
            return CH_OK;
        }
        if (v < 0) p[i] = v + n;
    }
    return CH_OK;
}

/* Copies one element of size z. */
static inline void copy_elem(char *d, const char *s, size_t z) {
    switch (z) {
    case 1: *(uint8_t *)d = *(const uint8_t *)s; break;
    case 2: *(uint16_t *)d = *(const uint16_t *)s; break;
    case 4: *(uint32_t *)d = *(const uint32_t *)s; break;
    default: *(uint64_t *)d = *(const uint64_t *)s; break;
    }
}

ch_status ch_cpu_take(const ch_tensor *x, const ch_tensor *idx, int axis, ch_tensor *out) {
    int64_t n = x->dim[axis], pre = 1, post = 1;
    for (int d = 0; d < axis; d++) pre *= x->dim[d];
    for (int d = axis + 1; d < x->nd; d++) post *= x->dim[d];
    int64_t ni = idx->numel;
    const int64_t *ip = (const int64_t *)ch_base(idx);
    size_t z = ch_dtype_size((ch_dtype)x->dt), row = (size_t)post * z;
    const char *src = ch_base(x);
    char *dst = ch_base(out);
    CH_PAR_FOR(pre * ni * post >= CH_PARALLEL_GRAIN, int64_t p = 0; p < pre * ni; p++, {
        int64_t i = p / ni, j = p % ni;
        const char *s = src + (i * n + ip[j]) * (int64_t)row;
        char *d = dst + p * (int64_t)row;
        if (post == 1) copy_elem(d, s, z);
        else memcpy(d, s, row);
    });
    return CH_OK;
}

ch_status ch_cpu_take_along_axis(const ch_tensor *x, const ch_tensor *idx, int axis, ch_tensor *out) {
    int nd = x->nd;
    const int64_t *sdim = out->dim;
    int64_t xs[CH_MAX_DIMS], is[CH_MAX_DIMS];
    ch_broadcast_strides(x, nd, sdim, xs);
    ch_broadcast_strides(idx, nd, sdim, is);
    int64_t xax = x->stride[axis];
    xs[axis] = 0;
    is[axis] = idx->dim[axis] == 1 ? 0 : idx->stride[axis];
    ch_iter it;
    const int64_t *strides[3] = {out->stride, xs, is};
    ch_iter_init(&it, nd, sdim, 3, strides);
    size_t z = ch_dtype_size((ch_dtype)x->dt);
    const char *xb = ch_base(x);
    const int64_t *ib = (const int64_t *)ch_base(idx);
    char *ob = ch_base(out);
    CH_PAR_FOR(out->numel >= CH_PARALLEL_GRAIN && it.outer_count > 1, int64_t pos = 0; pos < it.outer_count; pos++, {
        int64_t offs[3];
        ch_iter_offsets(&it, pos, offs);
        for (int64_t i = 0; i < it.inner; i++) {
            int64_t j = ib[offs[2] + i * it.inner_stride[2]];
            copy_elem(ob + (offs[0] + i * it.inner_stride[0]) * (int64_t)z,
                      xb + (offs[1] + i * it.inner_stride[1] + j * xax) * (int64_t)z, z);
        }
    });
    return CH_OK;
}

/* target[toff + j*tax] += values[voff] for every element of the iteration
 * space; serial, so duplicate indices accumulate deterministically. */
static void scatter_loop(ch_tensor *target, const ch_iter *it, const char *vb, const int64_t *ib, int64_t tax) {
    ch_dtype dt = (ch_dtype)target->dt;
    size_t z = ch_dtype_size(dt);
    char *tb = ch_base(target);
    for (int64_t pos = 0; pos < it->outer_count; pos++) {
        int64_t offs[3];
        ch_iter_offsets(it, pos, offs);
        int64_t s0 = it->inner_stride[0], s1 = it->inner_stride[1], s2 = it->inner_stride[2];
        if (dt == CH_FLOAT32) {
            float *t = (float *)tb;
            const float *v = (const float *)vb;
            for (int64_t i = 0; i < it->inner; i++) t[offs[0] + i * s0 + ib[offs[2] + i * s2] * tax] += v[offs[1] + i * s1];
        } else if (dt == CH_FLOAT64) {
            double *t = (double *)tb;
            const double *v = (const double *)vb;
            for (int64_t i = 0; i < it->inner; i++) t[offs[0] + i * s0 + ib[offs[2] + i * s2] * tax] += v[offs[1] + i * s1];
        } else if (ch_dtype_is_float(dt)) {
            for (int64_t i = 0; i < it->inner; i++) {
                char *t = tb + (offs[0] + i * s0 + ib[offs[2] + i * s2] * tax) * (int64_t)z;
                ch_store(dt, t, ch_load(dt, t) + ch_load(dt, vb + (offs[1] + i * s1) * (int64_t)z));
            }
        } else {
            for (int64_t i = 0; i < it->inner; i++) {
                char *t = tb + (offs[0] + i * s0 + ib[offs[2] + i * s2] * tax) * (int64_t)z;
                ch_store_i64(dt, t, ch_load_i64(dt, t) + ch_load_i64(dt, vb + (offs[1] + i * s1) * (int64_t)z));
            }
        }
    }
}

ch_status ch_cpu_scatter_add(ch_tensor *target, int axis, const ch_tensor *idx, const ch_tensor *values) {
    int nd = target->nd - 1 + idx->nd;
    /* iteration space: target[:axis] + indices.shape + target[axis+1:] */
    int64_t sdim[CH_MAX_DIMS], ts[CH_MAX_DIMS], is[CH_MAX_DIMS], vs[CH_MAX_DIMS], istr[CH_MAX_DIMS];
    ch_contiguous_strides(idx->nd, idx->dim, istr);
    int k = 0;
    for (int d = 0; d < axis; d++, k++) sdim[k] = target->dim[d], ts[k] = target->stride[d], is[k] = 0;
    for (int d = 0; d < idx->nd; d++, k++) sdim[k] = idx->dim[d], ts[k] = 0, is[k] = istr[d];
    for (int d = axis + 1; d < target->nd; d++, k++) sdim[k] = target->dim[d], ts[k] = target->stride[d], is[k] = 0;
    ch_broadcast_strides(values, nd, sdim, vs);
    ch_iter it;
    const int64_t *strides[3] = {ts, vs, is};
    ch_iter_init(&it, nd, sdim, 3, strides);
    scatter_loop(target, &it, ch_base(values), (const int64_t *)ch_base(idx), target->stride[axis]);
    return CH_OK;
}

ch_status ch_cpu_scatter_add_along_axis(ch_tensor *target, int axis, const ch_tensor *idx, const ch_tensor *values) {
    int nd = target->nd;
    /* the indexed shape: idx's extent on axis, the broadcast of target's and idx's elsewhere */
    int64_t sdim[CH_MAX_DIMS], ts[CH_MAX_DIMS], is[CH_MAX_DIMS], vs[CH_MAX_DIMS];
    for (int d = 0; d < nd; d++)
        sdim[d] = d == axis || target->dim[d] == 1 ? idx->dim[d] : target->dim[d];
    ch_broadcast_strides(values, nd, sdim, vs);
    ch_broadcast_strides(target, nd, sdim, ts);
    ts[axis] = 0;
    ch_broadcast_strides(idx, nd, sdim, is);
    is[axis] = idx->dim[axis] == 1 ? 0 : idx->stride[axis];
    ch_iter it;
    const int64_t *strides[3] = {ts, vs, is};
    ch_iter_init(&it, nd, sdim, 3, strides);
    scatter_loop(target, &it, ch_base(values), (const int64_t *)ch_base(idx), target->stride[axis]);
    return CH_OK;
}

/* Whether the element at e (dtype dt, size z) is nonzero (-0.0 is zero). */
static inline bool elem_nonzero(ch_dtype dt, size_t z, const char *e) {
    switch (z) {
    case 1: return *(const uint8_t *)e != 0;
    case 2: return dt == CH_FLOAT16 ? (*(const uint16_t *)e & 0x7fff) != 0 : *(const uint16_t *)e != 0;
    case 4: return dt == CH_FLOAT32 ? *(const float *)e != 0.0f : *(const uint32_t *)e != 0;
    default: return dt == CH_FLOAT64 ? *(const double *)e != 0.0 : *(const uint64_t *)e != 0;
    }
}

ch_status ch_cpu_count_nonzero(const ch_tensor *x, int nd, const int64_t *dim, int64_t *count) {
    ch_dtype dt = (ch_dtype)x->dt;
    size_t z = ch_dtype_size(dt);
    int64_t xs[CH_MAX_DIMS];
    ch_broadcast_strides(x, nd, dim, xs);
    ch_iter it;
    const int64_t *strides[1] = {xs};
    ch_iter_init(&it, nd, dim, 1, strides);
    const char *xb = ch_base(x);
    int64_t c = 0;
    if (z == 1) {
        const uint8_t *b = (const uint8_t *)xb;
        for (int64_t pos = 0; pos < it.outer_count; pos++) {
            int64_t off;
            ch_iter_offsets(&it, pos, &off);
            for (int64_t i = 0; i < it.inner; i++) c += b[off + i * it.inner_stride[0]] != 0;
        }
    } else {
        for (int64_t pos = 0; pos < it.outer_count; pos++) {
            int64_t off;
            ch_iter_offsets(&it, pos, &off);
            for (int64_t i = 0; i < it.inner; i++)
                c += elem_nonzero(dt, z, xb + (off + i * it.inner_stride[0]) * (int64_t)z);
        }
    }
    *count = c;
    return CH_OK;
}

ch_status ch_cpu_masked_select(const ch_tensor *x, const ch_tensor *mask, int nd, const int64_t *dim, ch_tensor *out) {
    int64_t xs[CH_MAX_DIMS], ms[CH_MAX_DIMS];
    ch_broadcast_strides(x, nd, dim, xs);
    ch_broadcast_strides(mask, nd, dim, ms);
    ch_iter it;
    const int64_t *strides[2] = {xs, ms};
    ch_iter_init(&it, nd, dim, 2, strides);
    const uint8_t *mb = (const uint8_t *)ch_base(mask);
    size_t z = ch_dtype_size((ch_dtype)x->dt);
    const char *xb = ch_base(x);
    char *o = ch_base(out);
    for (int64_t pos = 0; pos < it.outer_count; pos++) {
        int64_t offs[2];
        ch_iter_offsets(&it, pos, offs);
        for (int64_t i = 0; i < it.inner; i++)
            if (mb[offs[1] + i * it.inner_stride[1]]) {
                copy_elem(o, xb + (offs[0] + i * it.inner_stride[0]) * (int64_t)z, z);
                o += z;
            }
    }
    return CH_OK;
}

ch_status ch_cpu_nonzero(const ch_tensor *x, ch_tensor *out) {
    ch_dtype dt = (ch_dtype)x->dt;
    size_t z = ch_dtype_size(dt);
    int nd = x->nd;
    const char *xb = ch_base(x);
    int64_t *o = (int64_t *)ch_base(out);
    /* walks x in C order with an explicit multi-index */
    int64_t idx[CH_MAX_DIMS] = {0}, off = 0;
    for (int64_t p = 0; p < x->numel; p++) {
        if (elem_nonzero(dt, z, xb + off * (int64_t)z))
            for (int d = 0; d < nd; d++) *o++ = idx[d];
        for (int d = nd - 1; d >= 0; d--) {
            off += x->stride[d];
            if (++idx[d] < x->dim[d]) break;
            off -= x->stride[d] * x->dim[d];
            idx[d] = 0;
        }
    }
    return CH_OK;
}

/* index.c -- integer and boolean indexing: take, take_along_axis,
 * scatter_add (numpy.add.at), scatter_add_along_axis, masked_select, nonzero.
 *
 * Index tensors of any integer dtype are first copied to int64, checked and
 * wrapped (negative positions count from the end, as in NumPy), so the
 * gather/scatter loops never see a bad index and never fail half-way.
 */
#include "../core/internal.h"

#include <stdlib.h>

/* A contiguous int64 copy of idx with every entry checked against n and
 * wrapped into [0, n). */
static ch_status checked_indices(const ch_tensor *idx, int64_t n, int axis, const char *fn, ch_tensor **out) {
    ch_dtype dt = (ch_dtype)idx->dt;
    if (dt == CH_BOOL || ch_dtype_is_float(dt))
        return ch_fail(CH_ERR_DTYPE, "%s: indices must be an integer tensor (int32 or int64; got %s)", fn,
                       ch_dtype_name(dt));
    ch_tensor *t;
    CH_TRY(ch_astype(idx, CH_INT64, &t));
    int64_t *p = (int64_t *)t->data;
    for (int64_t i = 0; i < t->numel; i++) {
        int64_t v = p[i];
        if (v < -n || v >= n) {
            ch_tensor_release(t);
            return ch_fail(CH_ERR_ARG, "%s: index %lld is out of bounds for axis %d with size %lld", fn, (long long)v,
                           axis, (long long)n);
        }
        if (v < 0) p[i] = v + n;
    }
    *out = t;
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

ch_status ch_take(const ch_tensor *x, const ch_tensor *indices, int axis, int flat, ch_tensor **result) {
    static const char *fn = "take";
    CH_CHECK_CPU(x, fn, "x");
    CH_CHECK_CPU(indices, fn, "indices");
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
    int64_t n = x->dim[axis], pre = 1, post = 1;
    int64_t odim[CH_MAX_DIMS];
    int k = 0;
    for (int d = 0; d < axis; d++) pre *= x->dim[d], odim[k++] = x->dim[d];
    for (int d = 0; d < indices->nd; d++) odim[k++] = indices->dim[d];
    for (int d = axis + 1; d < x->nd; d++) post *= x->dim[d], odim[k++] = x->dim[d];
    ch_tensor *idx = NULL, *xc = NULL, *out = NULL;
    ch_status st;
    if ((st = checked_indices(indices, n, axis, fn, &idx)) != CH_OK) goto done;
    if ((st = ch_contiguous(x, &xc)) != CH_OK) goto done;
    if ((st = ch_tensor_new((ch_dtype)x->dt, nd, odim, CH_CPU, &out)) != CH_OK) goto done;
    {
        int64_t ni = idx->numel;
        const int64_t *ip = (const int64_t *)idx->data;
        size_t z = ch_dtype_size((ch_dtype)x->dt), row = (size_t)post * z;
        const char *src = ch_base(xc);
        char *dst = out->data;
        CH_PAR_FOR(pre * ni * post >= CH_PARALLEL_GRAIN, int64_t p = 0; p < pre * ni; p++, {
            int64_t i = p / ni, j = p % ni;
            const char *s = src + (i * n + ip[j]) * (int64_t)row;
            char *d = dst + p * (int64_t)row;
            if (post == 1) copy_elem(d, s, z);
            else memcpy(d, s, row);
        });
    }
done:
    ch_tensor_release(idx);
    ch_tensor_release(xc);
    if (st != CH_OK) {
        ch_tensor_release(out);
        return st;
    }
    *result = out;
    return CH_OK;
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
    CH_CHECK_CPU(x, fn, "x");
    CH_CHECK_CPU(indices, fn, "indices");
    int64_t sdim[CH_MAX_DIMS];
    CH_TRY(along_shape(x, indices, &axis, fn, sdim));
    int nd = x->nd;
    ch_tensor *idx = NULL, *out = NULL;
    CH_TRY(checked_indices(indices, x->dim[axis], axis, fn, &idx));
    ch_status st = ch_tensor_new((ch_dtype)x->dt, nd, sdim, CH_CPU, &out);
    if (st != CH_OK) {
        ch_tensor_release(idx);
        return st;
    }
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
    const int64_t *ib = (const int64_t *)idx->data;
    char *ob = out->data;
    CH_PAR_FOR(out->numel >= CH_PARALLEL_GRAIN && it.outer_count > 1, int64_t pos = 0; pos < it.outer_count; pos++, {
        int64_t offs[3];
        ch_iter_offsets(&it, pos, offs);
        for (int64_t i = 0; i < it.inner; i++) {
            int64_t j = ib[offs[2] + i * it.inner_stride[2]];
            copy_elem(ob + (offs[0] + i * it.inner_stride[0]) * (int64_t)z,
                      xb + (offs[1] + i * it.inner_stride[1] + j * xax) * (int64_t)z, z);
        }
    });
    ch_tensor_release(idx);
    *result = out;
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

/* values cast to target's dtype and broadcast to (nd, dim); fills vs. */
static ch_status values_as(const ch_tensor *target, const ch_tensor *values, int nd, const int64_t *dim,
                           const char *fn, ch_tensor **vc, int64_t *vs) {
    /* values must broadcast to exactly the indexed shape */
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
    } else {
        CH_TRY(ch_astype(values, (ch_dtype)target->dt, vc));
    }
    ch_broadcast_strides(*vc, nd, dim, vs);
    return CH_OK;
}

ch_status ch_scatter_add(ch_tensor *target, int axis, const ch_tensor *indices, const ch_tensor *values) {
    static const char *fn = "scatter_add";
    CH_CHECK_CPU(target, fn, "target");
    CH_CHECK_CPU(indices, fn, "indices");
    CH_CHECK_CPU(values, fn, "values");
    if (target->nd == 0) return ch_fail(CH_ERR_SHAPE, "scatter_add: target is 0-d");
    CH_TRY(ch_norm_axis(&axis, target->nd, fn));
    int nd = target->nd - 1 + indices->nd;
    if (nd > CH_MAX_DIMS) return ch_fail(CH_ERR_SHAPE, "scatter_add: the indexed shape would have %d axes", nd);
    /* iteration space: target[:axis] + indices.shape + target[axis+1:] */
    int64_t sdim[CH_MAX_DIMS], ts[CH_MAX_DIMS], is[CH_MAX_DIMS], vs[CH_MAX_DIMS], istr[CH_MAX_DIMS];
    ch_contiguous_strides(indices->nd, indices->dim, istr);
    int k = 0;
    for (int d = 0; d < axis; d++, k++) sdim[k] = target->dim[d], ts[k] = target->stride[d], is[k] = 0;
    for (int d = 0; d < indices->nd; d++, k++) sdim[k] = indices->dim[d], ts[k] = 0, is[k] = istr[d];
    for (int d = axis + 1; d < target->nd; d++, k++) sdim[k] = target->dim[d], ts[k] = target->stride[d], is[k] = 0;
    ch_tensor *idx = NULL, *vc = NULL;
    CH_TRY(checked_indices(indices, target->dim[axis], axis, fn, &idx));
    ch_status st = values_as(target, values, nd, sdim, fn, &vc, vs);
    if (st == CH_OK) {
        ch_iter it;
        const int64_t *strides[3] = {ts, vs, is};
        ch_iter_init(&it, nd, sdim, 3, strides);
        scatter_loop(target, &it, ch_base(vc), (const int64_t *)idx->data, target->stride[axis]);
    }
    ch_tensor_release(idx);
    ch_tensor_release(vc);
    return st;
}

ch_status ch_scatter_add_along_axis(ch_tensor *target, int axis, const ch_tensor *indices, const ch_tensor *values) {
    static const char *fn = "scatter_add_along_axis";
    CH_CHECK_CPU(target, fn, "target");
    CH_CHECK_CPU(indices, fn, "indices");
    CH_CHECK_CPU(values, fn, "values");
    int64_t sdim[CH_MAX_DIMS];
    CH_TRY(along_shape(target, indices, &axis, fn, sdim));
    int nd = target->nd;
    ch_tensor *idx = NULL, *vc = NULL;
    CH_TRY(checked_indices(indices, target->dim[axis], axis, fn, &idx));
    int64_t ts[CH_MAX_DIMS], is[CH_MAX_DIMS], vs[CH_MAX_DIMS];
    ch_status st = values_as(target, values, nd, sdim, fn, &vc, vs);
    if (st == CH_OK) {
        ch_broadcast_strides(target, nd, sdim, ts);
        ts[axis] = 0;
        ch_broadcast_strides(idx, nd, sdim, is);
        is[axis] = idx->dim[axis] == 1 ? 0 : idx->stride[axis];
        ch_iter it;
        const int64_t *strides[3] = {ts, vs, is};
        ch_iter_init(&it, nd, sdim, 3, strides);
        scatter_loop(target, &it, ch_base(vc), (const int64_t *)idx->data, target->stride[axis]);
    }
    ch_tensor_release(idx);
    ch_tensor_release(vc);
    return st;
}

ch_status ch_masked_select(const ch_tensor *x, const ch_tensor *mask, ch_tensor **result) {
    static const char *fn = "masked_select";
    CH_CHECK_CPU(x, fn, "x");
    CH_CHECK_CPU(mask, fn, "mask");
    if (mask->dt != CH_BOOL)
        return ch_fail(CH_ERR_DTYPE, "masked_select: mask must be a bool tensor (got %s)", ch_dtype_name((ch_dtype)mask->dt));
    int nd;
    int64_t dim[CH_MAX_DIMS], xs[CH_MAX_DIMS], ms[CH_MAX_DIMS];
    CH_TRY(ch_broadcast_shape(x->nd, x->dim, mask->nd, mask->dim, &nd, dim, fn));
    ch_broadcast_strides(x, nd, dim, xs);
    ch_broadcast_strides(mask, nd, dim, ms);
    ch_iter it;
    const int64_t *strides[2] = {xs, ms};
    ch_iter_init(&it, nd, dim, 2, strides);
    const uint8_t *mb = (const uint8_t *)ch_base(mask);
    int64_t count = 0;
    for (int64_t pos = 0; pos < it.outer_count; pos++) {
        int64_t offs[2];
        ch_iter_offsets(&it, pos, offs);
        for (int64_t i = 0; i < it.inner; i++) count += mb[offs[1] + i * it.inner_stride[1]] != 0;
    }
    ch_tensor *out;
    CH_TRY(ch_tensor_new((ch_dtype)x->dt, 1, &count, CH_CPU, &out));
    size_t z = ch_dtype_size((ch_dtype)x->dt);
    const char *xb = ch_base(x);
    char *o = out->data;
    for (int64_t pos = 0; pos < it.outer_count; pos++) {
        int64_t offs[2];
        ch_iter_offsets(&it, pos, offs);
        for (int64_t i = 0; i < it.inner; i++)
            if (mb[offs[1] + i * it.inner_stride[1]]) {
                copy_elem(o, xb + (offs[0] + i * it.inner_stride[0]) * (int64_t)z, z);
                o += z;
            }
    }
    *result = out;
    return CH_OK;
}

ch_status ch_nonzero(const ch_tensor *x, ch_tensor **result) {
    CH_CHECK_CPU(x, "nonzero", "x");
    ch_dtype dt = (ch_dtype)x->dt;
    size_t z = ch_dtype_size(dt);
    int nd = x->nd;
    const char *xb = ch_base(x);
    /* walks x in C order with an explicit multi-index */
    int64_t count = 0;
    for (int pass = 0; pass < 2; pass++) {
        int64_t *o = NULL;
        if (pass == 1) {
            ch_tensor *out;
            int64_t odim[2] = {count, nd};
            CH_TRY(ch_tensor_new(CH_INT64, 2, odim, CH_CPU, &out));
            *result = out;
            o = (int64_t *)out->data;
        }
        int64_t idx[CH_MAX_DIMS] = {0}, off = 0;
        for (int64_t p = 0; p < x->numel; p++) {
            const char *e = xb + off * (int64_t)z;
            bool nz;
            switch (z) {
            case 1: nz = *(const uint8_t *)e != 0; break;
            case 2: nz = dt == CH_FLOAT16 ? (*(const uint16_t *)e & 0x7fff) != 0 : *(const uint16_t *)e != 0; break;
            case 4: nz = dt == CH_FLOAT32 ? *(const float *)e != 0.0f : *(const uint32_t *)e != 0; break;
            default: nz = dt == CH_FLOAT64 ? *(const double *)e != 0.0 : *(const uint64_t *)e != 0; break;
            }
            if (nz) {
                if (pass == 0) count++;
                else
                    for (int d = 0; d < nd; d++) *o++ = idx[d];
            }
            for (int d = nd - 1; d >= 0; d--) {
                off += x->stride[d];
                if (++idx[d] < x->dim[d]) break;
                off -= x->stride[d] * x->dim[d];
                idx[d] = 0;
            }
        }
    }
    return CH_OK;
}

/*
 * index.c -- the indexing kernels of the table (wrap_indices, take,
 * take_along_axis, scatter_add, scatter_add_along_axis, count_nonzero,
 * masked_select, nonzero): the front doors (runtime/ops/index.c) have
 * checked the user's arguments, wrapped the indices to int64 and allocated
 * the outputs; here the backend's own contract is verified, the index
 * spaces laid out, and the kernels of index.cu launched.
 *
 * Compiled; tested emulated (tests/cuda/test_index.cu).  NOT yet run on a GPU.
 */
#include "backend.h"

#include <string.h>

/* t has data (unless empty), dtype dt (-1: any) and lies on device dev. */
static int live(const ch_tensor *t, int dt, int dev) {
    return t && (t->data || !t->numel) && (dt < 0 || t->dt == dt) && t->dev == dev && t->nd >= 0 &&
           t->nd <= CH_MAX_DIMS;
}

/* t's element strides over the shape (nd, dim) it broadcasts to (0 where
 * t has extent 1 or no axis). */
static void broadcast_strides(const ch_tensor *t, int nd, const int64_t *dim, int64_t *st) {
    for (int d = 0; d < nd; d++) {
        int k = d - (nd - t->nd);
        st[d] = k < 0 || t->dim[k] == 1 || dim[d] == 1 ? 0 : t->stride[k];
    }
}

static void space_init(cu_space *s, int nd, const int64_t *dim) {
    memset(s, 0, sizeof *s);
    s->nd = nd;
    for (int d = 0; d < nd; d++)
        s->dim[d] = dim[d];
}

static int64_t numel_of(int nd, const int64_t *dim) {
    int64_t n = 1;
    for (int d = 0; d < nd; d++)
        n *= dim[d];
    return n;
}

ch_status cu_wrap_indices(ch_tensor *idx, int64_t n, int *bad, int64_t *value) {
    const char *fn = "wrap_indices";
    if (!idx || !cu_dense(idx, CH_INT64, idx->numel, idx->dev))
        return cu_fail(CH_ERR_INTERNAL, "%s: the indices must be a contiguous int64 tensor", fn);
    *bad = 0;
    if (idx->numel == 0)
        return CH_OK;
    CU_TRY(cu_use(idx->dev, fn));
    unsigned long long none = (unsigned long long)idx->numel, first = none;
    unsigned long long *d_first = (unsigned long long *)cu_stage_alloc(idx->dev, sizeof first, fn);
    if (!d_first)
        return CH_ERR_MEMORY;
    int64_t *p = (int64_t *)cu_base(idx);
    ch_status st = cu_to_device(d_first, &first, sizeof first, fn);
    if (st == CH_OK)
        st = cu_wrap_launch(p, idx->numel, n, d_first);
    if (st == CH_OK)
        st = cu_to_host(&first, d_first, sizeof first, fn);
    /* a bad entry is left as it was: read it back for the caller's message */
    if (st == CH_OK && first != none) {
        *bad = 1;
        st = cu_to_host(value, p + first, sizeof *value, fn);
    }
    cu_stage_free(idx->dev, d_first, sizeof first);
    return st;
}

ch_status cu_take(const ch_tensor *x, const ch_tensor *idx, int axis, ch_tensor *out) {
    const char *fn = "take";
    if (!x || !cu_dense(x, x->dt, x->numel, x->dev) || axis < 0 || axis >= x->nd ||
        !cu_dense(idx, CH_INT64, idx ? idx->numel : 0, x->dev) || !cu_dense(out, x->dt, out ? out->numel : 0, x->dev))
        return cu_fail(CH_ERR_INTERNAL, "%s: x, the int64 indices and out must be contiguous, on one device", fn);
    int64_t pre = 1, post = 1;
    for (int d = 0; d < axis; d++)
        pre *= x->dim[d];
    for (int d = axis + 1; d < x->nd; d++)
        post *= x->dim[d];
    if (out->numel != pre * idx->numel * post)
        return cu_fail(CH_ERR_INTERNAL, "%s: out has %lld elements, expected %lld", fn, (long long)out->numel,
                       (long long)(pre * idx->numel * post));
    if (out->numel == 0)
        return CH_OK;
    CU_TRY(cu_use(x->dev, fn));
    return cu_take_launch(cu_dtype_size(x->dt), cu_base(x), (const int64_t *)cu_base(idx), cu_base(out), out->numel,
                          x->dim[axis], idx->numel, post);
}

ch_status cu_take_along_axis(const ch_tensor *x, const ch_tensor *idx, int axis, ch_tensor *out) {
    const char *fn = "take_along_axis";
    if (!live(x, -1, x ? x->dev : 0) || !live(idx, CH_INT64, x->dev) || idx->nd != x->nd || axis < 0 ||
        axis >= x->nd || !out || out->nd != x->nd || !cu_dense(out, x->dt, out->numel, x->dev))
        return cu_fail(CH_ERR_INTERNAL, "%s: x, the int64 indices (of x's ndim) and contiguous out must lie on one "
                       "device", fn);
    if (out->numel == 0)
        return CH_OK;
    cu_space s;
    space_init(&s, out->nd, out->dim);
    broadcast_strides(x, out->nd, out->dim, s.st[0]);
    broadcast_strides(idx, out->nd, out->dim, s.st[1]);
    s.st[0][axis] = 0; /* x moves along axis by the index only */
    CU_TRY(cu_use(x->dev, fn));
    return cu_take_along_launch(cu_dtype_size(x->dt), &s, cu_base(x), (const int64_t *)cu_base(idx),
                                x->stride[axis], cu_base(out));
}

/* Splits the indexed space (nd, dim; strides target ts, values vs, idx is)
 * into the target's own axes (items) and the rest (the loop of each item),
 * then launches. */
static ch_status scatter(ch_tensor *target, const ch_tensor *idx, const ch_tensor *values, int axis, int nd,
                         const int64_t *dim, const int64_t *ts, const int64_t *vs, const int64_t *is,
                         const char *fn) {
    if (numel_of(nd, dim) == 0)
        return CH_OK;
    cu_space items, loop;
    space_init(&items, 0, dim);
    space_init(&loop, 0, dim);
    for (int d = 0; d < nd; d++) {
        if (dim[d] == 1)
            continue;
        cu_space *s = ts[d] != 0 ? &items : &loop;
        int k = s->nd++;
        s->dim[k] = dim[d];
        s->st[0][k] = ts[d];
        s->st[1][k] = vs[d];
        s->st[2][k] = is[d];
    }
    CU_TRY(cu_use(target->dev, fn));
    return cu_scatter_launch(target->dt, &items, &loop, cu_base(target), cu_base(values),
                             (const int64_t *)cu_base(idx), target->stride[axis]);
}

/* The contract of both scatters: everything on target's device, values of
 * its dtype, int64 indices. */
static int scatter_ok(const ch_tensor *target, int axis, const ch_tensor *idx, const ch_tensor *values) {
    return live(target, -1, target ? target->dev : 0) && axis >= 0 && axis < target->nd &&
           live(idx, CH_INT64, target->dev) && live(values, target->dt, target->dev);
}

ch_status cu_scatter_add(ch_tensor *target, int axis, const ch_tensor *idx, const ch_tensor *values) {
    const char *fn = "scatter_add";
    if (!scatter_ok(target, axis, idx, values) || !cu_dense(idx, CH_INT64, idx->numel, target->dev) ||
        target->nd - 1 + idx->nd > CH_MAX_DIMS)
        return cu_fail(CH_ERR_INTERNAL, "%s: target, contiguous int64 indices and values of target's dtype must lie "
                       "on one device", fn);
    /* target[:axis] + idx.shape + target[axis+1:] */
    int nd = target->nd - 1 + idx->nd, k = 0;
    int64_t dim[CH_MAX_DIMS], ts[CH_MAX_DIMS], vs[CH_MAX_DIMS], is[CH_MAX_DIMS];
    int64_t istride = idx->numel;
    for (int d = 0; d < axis; d++, k++)
        dim[k] = target->dim[d], ts[k] = target->stride[d], is[k] = 0;
    for (int d = 0; d < idx->nd; d++, k++) {
        istride /= idx->dim[d] ? idx->dim[d] : 1;
        dim[k] = idx->dim[d], ts[k] = 0, is[k] = istride;
    }
    for (int d = axis + 1; d < target->nd; d++, k++)
        dim[k] = target->dim[d], ts[k] = target->stride[d], is[k] = 0;
    broadcast_strides(values, nd, dim, vs);
    return scatter(target, idx, values, axis, nd, dim, ts, vs, is, fn);
}

ch_status cu_scatter_add_along_axis(ch_tensor *target, int axis, const ch_tensor *idx, const ch_tensor *values) {
    const char *fn = "scatter_add_along_axis";
    if (!scatter_ok(target, axis, idx, values) || idx->nd != target->nd)
        return cu_fail(CH_ERR_INTERNAL, "%s: target, int64 indices of target's ndim and values of target's dtype "
                       "must lie on one device", fn);
    int nd = target->nd;
    int64_t dim[CH_MAX_DIMS], ts[CH_MAX_DIMS], vs[CH_MAX_DIMS], is[CH_MAX_DIMS];
    for (int d = 0; d < nd; d++)
        dim[d] = d == axis || target->dim[d] == 1 ? idx->dim[d] : target->dim[d];
    broadcast_strides(target, nd, dim, ts);
    ts[axis] = 0;
    broadcast_strides(idx, nd, dim, is);
    broadcast_strides(values, nd, dim, vs);
    return scatter(target, idx, values, axis, nd, dim, ts, vs, is, fn);
}

/* Counts the nonzeros of s's operand 0 per chunk into a new device array
 * (exclusive prefix sums, the total last); the caller frees it. */
static ch_status count_chunks(int dev, int dt, const cu_space *s, const char *x, int64_t **counts, size_t *bytes,
                              int64_t *total, const char *fn) {
    int64_t n = numel_of(s->nd, s->dim), nchunks = (n + CU_CHUNK - 1) / CU_CHUNK;
    *bytes = (size_t)(nchunks + 1) * sizeof(int64_t);
    CU_TRY(cu_use(dev, fn));
    if (!(*counts = (int64_t *)cu_stage_alloc(dev, *bytes, fn)))
        return CH_ERR_MEMORY;
    ch_status st = cu_count_launch(dt, s, x, *counts, nchunks);
    if (st == CH_OK)
        st = cu_to_host(total, *counts + nchunks, sizeof *total, fn);
    if (st != CH_OK) {
        cu_stage_free(dev, *counts, *bytes);
        *counts = NULL;
    }
    return st;
}

ch_status cu_count_nonzero(const ch_tensor *x, int nd, const int64_t *dim, int64_t *count) {
    const char *fn = "count_nonzero";
    if (!live(x, -1, x ? x->dev : 0) || nd < x->nd || nd > CH_MAX_DIMS)
        return cu_fail(CH_ERR_INTERNAL, "%s: x must be a live device tensor broadcasting to the shape", fn);
    cu_space s;
    space_init(&s, nd, dim);
    broadcast_strides(x, nd, dim, s.st[0]);
    int64_t *counts;
    size_t bytes;
    CU_TRY(count_chunks(x->dev, x->dt, &s, cu_base(x), &counts, &bytes, count, fn));
    cu_stage_free(x->dev, counts, bytes);
    return CH_OK;
}

ch_status cu_masked_select(const ch_tensor *x, const ch_tensor *mask, int nd, const int64_t *dim, ch_tensor *out) {
    const char *fn = "masked_select";
    if (!live(x, -1, x ? x->dev : 0) || !live(mask, CH_BOOL, x->dev) || nd < x->nd || nd < mask->nd ||
        nd > CH_MAX_DIMS || !out || out->nd != 1 || !cu_dense(out, x->dt, out->numel, x->dev))
        return cu_fail(CH_ERR_INTERNAL, "%s: x, the bool mask and 1-d contiguous out must lie on one device", fn);
    cu_space s;
    space_init(&s, nd, dim);
    broadcast_strides(x, nd, dim, s.st[0]);
    broadcast_strides(mask, nd, dim, s.st[1]);
    /* the counts are of the mask: count over a space whose operand 0 is it */
    cu_space m = s;
    memcpy(m.st[0], s.st[1], sizeof m.st[0]);
    int64_t *starts, total;
    size_t bytes;
    CU_TRY(count_chunks(x->dev, CH_BOOL, &m, cu_base(mask), &starts, &bytes, &total, fn));
    ch_status st = CH_OK;
    if (total != out->numel)
        st = cu_fail(CH_ERR_INTERNAL, "%s: out has %lld elements for %lld selected", fn, (long long)out->numel,
                     (long long)total);
    else if (total > 0)
        st = cu_masked_select_launch(cu_dtype_size(x->dt), &s, cu_base(x), (const uint8_t *)cu_base(mask), starts,
                                     cu_base(out));
    cu_stage_free(x->dev, starts, bytes);
    return st;
}

ch_status cu_nonzero(const ch_tensor *x, ch_tensor *out) {
    const char *fn = "nonzero";
    if (!live(x, -1, x ? x->dev : 0) || !out || out->nd != 2 || out->dim[1] != x->nd ||
        !cu_dense(out, CH_INT64, out->numel, x->dev))
        return cu_fail(CH_ERR_INTERNAL, "%s: x and contiguous int64 out (count, x's ndim) must lie on one device", fn);
    cu_space s;
    space_init(&s, x->nd, x->dim);
    memcpy(s.st[0], x->stride, sizeof s.st[0]);
    int64_t *starts, total;
    size_t bytes;
    CU_TRY(count_chunks(x->dev, x->dt, &s, cu_base(x), &starts, &bytes, &total, fn));
    ch_status st = CH_OK;
    if (total != out->dim[0])
        st = cu_fail(CH_ERR_INTERNAL, "%s: out has %lld rows for %lld nonzero elements", fn, (long long)out->dim[0],
                     (long long)total);
    else if (total > 0)
        st = cu_nonzero_launch(x->dt, &s, cu_base(x), starts, (int64_t *)cu_base(out));
    cu_stage_free(x->dev, starts, bytes);
    return st;
}

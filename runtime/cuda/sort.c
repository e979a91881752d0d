/*
 * sort.c -- the sort, unique_groups and unique_fill kernels of the table:
 * the front doors (runtime/ops/sort.c) have normalised the axis, allocated
 * the outputs and (for unique) made the stable argsort; here the backend's
 * contract is verified, scratch space allocated and the kernels of sort.cu
 * launched.
 *
 * Compiled; tested emulated (tests/cuda/test_sort.cu).  NOT yet run on a GPU.
 */
#include "backend.h"

#include <string.h>

static int live(const ch_tensor *t, int dev) {
    return t && (t->data || !t->numel) && t->dev == dev && t->nd >= 0 && t->nd <= CH_MAX_DIMS;
}

/* t is NULL or contiguous of dtype dt and x's shape. */
static int result_ok(const ch_tensor *t, int dt, const ch_tensor *x) {
    if (!t)
        return 1;
    if (!cu_dense(t, dt, x->numel, x->dev) || t->nd != x->nd)
        return 0;
    for (int d = 0; d < x->nd; d++)
        if (t->dim[d] != x->dim[d])
            return 0;
    return 1;
}

ch_status cu_sort(const ch_tensor *x, int axis, int descending, ch_tensor *vals, ch_tensor *args) {
    const char *fn = "sort";
    if (!live(x, x ? x->dev : 0) || axis < 0 || axis >= x->nd || (!vals && !args) || !result_ok(vals, x->dt, x) ||
        !result_ok(args, CH_INT64, x))
        return cu_fail(CH_ERR_INTERNAL, "%s: x and the contiguous results (values of x's dtype, int64 positions) "
                       "must have one shape and device", fn);
    if (x->numel == 0)
        return CH_OK;
    /* the other axes, for locating each line in x (operand 0) and the results (1) */
    cu_space lines;
    memset(&lines, 0, sizeof lines);
    int64_t cstr[CH_MAX_DIMS], s = 1;
    for (int d = x->nd - 1; d >= 0; d--)
        cstr[d] = s, s *= x->dim[d];
    for (int d = 0; d < x->nd; d++)
        if (d != axis) {
            int k = lines.nd++;
            lines.dim[k] = x->dim[d];
            lines.st[0][k] = x->stride[d];
            lines.st[1][k] = cstr[d];
        }
    int64_t n = x->dim[axis];
    size_t bytes = (size_t)x->numel * 2 * 16; /* two (key, position) pairs per element */
    CU_TRY(cu_use(x->dev, fn));
    void *scratch = cu_stage_alloc(x->dev, bytes, fn);
    if (!scratch)
        return CH_ERR_MEMORY;
    ch_status st = cu_sort_launch(x->dt, &lines, n, x->stride[axis], cstr[axis], descending, cu_base(x),
                                  vals ? cu_base(vals) : NULL, args ? (int64_t *)cu_base(args) : NULL, scratch);
    cu_stage_free(x->dev, scratch, bytes);
    return st;
}

/* flat 1-d on its device, order contiguous int64 of its length. */
static int unique_ok(const ch_tensor *flat, const ch_tensor *order) {
    return live(flat, flat ? flat->dev : 0) && flat->nd == 1 && cu_dense(order, CH_INT64, flat->numel, flat->dev);
}

ch_status cu_unique_groups(const ch_tensor *flat, const ch_tensor *order, ch_tensor *group, int64_t *ngroups) {
    const char *fn = "unique";
    if (!unique_ok(flat, order) || !cu_dense(group, CH_INT64, flat->numel, flat->dev))
        return cu_fail(CH_ERR_INTERNAL, "%s: flat (1-d), its int64 order and int64 group of its length must lie "
                       "on one device", fn);
    *ngroups = 0;
    int64_t n = flat->numel;
    if (n == 0)
        return CH_OK;
    CU_TRY(cu_use(flat->dev, fn));
    size_t bytes = (size_t)((n + CU_CHUNK - 1) / CU_CHUNK + 1) * sizeof(int64_t);
    int64_t *counts = (int64_t *)cu_stage_alloc(flat->dev, bytes, fn);
    if (!counts)
        return CH_ERR_MEMORY;
    ch_status st = cu_unique_groups_launch(flat->dt, cu_base(flat), flat->stride[0], n,
                                           (const int64_t *)cu_base(order), (int64_t *)cu_base(group), counts);
    if (st == CH_OK)
        st = cu_to_host(ngroups, counts + (n + CU_CHUNK - 1) / CU_CHUNK, sizeof *ngroups, fn);
    cu_stage_free(flat->dev, counts, bytes);
    return st;
}

ch_status cu_unique_fill(const ch_tensor *flat, const ch_tensor *order, const ch_tensor *group, ch_tensor *vals,
                         ch_tensor *inv, ch_tensor *cnt) {
    const char *fn = "unique";
    if (!unique_ok(flat, order) || !cu_dense(group, CH_INT64, flat->numel, flat->dev) || !vals || vals->nd != 1 ||
        !cu_dense(vals, flat->dt, vals->numel, flat->dev) || (inv && !cu_dense(inv, CH_INT64, flat->numel, flat->dev)) ||
        (cnt && !cu_dense(cnt, CH_INT64, vals->numel, flat->dev)))
        return cu_fail(CH_ERR_INTERNAL, "%s: flat, order, group, the values (flat's dtype), inverse and counts "
                       "(int64) must be contiguous on one device", fn);
    int64_t n = flat->numel, ng = vals->numel;
    if (n == 0)
        return CH_OK;
    CU_TRY(cu_use(flat->dev, fn));
    int64_t *starts = NULL;
    size_t bytes = (size_t)ng * sizeof(int64_t);
    if (cnt && !(starts = (int64_t *)cu_stage_alloc(flat->dev, bytes, fn)))
        return CH_ERR_MEMORY;
    ch_status st = cu_unique_fill_launch(flat->dt, cu_base(flat), flat->stride[0], n, (const int64_t *)cu_base(order),
                                         (const int64_t *)cu_base(group), cu_base(vals), ng,
                                         inv ? (int64_t *)cu_base(inv) : NULL, cnt ? (int64_t *)cu_base(cnt) : NULL,
                                         starts);
    cu_stage_free(flat->dev, starts, bytes);
    return st;
}

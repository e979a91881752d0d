/*
 * pooling.c -- the pooling kernels of the table (max_pool_forward,
 * max_pool_scatter, max_pool_gather, avg_pool_forward, avg_pool_backward):
 * the front door (runtime/ops/pooling.c) has checked the arguments, filled
 * the geometry and made the operands contiguous; here that contract is
 * verified once more and the kernels of pooling.cu launched.
 *
 * Compiled, and tested emulated (tests/cuda/test_pooling.cu); not yet run
 * on a GPU.
 */
#include "backend.h"

/* float operands of one dtype holding `a` and `b` elements, on one device,
 * and int32 window positions of `n` elements when ix is given. */
static ch_status check(const char *fn, const ch_tensor *src, int64_t a, const ch_tensor *dst, int64_t b,
                       const ch_tensor *ix, int64_t n) {
    int dt = src ? src->dt : -1;
    if ((dt != CH_FLOAT32 && dt != CH_FLOAT64) || !cu_dense(src, dt, a, src->dev) || !cu_dense(dst, dt, b, src->dev) ||
        (ix && !cu_dense(ix, CH_INT32, n, src->dev)))
        return cu_fail(CH_ERR_INTERNAL, "%s: the operands must be contiguous float32 or float64 tensors of one dtype "
                       "on one device (window positions int32), sized as the geometry says", fn);
    return cu_use(src->dev, fn);
}

static ch_status run(const char *fn, int kind, int mode, const ch_pool_geom *g, const ch_tensor *src,
                     const ch_tensor *ix, ch_tensor *dst, ch_tensor *ix_out) {
    int from_out = kind == CU_POOL_MAX_SCATTER || kind == CU_POOL_AVG_BWD;
    int64_t ins = g->planes * g->in_n, outs = g->planes * g->out_n;
    if (mode < 0 || mode > 2)
        return cu_fail(CH_ERR_INTERNAL, "%s: unknown average mode %d", fn, mode);
    CU_TRY(check(fn, src, from_out ? outs : ins, dst, from_out ? ins : outs, ix ? ix : ix_out, outs));
    if (dst->numel == 0)
        return CH_OK;
    return cu_pool_launch(kind, mode, g, src->dt, cu_base(src), ix ? (const int32_t *)cu_base(ix) : NULL,
                          cu_base(dst), ix_out ? (int32_t *)cu_base(ix_out) : NULL);
}

ch_status cu_max_pool_forward(const ch_pool_geom *g, const ch_tensor *x, ch_tensor *y, ch_tensor *indexes) {
    return run("max_pooling", CU_POOL_MAX_FWD, 0, g, x, NULL, y, indexes);
}

ch_status cu_max_pool_scatter(const ch_pool_geom *g, const ch_tensor *gy, const ch_tensor *indexes, ch_tensor *gx) {
    if (!indexes)
        return cu_fail(CH_ERR_INTERNAL, "max_pooling_scatter: no window positions");
    return run("max_pooling_scatter", CU_POOL_MAX_SCATTER, 0, g, gy, indexes, gx, NULL);
}

ch_status cu_max_pool_gather(const ch_pool_geom *g, const ch_tensor *x, const ch_tensor *indexes, ch_tensor *y) {
    if (!indexes)
        return cu_fail(CH_ERR_INTERNAL, "max_pooling_gather: no window positions");
    return run("max_pooling_gather", CU_POOL_MAX_GATHER, 0, g, x, indexes, y, NULL);
}

ch_status cu_avg_pool_forward(const ch_pool_geom *g, int mode, const ch_tensor *x, ch_tensor *y) {
    return run("average_pooling", CU_POOL_AVG_FWD, mode, g, x, NULL, y, NULL);
}

ch_status cu_avg_pool_backward(const ch_pool_geom *g, int mode, const ch_tensor *gy, ch_tensor *gx) {
    return run("average_pooling_backward", CU_POOL_AVG_BWD, mode, g, gy, NULL, gx, NULL);
}

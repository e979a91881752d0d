/*
 * batch_norm.c -- the batch-normalization kernels of the table
 * (batch_norm_forward, batch_norm_backward): the front door
 * (runtime/ops/batch_norm.c) has checked the arguments, made x and gy
 * contiguous 3-d (A, C, B) views and the per-channel inputs contiguous
 * float64; here that contract is verified once more, per-channel scratch
 * taken from the caching allocator, and batch_norm.cu launched.  Train,
 * test and fixed modes differ only in what the Lua layer hands in (batch
 * statistics from this forward, or the running / given ones to the
 * elementwise ops), as on the CPU.
 *
 * Compiled, and tested emulated (tests/cuda/test_batch_norm.cu); not yet
 * run on a GPU.
 */
#include "backend.h"

/* t is NULL or a contiguous float64 (C,) tensor on dev. */
static int vec_ok(const ch_tensor *t, int dt, int64_t C, int dev) { return !t || cu_dense(t, dt, C, dev); }

static const double *vec(const ch_tensor *t) { return t ? (const double *)cu_base(t) : NULL; }
static char *out(ch_tensor *t) { return t ? cu_base(t) : NULL; }

static ch_status check_x(const char *fn, const ch_tensor *x) {
    if (!x || x->nd != 3 || (x->dt != CH_FLOAT32 && x->dt != CH_FLOAT64) || !cu_dense(x, x->dt, x->numel, x->dev))
        return cu_fail(CH_ERR_INTERNAL, "%s: x must be a contiguous 3-d (A, C, B) float32 or float64 tensor", fn);
    return CH_OK;
}

ch_status cu_batch_norm_forward(const ch_tensor *x, const ch_tensor *gamma, const ch_tensor *beta, double eps,
                                ch_tensor *y, ch_tensor *mean, ch_tensor *var, ch_tensor *inv_std) {
    const char *fn = "batch_normalization";
    CU_TRY(check_x(fn, x));
    int64_t A = x->dim[0], C = x->dim[1], B = x->dim[2];
    if (!vec_ok(gamma, CH_FLOAT64, C, x->dev) || !vec_ok(beta, CH_FLOAT64, C, x->dev) ||
        (y && !cu_dense_as(y, x)) || !vec_ok(mean, x->dt, C, x->dev) || !vec_ok(var, x->dt, C, x->dev) ||
        !vec_ok(inv_std, x->dt, C, x->dev))
        return cu_fail(CH_ERR_INTERNAL, "%s: gamma and beta must be contiguous float64 (%lld,) tensors, y like x and "
                       "the statistics (%lld,) of x's dtype, on x's device", fn, (long long)C, (long long)C);
    if (C == 0)
        return CH_OK;
    CU_TRY(cu_use(x->dev, fn));
    size_t bytes = sizeof(double) * (size_t)(3 * C);
    double *st = (double *)cu_scratch(x->dev, bytes, fn);
    if (!st)
        return CH_ERR_MEMORY;
    ch_status r = cu_batch_norm_forward_launch(x->dt, A, C, B, cu_base(x), vec(gamma), vec(beta), eps, st, out(y),
                                               out(mean), out(var), out(inv_std));
    cu_scratch_release(x->dev, st, bytes);
    return r;
}

ch_status cu_batch_norm_backward(const ch_tensor *x, const ch_tensor *gamma, const ch_tensor *gy,
                                 const ch_tensor *mean, const ch_tensor *inv_std, ch_tensor *gx, ch_tensor *ggamma,
                                 ch_tensor *gbeta) {
    const char *fn = "batch_normalization_grad";
    CU_TRY(check_x(fn, x));
    int64_t A = x->dim[0], C = x->dim[1], B = x->dim[2];
    if (!cu_dense_as(gy, x) || !vec_ok(gamma, CH_FLOAT64, C, x->dev) || !mean || !inv_std ||
        !vec_ok(mean, CH_FLOAT64, C, x->dev) || !vec_ok(inv_std, CH_FLOAT64, C, x->dev) || (gx && !cu_dense_as(gx, x)) ||
        !vec_ok(ggamma, x->dt, C, x->dev) || !vec_ok(gbeta, x->dt, C, x->dev))
        return cu_fail(CH_ERR_INTERNAL, "%s: gy and gx must be like x, gamma, mean and inv_std contiguous float64 "
                       "(%lld,) tensors and the parameter gradients (%lld,) of x's dtype, on x's device", fn,
                       (long long)C, (long long)C);
    if (C == 0)
        return CH_OK;
    CU_TRY(cu_use(x->dev, fn));
    size_t bytes = sizeof(double) * (size_t)(2 * C);
    double *acc = (double *)cu_scratch(x->dev, bytes, fn);
    if (!acc)
        return CH_ERR_MEMORY;
    ch_status r = cu_batch_norm_backward_launch(x->dt, A, C, B, cu_base(x), vec(gamma), cu_base(gy), vec(mean),
                                                vec(inv_std), acc, out(gx), out(ggamma), out(gbeta));
    cu_scratch_release(x->dev, acc, bytes);
    return r;
}

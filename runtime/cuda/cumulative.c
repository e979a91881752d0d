/*
 * cumulative.c -- cumsum/cumprod of the table on the GPU: the front door
 * (runtime/ops/reduce.c) has made x contiguous in its compute dtype
 * (float32, float64 or int64) and allocated out; here that is verified and
 * cumulative.cu launched.
 *
 * Compiled only: this code has not yet been run on a GPU
 * (tests/cuda/test_cumulative.cu runs it emulated against the CPU).
 */
#include "backend.h"

ch_status cu_cumulative(int prod, const ch_tensor *x, int64_t O, int64_t R, int64_t I, ch_tensor *out) {
    const char *fn = prod ? "cumprod" : "cumsum";
    if (!x || (x->dt != CH_FLOAT32 && x->dt != CH_FLOAT64 && x->dt != CH_INT64) || !cu_dense_as(x, x) ||
        !cu_dense_as(out, x))
        return cu_fail(CH_ERR_INTERNAL, "%s: x and out must be contiguous float32, float64 or int64 tensors of one "
                       "dtype, shape and device", fn);
    if (O < 0 || R < 0 || I < 0 || O * R * I != x->numel)
        return cu_fail(CH_ERR_INTERNAL, "%s: the view (%lld, %lld, %lld) does not cover the %lld elements of x", fn,
                       (long long)O, (long long)R, (long long)I, (long long)x->numel);
    if (x->numel == 0)
        return CH_OK;
    CU_TRY(cu_use(x->dev, fn));
    return cu_cumulative_launch(prod, x->dt, O, R, I, cu_base(x), cu_base(out));
}

/*
 * random.c -- the samplers of the table on the GPU: random_fill,
 * permutation and choice.  The front door (runtime/ops/random.c) has
 * checked the arguments and reserved the counters of the output's device;
 * here the backend's own contract is verified and random.cu launched.
 *
 * Compiled only: this code has not yet been run on a GPU
 * (tests/cuda/test_random.cu runs it emulated against the CPU).
 */
#include "backend.h"

static int is_float(int dt) { return dt == CH_FLOAT16 || dt == CH_FLOAT32 || dt == CH_FLOAT64; }

ch_status cu_random_fill(const ch_random_args *r, ch_tensor *out) {
    const char *fn = "random";
    if (!r || r->kind < CH_RANDOM_UNIFORM || r->kind > CH_RANDOM_RANDINT)
        return cu_fail(CH_ERR_INTERNAL, "%s: unknown sampler %d", fn, r ? r->kind : -1);
    if (!out || !cu_dense(out, out->dt, out->numel, out->dev) || cu_dtype_size(out->dt) == 0)
        return cu_fail(CH_ERR_INTERNAL, "%s: the output must be a contiguous tensor on the GPU", fn);
    if ((r->kind == CH_RANDOM_UNIFORM || r->kind == CH_RANDOM_NORMAL) && !is_float(out->dt))
        return cu_fail(CH_ERR_INTERNAL, "%s: uniform and normal draws fill float tensors (got %s)", fn,
                       cu_dtype_name(out->dt));
    if (r->kind == CH_RANDOM_RANDINT && r->range == 0)
        return cu_fail(CH_ERR_INTERNAL, "%s: randint's range must be at least 1", fn);
    if (out->numel == 0)
        return CH_OK;
    CU_TRY(cu_use(out->dev, fn));
    return cu_random_fill_launch(r, out->dt, out->numel, cu_base(out));
}

ch_status cu_permutation(uint64_t seed, uint64_t first, ch_tensor *out) {
    if (!out || !cu_dense(out, CH_INT64, out->numel, out->dev))
        return cu_fail(CH_ERR_INTERNAL, "permutation: the output must be a contiguous int64 tensor on the GPU");
    if (out->numel == 0)
        return CH_OK;
    CU_TRY(cu_use(out->dev, "permutation"));
    return cu_permutation_launch(seed, first, out->numel, (int64_t *)cu_base(out));
}

ch_status cu_choice(int64_t n, int replace, ch_tensor *p, int64_t nonzero, uint64_t seed, uint64_t first,
                    ch_tensor *out) {
    const char *fn = "choice";
    if (!out || !cu_dense(out, CH_INT64, out->numel, out->dev))
        return cu_fail(CH_ERR_INTERNAL, "%s: the output must be a contiguous int64 tensor on the GPU", fn);
    if (p && !cu_dense(p, CH_FLOAT64, n, out->dev))
        return cu_fail(CH_ERR_INTERNAL, "%s: the probabilities must be %lld contiguous float64 values on the "
                       "output's device", fn, (long long)n);
    int64_t k = out->numel;
    if (n < 0 || (k > 0 && n == 0) || (!replace && k > (p ? nonzero : n)))
        return cu_fail(CH_ERR_INTERNAL, "%s: %lld samples of %lld%s", fn, (long long)k, (long long)n,
                       replace ? "" : " without replacement");
    if (k == 0)
        return CH_OK;
    CU_TRY(cu_use(out->dev, fn));
    return cu_choice_launch(out->dev, n, replace, p ? (double *)cu_base(p) : NULL, seed, first, k,
                            (int64_t *)cu_base(out));
}

/*
 * lrn.c -- local response normalisation across channels on the GPU (the
 * table's lrn_forward and lrn_backward): the front door (runtime/ops/lrn.c)
 * has made every operand contiguous of x's dtype (float32/float64) and
 * allocated the outputs; here that is verified and lrn.cu launched.
 *
 * Compiled only: this code has not yet been run on a GPU
 * (tests/cuda/test_lrn.cu runs it emulated against the CPU).
 */
#include "backend.h"

/* x is (N, C, S...) contiguous float32/float64 on the GPU; t is like x. */
static int like_x(const ch_tensor *t, const ch_tensor *x) { return cu_dense_as(t, x); }

static int x_ok(const ch_tensor *x) {
    return x && x->nd >= 2 && (x->dt == CH_FLOAT32 || x->dt == CH_FLOAT64) && cu_dense_as(x, x);
}

static void dims(const ch_tensor *x, int64_t *N, int64_t *C, int64_t *S) {
    *N = x->dim[0];
    *C = x->dim[1];
    *S = 1;
    for (int a = 2; a < x->nd; a++)
        *S *= x->dim[a];
}

ch_status cu_lrn_forward(const ch_tensor *x, int64_t half, double k, double alpha, double beta, ch_tensor *y,
                         ch_tensor *unit_scale) {
    const char *fn = "local_response_normalization";
    if (!x_ok(x) || !like_x(y, x) || !like_x(unit_scale, x) || half < 0)
        return cu_fail(CH_ERR_INTERNAL, "%s: x, y and unit_scale must be contiguous float32 or float64 tensors "
                       "(N, C, ...) of one dtype, shape and device", fn);
    if (x->numel == 0)
        return CH_OK;
    CU_TRY(cu_use(x->dev, fn));
    int64_t N, C, S;
    dims(x, &N, &C, &S);
    return cu_lrn_forward_launch(x->dt, N, C, S, half, k, alpha, beta, cu_base(x), cu_base(y), cu_base(unit_scale));
}

ch_status cu_lrn_backward(const ch_tensor *x, const ch_tensor *y, const ch_tensor *unit_scale, const ch_tensor *gy,
                          int64_t half, double alpha, double beta, ch_tensor *gx) {
    const char *fn = "local_response_normalization_grad";
    if (!x_ok(x) || !like_x(y, x) || !like_x(unit_scale, x) || !like_x(gy, x) || !like_x(gx, x) || half < 0)
        return cu_fail(CH_ERR_INTERNAL, "%s: x, y, unit_scale, gy and gx must be contiguous float32 or float64 "
                       "tensors (N, C, ...) of one dtype, shape and device", fn);
    if (x->numel == 0)
        return CH_OK;
    CU_TRY(cu_use(x->dev, fn));
    int64_t N, C, S;
    dims(x, &N, &C, &S);
    return cu_lrn_backward_launch(x->dt, N, C, S, half, alpha, beta, cu_base(x), cu_base(y), cu_base(unit_scale),
                                  cu_base(gy), cu_base(gx));
}

/*
 * im2col.c -- the im2col and col2im kernels of the table: the front doors
 * (runtime/ops/conv.c, ch_conv_im2col / ch_conv_col2im) have checked the
 * geometry and made the operands contiguous; here the backend's contract is
 * verified and the kernels of im2col.cu launched.
 *
 * Compiled; tested emulated (tests/cuda/test_im2col.cu).  NOT yet run on a GPU.
 */
#include "backend.h"

/* x (N, C, *in) and col (N, C, *k, *out): contiguous, of one float dtype,
 * on one device, with the element counts g gives. */
static int geom_ok(const ch_conv_geom *g, const ch_tensor *x, const ch_tensor *col) {
    if (!g || !x || (x->dt != CH_FLOAT32 && x->dt != CH_FLOAT64) || g->nsp < 1 || 2 * g->nsp > CH_MAX_DIMS)
        return 0;
    int64_t kk = 1, p = 1, pin = 1;
    for (int a = 0; a < g->nsp; a++) {
        if (g->s[a] < 1)
            return 0;
        kk *= g->k[a], p *= g->out[a], pin *= g->in[a];
    }
    return kk == g->Kk && p == g->P && pin == g->Pin && cu_dense(x, x->dt, g->N * g->C * pin, x->dev) &&
           cu_dense(col, x->dt, g->N * g->C * kk * p, x->dev);
}

ch_status cu_im2col(const ch_conv_geom *g, const ch_tensor *x, ch_tensor *col) {
    if (!geom_ok(g, x, col))
        return cu_fail(CH_ERR_INTERNAL, "im2col: x (N, C, *in) and col (N, C, *k, *out) must be contiguous, of one "
                       "float dtype and device, as the geometry says");
    if (col->numel == 0)
        return CH_OK;
    CU_TRY(cu_use(x->dev, "im2col"));
    return cu_im2col_launch(g, x->dt, cu_base(x), cu_base(col), col->numel);
}

ch_status cu_col2im(const ch_conv_geom *g, const ch_tensor *col, ch_tensor *x) {
    if (!geom_ok(g, x, col))
        return cu_fail(CH_ERR_INTERNAL, "col2im: col (N, C, *k, *out) and x (N, C, *in) must be contiguous, of one "
                       "float dtype and device, as the geometry says");
    if (x->numel == 0)
        return CH_OK;
    CU_TRY(cu_use(x->dev, "col2im"));
    return cu_col2im_launch(g, x->dt, cu_base(col), cu_base(x), x->numel);
}

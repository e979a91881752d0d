/*
 * embed_id.c -- the embedding lookup and its weight gradient on the GPU:
 * the front door (runtime/ops/embed_id.c) has checked the ids against the
 * vocabulary (on the host) and handed them as contiguous int64, w and gy
 * contiguous, y and gw fresh; here that is verified and embed_id.cu
 * launched.
 *
 * Compiled only: this code has not yet been run on a GPU
 * (tests/cuda/test_embed_id.cu runs it emulated against the CPU).
 */
#include "backend.h"

/* ids, a (V, D) table t (w or gw) and the rows r (y or gy, ids' shape +
 * (D,)): live, contiguous, on one device. */
static int operands_ok(const ch_tensor *ids, const ch_tensor *t, const ch_tensor *r) {
    if (!ids || !t || !r || t->nd != 2 || !cu_dense(ids, CH_INT64, ids->numel, t->dev) ||
        !cu_dense(t, t->dt, t->numel, t->dev) || !cu_dense(r, t->dt, ids->numel * t->dim[1], t->dev))
        return 0;
    return r->nd >= 1 && r->dim[r->nd - 1] == t->dim[1];
}

ch_status cu_embed_id_forward(const ch_tensor *ids, const ch_tensor *w, int has_ignore, int64_t ignore_label,
                              ch_tensor *y) {
    if (!operands_ok(ids, w, y) || (w->dt != CH_FLOAT16 && w->dt != CH_FLOAT32 && w->dt != CH_FLOAT64))
        return cu_fail(CH_ERR_INTERNAL, "embed_id: ids (contiguous int64), W (contiguous float, 2-d) and y (ids' "
                       "shape + (D,), W's dtype) must be on one GPU");
    if (y->numel == 0)
        return CH_OK;
    CU_TRY(cu_use(w->dev, "embed_id"));
    return cu_embed_id_forward_launch((int)cu_dtype_size(w->dt), ids->numel, w->dim[1], (const int64_t *)cu_base(ids),
                                      has_ignore, ignore_label, cu_base(w), cu_base(y));
}

ch_status cu_embed_id_backward(const ch_tensor *ids, const ch_tensor *gy, int has_ignore, int64_t ignore_label,
                               ch_tensor *gw) {
    if (!operands_ok(ids, gw, gy) || (gw->dt != CH_FLOAT32 && gw->dt != CH_FLOAT64))
        return cu_fail(CH_ERR_INTERNAL, "embed_id: ids (contiguous int64), gy (ids' shape + (D,)) and gW (2-d), "
                       "contiguous float32 or float64 of one dtype, must be on one GPU");
    if (gw->numel == 0)
        return CH_OK;
    CU_TRY(cu_use(gw->dev, "embed_id"));
    return cu_embed_id_backward_launch(gw->dt, ids->numel, gw->numel, gw->dim[1], (const int64_t *)cu_base(ids),
                                       has_ignore, ignore_label, cu_base(gy), cu_base(gw));
}

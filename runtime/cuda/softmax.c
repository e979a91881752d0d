/*
 * softmax.c -- the softmax-family kernels of the table: the front doors
 * (runtime/ops/softmax.c, softmax_cross_entropy.c) have checked shapes,
 * dtypes and labels and made
 * every operand contiguous in the compute dtype; here that is verified once
 * more and the row kernels of softmax.cu launched.
 *
 * Compiled only: this code has not yet been run on a GPU.
 */
#include "backend.h"

ch_status cu_softmax(int kind, const ch_softmax_args *s) {
    const char *fn = s->name ? s->name : "softmax";
    const ch_tensor *x = s->x;
    if (!x || (x->dt != CH_FLOAT32 && x->dt != CH_FLOAT64))
        return cu_fail(CH_ERR_INTERNAL, "%s: the GPU computes float32 or float64 rows", fn);
    int dt = x->dt, dev = x->dev;
    int64_t n = s->O * s->N * s->I, rows = s->O * s->I;
    int ok = s->O >= 0 && s->N >= 0 && s->I >= 0 && cu_dense(x, dt, n, dev);
    if (kind == CU_SOFTMAX_SCE) {
        ok = ok && cu_dense(s->out, dt, rows, dev) && cu_dense(s->labels, CH_INT64, rows, dev);
        ok = ok && (!s->weight || cu_dense(s->weight, dt, s->N, dev));
        ok = ok && (!s->grad || cu_dense(s->grad, dt, n, dev));
        ok = ok && (!s->prob || cu_dense(s->prob, dt, n, dev));
    } else {
        ok = ok && cu_dense(s->out, dt, n, dev) && (kind != CU_SOFTMAX_BWD || cu_dense(s->gy, dt, n, dev));
    }
    if (!ok)
        return cu_fail(CH_ERR_INTERNAL, "%s: the operands must be contiguous, of one float dtype and of the "
                       "planned sizes, on one device", fn);
    if (rows == 0 || (s->N == 0 && kind != CU_SOFTMAX_SCE))
        return CH_OK;
    CU_TRY(cu_use(dev, fn));
    return cu_softmax_launch(kind, s, dt, cu_base(x), s->gy ? cu_base(s->gy) : NULL, cu_base(s->out),
                             s->labels ? (const int64_t *)cu_base(s->labels) : NULL,
                             s->weight ? cu_base(s->weight) : NULL, s->grad ? cu_base(s->grad) : NULL,
                             s->prob ? cu_base(s->prob) : NULL);
}

/*
 * optimizer.c -- the optimizer-update kernels of the table: the front door
 * (runtime/ops/optimizer_updates.c) has checked shapes and aliasing and made
 * every operand a contiguous tensor of one float dtype on one device; here
 * that is verified once more and the kernel of optimizer.cu launched.
 *
 * Compiled only: this code has not yet been run on a GPU.
 */
#include "backend.h"

/* States each kind reads (the order of the public functions' arguments). */
static int states_of(int kind, const ch_opt_args *u) {
    switch (kind) {
    case CU_OPT_SGD: return 0;
    case CU_OPT_ADAM: return u->amsgrad ? 3 : 2;
    case CU_OPT_ADADELTA:
    case CU_OPT_MSVAG: return 2;
    case CU_OPT_GRAVES:
    case CU_OPT_SMORMS3: return 3;
    default: return 1;
    }
}

ch_status cu_opt_update(int kind, const ch_opt_args *u) {
    const char *fn = u->name ? u->name : "optimizer update";
    const ch_tensor *p = u->param;
    if (!p || (p->dt != CH_FLOAT32 && p->dt != CH_FLOAT64) || !cu_dense_as(p, p))
        return cu_fail(CH_ERR_INTERNAL, "%s: the GPU updates a contiguous float32 or float64 parameter", fn);
    int ns = states_of(kind, u);
    int ok = cu_dense_as(u->grad, p);
    for (int j = 0; j < ns; j++)
        ok = ok && cu_dense_as(u->state[j], p);
    if (!ok)
        return cu_fail(CH_ERR_INTERNAL, "%s: the gradient and the states must be contiguous, of the parameter's "
                       "dtype, shape and device", fn);
    if (p->numel == 0)
        return CH_OK;
    CU_TRY(cu_use(p->dev, fn));
    char *s[3] = {NULL, NULL, NULL};
    for (int j = 0; j < ns; j++)
        s[j] = cu_base(u->state[j]);
    return cu_opt_launch(kind, u, p->dt, p->numel, cu_base(p), cu_base(u->grad), s[0], s[1], s[2]);
}

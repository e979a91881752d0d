/*
 * activation.c -- the activation-gradient kernel of the table: the front
 * door (runtime/ops/activation_grad.c) has checked the op, dtypes and shapes and
 * made y and gy contiguous in the compute dtype; here that is verified once
 * more and the kernel of activation.cu launched.
 *
 * Compiled only: this code has not yet been run on a GPU.
 */
#include "backend.h"

ch_status cu_activation_grad(int op, const ch_tensor *y, const ch_tensor *gy, ch_tensor *gx) {
    if (op < 0 || op >= CH_NACT_GRAD)
        return cu_fail(CH_ERR_INTERNAL, "activation_grad: unknown op %d", op);
    const char *fn = "activation_grad";
    if (!y || (y->dt != CH_FLOAT32 && y->dt != CH_FLOAT64) || !cu_dense_as(y, y) || !cu_dense_as(gy, y) ||
        !cu_dense_as(gx, y))
        return cu_fail(CH_ERR_INTERNAL, "%s: y, gy and gx must be contiguous float32 or float64 tensors of one "
                       "dtype, shape and device", fn);
    if (y->numel == 0)
        return CH_OK;
    CU_TRY(cu_use(y->dev, fn));
    return cu_activation_grad_launch(op, y->dt, y->numel, cu_base(y), cu_base(gy), cu_base(gx));
}

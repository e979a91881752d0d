/*
 * addmul.c -- acc += x * y of the table on the GPU (gradient accumulation):
 * the front door (runtime/ops/addmul.c) hands same-shape C-contiguous
 * operands of one float dtype; here that is verified and addmul.cu
 * launched.
 *
 * Compiled only: this code has not yet been run on a GPU
 * (tests/cuda/test_addmul.cu runs it emulated against the CPU).
 */
#include "backend.h"

ch_status cu_addmul(ch_tensor *acc, const ch_tensor *x, const ch_tensor *y) {
    if (!acc || (acc->dt != CH_FLOAT32 && acc->dt != CH_FLOAT64) || !cu_dense_as(acc, acc) || !cu_dense_as(x, acc) ||
        !cu_dense_as(y, acc))
        return cu_fail(CH_ERR_INTERNAL, "addmul: acc, x and y must be contiguous float32 or float64 tensors of one "
                       "dtype, shape and device");
    if (acc->numel == 0)
        return CH_OK;
    CU_TRY(cu_use(acc->dev, "addmul"));
    return cu_addmul_launch(acc->dt, acc->numel, cu_base(acc), cu_base(x), cu_base(y));
}

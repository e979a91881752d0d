/*
 * reduce.c -- the reduction hook: plans the kept/reduced split of x's axes
 * (plan_reduce.c) and launches reduce.cu on x's device.  The core
 * (runtime/cpu/reduce.c) has cast x to its compute dtype and allocated out.
 *
 * Compiled and unit-tested on the planning side only: this code has not yet
 * been run on a GPU.
 */
#include "backend.h"
#include "plan.h"

static const char *op_name(int op) {
    switch (op) {
    case CH_SUM: return "sum";
    case CH_PROD: return "prod";
    case CH_MAX: return "max";
    case CH_MIN: return "min";
    case CH_ARGMAX: return "argmax";
    case CH_ARGMIN: return "argmin";
    default: return "reduce";
    }
}

ch_status cu_reduce(int op, const ch_tensor *x, const uint8_t *red, ch_tensor *out) {
    const char *fn = op_name(op);
    if (!x || !out || (!x->data && x->numel) || (!out->data && out->numel))
        return cu_fail(CH_ERR_ARG, "%s: a tensor argument is NULL or has been freed", fn);
    if (x->dt != CH_FLOAT32 && x->dt != CH_FLOAT64 && x->dt != CH_INT64)
        return cu_fail(CH_ERR_DTYPE, "%s: the GPU reduces float32, float64 and int64 data (got %s)", fn,
                       cu_dtype_name(x->dt));
    int arg = op == CH_ARGMAX || op == CH_ARGMIN;
    if (out->dt != (arg ? CH_INT64 : x->dt))
        return cu_fail(CH_ERR_DTYPE, "%s: the output has dtype %s (expected %s)", fn, cu_dtype_name(out->dt),
                       cu_dtype_name(arg ? CH_INT64 : x->dt));
    if (x->dev != out->dev)
        return cu_fail(CH_ERR_DEVICE, "%s: input on device %d, output on device %d", fn, x->dev, out->dev);
    cu_reduce_plan p;
    cu_reduce_plan_init(&p, x->nd, x->dim, x->stride, red);
    if (p.rows != out->numel)
        return cu_fail(CH_ERR_SHAPE, "%s: the output has %lld elements (expected %lld)", fn, (long long)out->numel,
                       (long long)p.rows);
    if (p.rows == 0)
        return CH_OK;
    CU_TRY(cu_use(x->dev, fn));
    return cu_reduce_launch(fn, op, x->dt, &p, cu_base(x), cu_base(out));
}

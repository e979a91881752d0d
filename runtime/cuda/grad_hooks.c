/*
 * grad_hooks.c -- the kernels of the gradient hooks in the table:
 * grad_transform (WeightDecay, Lasso, GradientHardClipping, the rescaling of
 * GradientClipping and GradientLARS) and sqnorm (the squared norms that
 * GradientClipping and GradientLARS take).  The front door
 * (runtime/ops/optimizer_updates.c) has checked dtypes, shapes and devices;
 * here the backend's own contract is verified and grad_hooks.cu launched.
 *
 * Compiled only: this code has not yet been run on a GPU
 * (tests/cuda/test_grad_hooks.cu runs it emulated against the CPU).
 */
#include "backend.h"

#include <math.h>

static int is_float(int dt) { return dt == CH_FLOAT16 || dt == CH_FLOAT32 || dt == CH_FLOAT64; }

/* t is live (data unless empty), of a float dtype, on device dev. */
static int live_float(const ch_tensor *t, int dev) {
    return t && (t->data || !t->numel) && is_float(t->dt) && t->dev == dev;
}

ch_status cu_grad_transform(ch_tensor *grad, const ch_tensor *param, double scale, double decay, int decay_sign,
                            double lower, double upper) {
    const char *fn = "grad_transform";
    if (!grad || !live_float(grad, grad->dev))
        return cu_fail(CH_ERR_INTERNAL, "%s: the gradient must be a float tensor on the GPU", fn);
    if (param) {
        int same = live_float(param, grad->dev) && param->nd == grad->nd;
        for (int k = 0; same && k < grad->nd; k++)
            same = param->dim[k] == grad->dim[k];
        if (!same)
            return cu_fail(CH_ERR_INTERNAL, "%s: the parameter must be a float tensor of the gradient's shape and "
                           "device", fn);
    }
    if (grad->numel == 0)
        return CH_OK;
    CU_TRY(cu_use(grad->dev, fn));
    cu_grad_transform_args a = {scale, decay, lower, upper, param && decay_sign, lower > -INFINITY || upper < INFINITY};
    int dt = grad->dt;
    /* the CPU's typed path: contiguous float32/float64, param of the same dtype */
    if ((dt == CH_FLOAT32 || dt == CH_FLOAT64) && cu_dense(grad, dt, grad->numel, grad->dev) &&
        (!param || cu_dense_as(param, grad)))
        return cu_grad_transform_dense(&a, dt, grad->numel, cu_base(grad), param ? cu_base(param) : NULL);
    /* any layout or float16: in double, as the CPU's general path */
    const int64_t *strides[2] = {grad->stride, param ? param->stride : grad->stride};
    cu_geom g;
    cu_geom_init(&g, grad->nd, grad->dim, 2, strides);
    return cu_grad_transform_strided(&a, &g, dt, cu_base(grad), param ? param->dt : dt,
                                     param ? cu_base(param) : NULL);
}

ch_status cu_sqnorm(const ch_tensor *x, double *result) {
    const char *fn = "sqnorm";
    if (!x || !live_float(x, x->dev) || !result)
        return cu_fail(CH_ERR_INTERNAL, "%s: x must be a float tensor on the GPU and result a host pointer", fn);
    *result = 0;
    if (x->numel == 0)
        return CH_OK;
    CU_TRY(cu_use(x->dev, fn));
    const int64_t *strides[2] = {x->stride, x->stride};
    cu_geom g;
    cu_geom_init(&g, x->nd, x->dim, 1, strides);
    return cu_sqnorm_launch(&g, x->dev, x->dt, cu_base(x), result);
}

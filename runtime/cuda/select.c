/*
 * select.c -- the where and axpby kernels of the table: the front door
 * (runtime/ops/elementwise.c)
 * has chosen the dtypes, converted the operands and checked aliasing; here
 * the broadcast strides and the collapsed index space are planned
 * (plan_elementwise.c) and the kernels of select.cu launched.
 *
 * Compiled and unit-tested on the planning side only: this code has not yet
 * been run on a GPU.
 */
#include "backend.h"
#include "plan.h"

static int alive(const ch_tensor *t) { return t && (t->data || !t->numel); }

ch_status cu_where(const ch_tensor *cond, const ch_tensor *a, const ch_tensor *b, ch_tensor *out) {
    if (!alive(cond) || !alive(a) || !alive(b) || !alive(out))
        return cu_fail(CH_ERR_ARG, "where: a tensor argument is NULL or has been freed");
    if (cond->dt != CH_BOOL || a->dt != out->dt || b->dt != out->dt)
        return cu_fail(CH_ERR_DTYPE, "where: the GPU selects with a bool condition between operands of the "
                       "output's dtype (got cond %s, a %s, b %s, out %s)", cu_dtype_name(cond->dt),
                       cu_dtype_name(a->dt), cu_dtype_name(b->dt), cu_dtype_name(out->dt));
    if (cond->dev != out->dev || a->dev != out->dev || b->dev != out->dev)
        return cu_fail(CH_ERR_DEVICE, "where: operands on devices %d, %d and %d, output on cuda:%d", cond->dev,
                       a->dev, b->dev, out->dev);
    if (out->numel == 0)
        return CH_OK;
    const ch_tensor *in[3] = {cond, a, b};
    static const char *names[3] = {"cond", "a", "b"};
    int64_t st[3][CH_MAX_DIMS];
    const int64_t *strides[CU_EW_MAXOPS] = {out->stride, st[0], st[1], st[2]};
    for (int k = 0; k < 3; k++)
        if (cu_broadcast_strides(in[k]->nd, in[k]->dim, in[k]->stride, out->nd, out->dim, st[k]) != 0)
            return cu_fail(CH_ERR_SHAPE, "where: %s (%d-d) does not broadcast to the output's shape", names[k],
                           in[k]->nd);
    CU_TRY(cu_use(out->dev, "where"));
    cu_ew_plan p;
    cu_ew_plan_init(&p, out->nd, out->dim, 4, strides);
    return cu_where_launch(&p, (int)cu_dtype_size(out->dt), cu_base(out), cu_base(cond), cu_base(a), cu_base(b));
}

ch_status cu_axpby(double a, const ch_tensor *x, double b, ch_tensor *y) {
    if (!alive(x) || !alive(y))
        return cu_fail(CH_ERR_ARG, "axpby: a tensor argument is NULL or has been freed");
    if ((y->dt != CH_FLOAT16 && y->dt != CH_FLOAT32 && y->dt != CH_FLOAT64) || x->dt != y->dt)
        return cu_fail(CH_ERR_DTYPE, "axpby: the GPU takes x and y of one float dtype (got %s and %s)",
                       cu_dtype_name(x->dt), cu_dtype_name(y->dt));
    if (x->dev != y->dev)
        return cu_fail(CH_ERR_DEVICE, "axpby: x on device %d, y on cuda:%d", x->dev, y->dev);
    int same = x->nd == y->nd;
    for (int i = 0; same && i < y->nd; i++)
        same = x->dim[i] == y->dim[i];
    if (!same)
        return cu_fail(CH_ERR_SHAPE, "axpby: x and y differ in shape");
    if (y->numel == 0)
        return CH_OK;
    CU_TRY(cu_use(y->dev, "axpby"));
    const int64_t *strides[2] = {y->stride, x->stride};
    cu_ew_plan p;
    cu_ew_plan_init(&p, y->nd, y->dim, 2, strides);
    return cu_axpby_launch(&p, y->dt, a, cu_base(x), b, cu_base(y));
}

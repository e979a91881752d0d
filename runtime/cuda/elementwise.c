/*
 * elementwise.c -- the elementwise kernel of the table: the front door
 * (runtime/ops/elementwise.c) has chosen the dtypes and the output; here the inputs' broadcast strides
 * and the collapsed index space are planned (plan_elementwise.c) and the
 * kernels of elementwise.cu launched on the output's device.
 *
 * Compiled and unit-tested on the planning side only: this code has not yet
 * been run on a GPU.
 */
#include "backend.h"
#include "plan.h"
#include "scalar_math.h"

#include <string.h>

ch_status cu_elementwise(const ch_ew_args *w) {
    const char *fn = w->name ? w->name : "elementwise";
    ch_tensor *out = w->out;
    if (!out || (!out->data && out->numel))
        return cu_fail(CH_ERR_ARG, "%s: the output tensor is NULL or has been freed", fn);
    if (w->nin < 1 || w->nin > 2)
        return cu_fail(CH_ERR_INTERNAL, "%s: %d inputs (expected 1 or 2)", fn, w->nin);
    if (out->numel == 0)
        return CH_OK;
    CU_TRY(cu_use(out->dev, fn));

    cu_ew_args a;
    memset(&a, 0, sizeof a);
    a.op = w->op, a.nin = w->nin, a.ct = w->ct;
    a.scalar_pos = w->scalar_pos;
    a.scalar_f = w->scalar_f, a.scalar_i = w->scalar_i;
    a.lo = w->lo, a.hi = w->hi;
    a.lo_i = ch_sat_i64(w->lo), a.hi_i = ch_sat_i64(w->hi);
    a.dt[0] = out->dt;
    a.ptr[0] = cu_base(out);

    static const int64_t zero[CH_MAX_DIMS] = {0};
    int64_t st[2][CH_MAX_DIMS];
    const int64_t *strides[CU_EW_MAXOPS] = {out->stride, zero, zero};
    for (int k = 0; k < w->nin; k++) {
        if (k == w->scalar_pos)
            continue;  /* stride 0 everywhere: never constrains merging */
        const ch_tensor *x = w->in[k];
        if (!x || (!x->data && x->numel))
            return cu_fail(CH_ERR_ARG, "%s: input %d is NULL or has been freed", fn, k + 1);
        if (x->dev != out->dev)
            return cu_fail(CH_ERR_DEVICE, "%s: input %d is on device %d but the output on cuda:%d", fn, k + 1, x->dev,
                           out->dev);
        if (cu_broadcast_strides(x->nd, x->dim, x->stride, out->nd, out->dim, st[k]) != 0)
            return cu_fail(CH_ERR_SHAPE, "%s: input %d (%d-d) does not broadcast to the output's shape", fn, k + 1,
                           x->nd);
        strides[k + 1] = st[k];
        a.dt[k + 1] = x->dt;
        a.ptr[k + 1] = cu_base(x);
    }
    cu_ew_plan p;
    cu_ew_plan_init(&p, out->nd, out->dim, 1 + w->nin, strides);
    return cu_ew_launch(fn, &p, &a);
}

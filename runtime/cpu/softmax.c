/*
 * softmax.c -- the CPU kernels of softmax and log_softmax along any axis,
 * and of their gradients (front doors: runtime/ops/softmax.c).
 *
 * The tensor is seen as (O, N, I) with N the softmax axis.  Work is cut into
 * items of one outer position and a tile of up to SM_TILE inner columns, so
 * an axis-0 softmax of a wide matrix parallelises as well as a row softmax,
 * and every column of a tile is read in one sequential sweep per pass.
 * Sums accumulate in double; each item is independent, so results do not
 * depend on the thread count.  float16 computes in float32.
 */
#include "../core/internal.h"
#include "../core/kernels.h"

#include <math.h>

#define SM_TILE 256

#define SM_T float
#define SM_NAME(n) n##_f32
#define SM_EXP expf
#define SM_LOG logf
#include "softmax_kernels.h"
#define SM_T double
#define SM_NAME(n) n##_f64
#define SM_EXP exp
#define SM_LOG log
#include "softmax_kernels.h"

ch_status ch_cpu_softmax_forward(const ch_softmax_args *s) {
    if (s->x->dt == CH_FLOAT32)
        softmax_fwd_f32((const float *)ch_base(s->x), (float *)ch_base(s->out), s->O, s->N, s->I, s->log);
    else
        softmax_fwd_f64((const double *)ch_base(s->x), (double *)ch_base(s->out), s->O, s->N, s->I, s->log);
    return CH_OK;
}

ch_status ch_cpu_softmax_backward(const ch_softmax_args *s) {
    if (s->x->dt == CH_FLOAT32)
        softmax_bwd_f32((const float *)ch_base(s->x), (const float *)ch_base(s->gy), (float *)ch_base(s->out), s->O,
                        s->N, s->I, s->log);
    else
        softmax_bwd_f64((const double *)ch_base(s->x), (const double *)ch_base(s->gy), (double *)ch_base(s->out),
                        s->O, s->N, s->I, s->log);
    return CH_OK;
}

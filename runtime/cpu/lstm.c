/* lstm.c -- Chainer's LSTM cell (F.lstm): forward, gradient and the
 * gradient's gradient, each one fused pass over the gates.
 *
 * The gates are recomputed from x in every pass instead of being stored:
 * four transcendental functions per unit cost less than a round trip of
 * 4 values through memory the size of x, and the kernels stay stateless.
 * Front doors (checks, contiguous operands, outputs): runtime/ops/lstm.c.
 */
#include "../core/internal.h"
#include "../core/kernels.h"

#include <math.h>

#include "rnn_math.h"

#define LK_T float
#define LK_NAME(n) n##_f32
#define LK_TANH rnn_tanhf
#define LK_SIG rnn_sigmoidf
#include "lstm_kernels.h"
#define LK_T double
#define LK_NAME(n) n##_f64
#define LK_TANH tanh
#define LK_SIG rnn_sigmoid
#include "lstm_kernels.h"

/* c_prev (Bc, U, *S), x (B, 4U, *S), B <= Bc. */
static void lstm_dims(const ch_tensor *c_prev, const ch_tensor *x, int64_t *B, int64_t *Bc, int64_t *U, int64_t *S) {
    *B = x->dim[0];
    *Bc = c_prev->dim[0];
    *U = c_prev->dim[1];
    *S = 1;
    for (int d = 2; d < x->nd; d++)
        *S *= x->dim[d];
}

#define P(t, T) ((t) ? (T *)ch_base(t) : NULL)

ch_status ch_cpu_lstm_forward(const ch_tensor *c_prev, const ch_tensor *x, ch_tensor *c, ch_tensor *h) {
    int64_t B, Bc, U, S;
    lstm_dims(c_prev, x, &B, &Bc, &U, &S);
    if (x->dt == CH_FLOAT32)
        lk_forward_f32(P(c_prev, const float), P(x, const float), P(c, float), P(h, float), B, Bc, U, S);
    else
        lk_forward_f64(P(c_prev, const double), P(x, const double), P(c, double), P(h, double), B, Bc, U, S);
    return CH_OK;
}

ch_status ch_cpu_lstm_backward(const ch_tensor *c_prev, const ch_tensor *x, const ch_tensor *gc, const ch_tensor *gh,
                               ch_tensor *gc_prev, ch_tensor *gx) {
    int64_t B, Bc, U, S;
    lstm_dims(c_prev, x, &B, &Bc, &U, &S);
    if (x->dt == CH_FLOAT32)
        lk_backward_f32(P(c_prev, const float), P(x, const float), P(gc, const float), P(gh, const float),
                        P(gc_prev, float), P(gx, float), B, Bc, U, S);
    else
        lk_backward_f64(P(c_prev, const double), P(x, const double), P(gc, const double), P(gh, const double),
                        P(gc_prev, double), P(gx, double), B, Bc, U, S);
    return CH_OK;
}

ch_status ch_cpu_lstm_grad_grad(const ch_tensor *c_prev, const ch_tensor *x, const ch_tensor *gc, const ch_tensor *gh,
                                const ch_tensor *ggc_prev, const ch_tensor *ggx, ch_tensor *g_c_prev, ch_tensor *g_x,
                                ch_tensor *g_gc, ch_tensor *g_gh) {
    int64_t B, Bc, U, S;
    lstm_dims(c_prev, x, &B, &Bc, &U, &S);
    if (x->dt == CH_FLOAT32)
        lk_grad_grad_f32(P(c_prev, const float), P(x, const float), P(gc, const float), P(gh, const float),
                         P(ggc_prev, const float), P(ggx, const float), P(g_c_prev, float), P(g_x, float),
                         P(g_gc, float), P(g_gh, float), B, Bc, U, S);
    else
        lk_grad_grad_f64(P(c_prev, const double), P(x, const double), P(gc, const double), P(gh, const double),
                         P(ggc_prev, const double), P(ggx, const double), P(g_c_prev, double), P(g_x, double),
                         P(g_gc, double), P(g_gh, double), B, Bc, U, S);
    return CH_OK;
}
#undef P

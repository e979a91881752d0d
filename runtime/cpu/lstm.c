/* lstm.c -- Chainer's LSTM cell (F.lstm): forward, gradient and the
 * gradient's gradient, each one fused pass over the gates.
 *
 * The gates are recomputed from x in every pass instead of being stored:
 * four transcendental functions per unit cost less than a round trip of
 * 4 values through memory the size of x, and the kernels stay stateless.
 */
#include "../core/internal.h"

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

/* Shapes: c_prev (Bc, U, *S), x (B, 4U, *S), B <= Bc. */
typedef struct lstm_geom {
    ch_dtype dt;
    int64_t B, Bc, U, S;
} lstm_geom;

static ch_status lstm_check(const char *fn, const ch_tensor *c_prev, const ch_tensor *x, lstm_geom *g) {
    char b1[CH_SHAPE_BUF], b2[CH_SHAPE_BUF];
    CH_CHECK_CPU(c_prev, fn, "c_prev");
    CH_CHECK_CPU(x, fn, "x");
    ch_dtype dt = (ch_dtype)x->dt;
    if (dt != CH_FLOAT32 && dt != CH_FLOAT64)
        return ch_fail(CH_ERR_DTYPE, "%s: x must be float32 or float64, got %s", fn, ch_dtype_name(dt));
    if (c_prev->dt != x->dt)
        return ch_fail(CH_ERR_DTYPE, "%s: c_prev is %s but x is %s (expected one dtype)", fn,
                       ch_dtype_name((ch_dtype)c_prev->dt), ch_dtype_name(dt));
    if (c_prev->nd < 2 || x->nd != c_prev->nd)
        return ch_fail(CH_ERR_SHAPE, "%s: c_prev (B, U, ...) and x (B, 4U, ...) need the same ndim >= 2, got %s and %s",
                       fn, ch_shape_str(b1, sizeof b1, c_prev->nd, c_prev->dim), ch_shape_str(b2, sizeof b2, x->nd, x->dim));
    bool ok = x->dim[1] == 4 * c_prev->dim[1] && x->dim[0] <= c_prev->dim[0];
    int64_t S = 1;
    for (int d = 2; d < x->nd; d++) {
        if (x->dim[d] != c_prev->dim[d]) ok = false;
        S *= x->dim[d];
    }
    if (!ok)
        return ch_fail(CH_ERR_SHAPE, "%s: x %s must be (B, 4U, ...) for c_prev %s (B <= c_prev's batch, same trailing axes)",
                       fn, ch_shape_str(b1, sizeof b1, x->nd, x->dim), ch_shape_str(b2, sizeof b2, c_prev->nd, c_prev->dim));
    g->dt = dt;
    g->B = x->dim[0];
    g->Bc = c_prev->dim[0];
    g->U = c_prev->dim[1];
    g->S = S;
    return CH_OK;
}

/* Optional gradient argument shaped like `like` (any layout, any float
 * dtype) -> contiguous of dtype dt, or NULL. */
static ch_status opt_arg(const char *fn, const char *arg, const ch_tensor *t, int nd, const int64_t *dim, ch_dtype dt,
                         ch_tensor **out) {
    *out = NULL;
    if (!t) return CH_OK;
    CH_CHECK_CPU(t, fn, arg);
    bool ok = t->nd == nd;
    for (int d = 0; ok && d < nd; d++) ok = t->dim[d] == dim[d];
    if (!ok) {
        char b1[CH_SHAPE_BUF], b2[CH_SHAPE_BUF];
        return ch_fail(CH_ERR_SHAPE, "%s: %s must have shape %s, got %s", fn, arg, ch_shape_str(b1, sizeof b1, nd, dim),
                       ch_shape_str(b2, sizeof b2, t->nd, t->dim));
    }
    return ch_contiguous_as(t, dt, out);
}

static void release_all(ch_tensor **ts, int n) {
    for (int i = 0; i < n; i++) ch_tensor_release(ts[i]);
}

ch_status ch_lstm_forward(const ch_tensor *c_prev, const ch_tensor *x, ch_tensor **c, ch_tensor **h) {
    const char *fn = "lstm";
    if (!c || !h) return ch_fail(CH_ERR_ARG, "lstm: result pointers must not be NULL");
    lstm_geom g;
    CH_TRY(lstm_check(fn, c_prev, x, &g));
    ch_tensor *t[4] = {NULL, NULL, NULL, NULL}; /* cpc, xc, c, h */
    ch_status st = ch_contiguous_as(c_prev, g.dt, &t[0]);
    if (st == CH_OK) st = ch_contiguous_as(x, g.dt, &t[1]);
    if (st == CH_OK) st = ch_tensor_new(g.dt, c_prev->nd, c_prev->dim, CH_CPU, &t[2]);
    if (st == CH_OK) {
        int64_t hd[CH_MAX_DIMS];
        memcpy(hd, c_prev->dim, sizeof(int64_t) * (size_t)c_prev->nd);
        hd[0] = g.B;
        st = ch_tensor_new(g.dt, c_prev->nd, hd, CH_CPU, &t[3]);
    }
    if (st != CH_OK) {
        release_all(t, 4);
        return st;
    }
    if (g.dt == CH_FLOAT32)
        lk_forward_f32((const float *)ch_base(t[0]), (const float *)ch_base(t[1]), (float *)ch_base(t[2]),
                       (float *)ch_base(t[3]), g.B, g.Bc, g.U, g.S);
    else
        lk_forward_f64((const double *)ch_base(t[0]), (const double *)ch_base(t[1]), (double *)ch_base(t[2]),
                       (double *)ch_base(t[3]), g.B, g.Bc, g.U, g.S);
    release_all(t, 2);
    *c = t[2];
    *h = t[3];
    return CH_OK;
}

ch_status ch_lstm_backward(const ch_tensor *c_prev, const ch_tensor *x, const ch_tensor *gc, const ch_tensor *gh,
                           ch_tensor **gc_prev, ch_tensor **gx) {
    const char *fn = "lstm (backward)";
    if (!gc_prev || !gx) return ch_fail(CH_ERR_ARG, "lstm (backward): result pointers must not be NULL");
    lstm_geom g;
    CH_TRY(lstm_check(fn, c_prev, x, &g));
    int64_t hd[CH_MAX_DIMS];
    memcpy(hd, c_prev->dim, sizeof(int64_t) * (size_t)c_prev->nd);
    hd[0] = g.B;
    ch_tensor *t[6] = {NULL}; /* cpc, xc, gcc, ghc, gcp, gx */
    ch_status st = ch_contiguous_as(c_prev, g.dt, &t[0]);
    if (st == CH_OK) st = ch_contiguous_as(x, g.dt, &t[1]);
    if (st == CH_OK) st = opt_arg(fn, "gc", gc, c_prev->nd, c_prev->dim, g.dt, &t[2]);
    if (st == CH_OK) st = opt_arg(fn, "gh", gh, c_prev->nd, hd, g.dt, &t[3]);
    if (st == CH_OK) st = ch_tensor_new(g.dt, c_prev->nd, c_prev->dim, CH_CPU, &t[4]);
    if (st == CH_OK) st = ch_tensor_new(g.dt, x->nd, x->dim, CH_CPU, &t[5]);
    if (st != CH_OK) {
        release_all(t, 6);
        return st;
    }
#define P(k, T) (t[k] ? (T *)ch_base(t[k]) : NULL)
    if (g.dt == CH_FLOAT32)
        lk_backward_f32(P(0, float), P(1, float), P(2, float), P(3, float), P(4, float), P(5, float), g.B, g.Bc, g.U, g.S);
    else
        lk_backward_f64(P(0, double), P(1, double), P(2, double), P(3, double), P(4, double), P(5, double), g.B, g.Bc,
                        g.U, g.S);
    release_all(t, 4);
    *gc_prev = t[4];
    *gx = t[5];
    return CH_OK;
}

ch_status ch_lstm_grad_grad(const ch_tensor *c_prev, const ch_tensor *x, const ch_tensor *gc, const ch_tensor *gh,
                            const ch_tensor *ggc_prev, const ch_tensor *ggx, ch_tensor **g_c_prev, ch_tensor **g_x,
                            ch_tensor **g_gc, ch_tensor **g_gh) {
    const char *fn = "lstm (double backward)";
    if (!g_c_prev || !g_x || !g_gc || !g_gh)
        return ch_fail(CH_ERR_ARG, "lstm (double backward): result pointers must not be NULL");
    lstm_geom g;
    CH_TRY(lstm_check(fn, c_prev, x, &g));
    int64_t hd[CH_MAX_DIMS];
    memcpy(hd, c_prev->dim, sizeof(int64_t) * (size_t)c_prev->nd);
    hd[0] = g.B;
    ch_tensor *t[10] = {NULL}; /* cpc, xc, gcc, ghc, ggcp, ggx, o_cp, o_x, o_gc, o_gh */
    ch_status st = ch_contiguous_as(c_prev, g.dt, &t[0]);
    if (st == CH_OK) st = ch_contiguous_as(x, g.dt, &t[1]);
    if (st == CH_OK) st = opt_arg(fn, "gc", gc, c_prev->nd, c_prev->dim, g.dt, &t[2]);
    if (st == CH_OK) st = opt_arg(fn, "gh", gh, c_prev->nd, hd, g.dt, &t[3]);
    if (st == CH_OK) st = opt_arg(fn, "ggc_prev", ggc_prev, c_prev->nd, c_prev->dim, g.dt, &t[4]);
    if (st == CH_OK) st = opt_arg(fn, "ggx", ggx, x->nd, x->dim, g.dt, &t[5]);
    if (st == CH_OK) st = ch_tensor_new(g.dt, c_prev->nd, c_prev->dim, CH_CPU, &t[6]);
    if (st == CH_OK) st = ch_tensor_new(g.dt, x->nd, x->dim, CH_CPU, &t[7]);
    if (st == CH_OK) st = ch_tensor_new(g.dt, c_prev->nd, c_prev->dim, CH_CPU, &t[8]);
    if (st == CH_OK) st = ch_tensor_new(g.dt, c_prev->nd, hd, CH_CPU, &t[9]);
    if (st != CH_OK) {
        release_all(t, 10);
        return st;
    }
    if (g.dt == CH_FLOAT32)
        lk_grad_grad_f32(P(0, float), P(1, float), P(2, float), P(3, float), P(4, float), P(5, float), P(6, float),
                         P(7, float), P(8, float), P(9, float), g.B, g.Bc, g.U, g.S);
    else
        lk_grad_grad_f64(P(0, double), P(1, double), P(2, double), P(3, double), P(4, double), P(5, double),
                         P(6, double), P(7, double), P(8, double), P(9, double), g.B, g.Bc, g.U, g.S);
#undef P
    release_all(t, 6);
    *g_c_prev = t[6];
    *g_x = t[7];
    *g_gc = t[8];
    *g_gh = t[9];
    return CH_OK;
}

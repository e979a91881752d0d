/* rnn_seq.c -- one layer and direction of F.n_step_rnn/lstm/gru over a
 * whole batch of variable-length sequences.
 *
 * The input projections of all steps are one GEMM (x_all @ Wx^T) before
 * the recurrence, so only the (B_t, H) x (H, G*H) recurrent product is
 * done per step; the backward gathers the gate gradients of all steps and
 * finishes with three large GEMMs (gx, gWx, gWh).  Gates live in a
 * workspace returned by the forward, so the backward recomputes nothing.
 * Front doors (checks, geometry, contiguous operands, outputs):
 * runtime/ops/rnn_seq.c.
 */
#include "../core/internal.h"
#include "../core/kernels.h"

#include "gemm.h"
#include <math.h>
#include <stdlib.h>

#include "rnn_math.h"

static inline int64_t rk_gates(int cell) { return cell == CH_RNN_LSTM ? 4 : cell == CH_RNN_GRU ? 3 : 1; }
static inline int64_t rk_ws_width(int cell, int64_t H) {
    return cell == CH_RNN_LSTM ? 7 * H : cell == CH_RNN_GRU ? 5 * H : 2 * H;
}

/* The per-step recurrent products are small ((B_t, H) x (H, G H): 3.2
 * MFLOP for the PTB model).  Split over threads they gain little on an
 * idle machine and lose badly on a busy one (each product waits for every
 * thread of the pool; measured 30x slower on a loaded 2-core VM), so below
 * this size the recurrence runs them on one thread.  The big input and
 * weight-gradient GEMMs stay threaded. */
#define RK_SERIAL_MAX_MNK ((int64_t)1 << 24)

/* Returns the thread count to restore, or 0 when nothing changed. */
static int rk_serial_begin(int64_t mnk) {
    int nt = ch_threads();
    if (nt <= 1 || mnk >= RK_SERIAL_MAX_MNK) return 0;
    openblas_set_num_threads(1);
    return nt;
}
static void rk_serial_end(int nt) {
    /* the count in use now: the busy-neighbour guard may have changed it */
    if (nt > 0) openblas_set_num_threads(ch_threads());
}

#define RK_T float
#define RK_NAME(n) n##_f32
#define RK_TANH rnn_tanhf
#define RK_SIG rnn_sigmoidf
#define RK_GEMM cblas_sgemm
#define RK_GEMM_ROWS ch_cpu_sgemm
#include "rnn_seq_kernels.h"
#define RK_T double
#define RK_NAME(n) n##_f64
#define RK_TANH tanh
#define RK_SIG rnn_sigmoid
#define RK_GEMM cblas_dgemm
#define RK_GEMM_ROWS ch_cpu_dgemm
#include "rnn_seq_kernels.h"

#define P(t, TY) ((t) ? (TY *)ch_base(t) : NULL)

ch_status ch_cpu_rnn_seq_forward(const ch_rnn_seq_args *a) {
    int cell = a->cell;
    int64_t B = a->batch[0], H = a->H, GH = rk_gates(cell) * H;
    size_t esz = ch_dtype_size((ch_dtype)a->x->dt);
    void *tmp = NULL;
    if (cell == CH_RNN_GRU) {
        tmp = malloc(esz * (size_t)(B * GH > 0 ? B * GH : 1));
        if (!tmp) return ch_fail(CH_ERR_MEMORY, "%s: out of memory", a->name);
    }
    memcpy(ch_base(a->hy), ch_base(a->h0), esz * (size_t)(B * H));
    if (cell == CH_RNN_LSTM) memcpy(ch_base(a->cy), ch_base(a->c0), esz * (size_t)(B * H));
    if (a->x->dt == CH_FLOAT32)
        rk_forward_f32(cell, a->reverse, a->T, a->batch, a->off, a->N, a->NI, H, P(a->x, const float),
                       P(a->wx, const float), P(a->wh, const float), P(a->bx, const float), P(a->bh, const float),
                       P(a->y, float), P(a->hy, float), P(a->cy, float), P(a->ws, float), tmp);
    else
        rk_forward_f64(cell, a->reverse, a->T, a->batch, a->off, a->N, a->NI, H, P(a->x, const double),
                       P(a->wx, const double), P(a->wh, const double), P(a->bx, const double), P(a->bh, const double),
                       P(a->y, double), P(a->hy, double), P(a->cy, double), P(a->ws, double), tmp);
    free(tmp);
    return CH_OK;
}

ch_status ch_cpu_rnn_seq_backward(const ch_rnn_seq_args *a) {
    int cell = a->cell;
    ch_dtype dt = (ch_dtype)a->x->dt;
    int64_t H = a->H, GH = rk_gates(cell) * H, W = rk_ws_width(cell, H), N = a->N, NI = a->NI, B = a->batch[0];
    /* scratch: the gate gradients of all steps (and GRU's recurrent ones) */
    ch_tensor *dgx_t = NULL, *dgh_t = NULL;
    int64_t dg[2] = {N, GH};
    ch_status st = ch_tensor_new(dt, 2, dg, CH_CPU, &dgx_t);
    if (st == CH_OK && cell == CH_RNN_GRU) st = ch_tensor_new(dt, 2, dg, CH_CPU, &dgh_t);
    if (st != CH_OK) {
        ch_tensor_release(dgx_t);
        return st;
    }
    /* the running state gradients become gh0/gc0 */
    size_t hb = ch_dtype_size(dt) * (size_t)(B * H);
    if (a->ghy) memcpy(ch_base(a->gh0), ch_base(a->ghy), hb);
    else memset(ch_base(a->gh0), 0, hb);
    if (a->gc0) {
        if (a->gcy) memcpy(ch_base(a->gc0), ch_base(a->gcy), hb);
        else memset(ch_base(a->gc0), 0, hb);
    }
    const ch_tensor *dgh_k = cell == CH_RNN_GRU ? dgh_t : dgx_t;
#define RUN(TY, SFX)                                                                                                \
    do {                                                                                                            \
        rk_backward_steps_##SFX(cell, a->reverse, a->T, a->batch, a->off, H, P(a->wh, const TY),                    \
                                P(a->ws_in, const TY), P(a->gy, const TY), P(a->gh0, TY), P(a->gc0, TY),            \
                                P(dgx_t, TY), P(dgh_k, TY));                                                        \
        const TY *dgx = P(dgx_t, TY), *dgh = P(dgh_k, TY);                                                          \
        if (a->gx) rk_gemm_##SFX(0, 0, N, NI, GH, dgx, GH, P(a->wx, const TY), NI, 0, P(a->gx, TY), NI);            \
        if (a->gwx) rk_gemm_##SFX(1, 0, GH, NI, N, dgx, GH, P(a->x, const TY), NI, 0, P(a->gwx, TY), NI);           \
        if (a->gwh) rk_gemm_##SFX(1, 0, GH, H, N, dgh, GH, P(a->ws_in, const TY) + (W - H), W, 0, P(a->gwh, TY), H); \
        if (a->gbx) rk_colsum_##SFX(dgx, N, GH, P(a->gbx, TY));                                                     \
        if (a->gbh) rk_colsum_##SFX(dgh, N, GH, P(a->gbh, TY));                                                     \
    } while (0)
    if (dt == CH_FLOAT32)
        RUN(float, f32);
    else
        RUN(double, f64);
#undef RUN
    ch_tensor_release(dgx_t);
    ch_tensor_release(dgh_t);
    return CH_OK;
}
#undef P

/* rnn_seq.c -- one layer and direction of F.n_step_rnn/lstm/gru over a
 * whole batch of variable-length sequences.
 *
 * The input projections of all steps are one GEMM (x_all @ Wx^T) before
 * the recurrence, so only the (B_t, H) x (H, G*H) recurrent product is
 * done per step; the backward gathers the gate gradients of all steps and
 * finishes with three large GEMMs (gx, gWx, gWh).  Gates live in a
 * workspace returned by the forward, so the backward recomputes nothing.
 */
#include "../core/internal.h"

#include <cblas.h>
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
    if (nt > 0) openblas_set_num_threads(nt);
}

#define RK_T float
#define RK_NAME(n) n##_f32
#define RK_TANH rnn_tanhf
#define RK_SIG rnn_sigmoidf
#define RK_GEMM cblas_sgemm
#include "rnn_seq_kernels.h"
#define RK_T double
#define RK_NAME(n) n##_f64
#define RK_TANH tanh
#define RK_SIG rnn_sigmoid
#define RK_GEMM cblas_dgemm
#include "rnn_seq_kernels.h"

static const char *cell_name(int cell) {
    switch (cell) {
    case CH_RNN_TANH: return "n_step_rnn";
    case CH_RNN_RELU: return "n_step_rnn";
    case CH_RNN_LSTM: return "n_step_lstm";
    case CH_RNN_GRU: return "n_step_gru";
    default: return "n_step_rnn";
    }
}

static bool has_shape(const ch_tensor *t, int nd, int64_t d0, int64_t d1) {
    return t->nd == nd && t->dim[0] == d0 && (nd < 2 || t->dim[1] == d1);
}

static ch_status shape_err(const char *fn, const char *arg, const ch_tensor *t, int nd, int64_t d0, int64_t d1) {
    char b1[CH_SHAPE_BUF], b2[CH_SHAPE_BUF];
    int64_t want[2] = {d0, d1};
    return ch_fail(CH_ERR_SHAPE, "%s: %s must have shape %s, got %s", fn, arg, ch_shape_str(b1, sizeof b1, nd, want),
                   ch_shape_str(b2, sizeof b2, t->nd, t->dim));
}

/* Checks a tensor argument's device, dtype and shape and returns it
 * contiguous (retained). */
static ch_status arg_in(const char *fn, const char *arg, const ch_tensor *t, ch_dtype dt, int nd, int64_t d0,
                        int64_t d1, ch_tensor **out) {
    CH_CHECK_CPU(t, fn, arg);
    if (t->dt != (int)dt)
        return ch_fail(CH_ERR_DTYPE, "%s: %s is %s but x is %s (expected one dtype)", fn, arg,
                       ch_dtype_name((ch_dtype)t->dt), ch_dtype_name(dt));
    if (!has_shape(t, nd, d0, d1)) return shape_err(fn, arg, t, nd, d0, d1);
    return ch_contiguous_as(t, dt, out);
}

/* Validated geometry shared by forward and backward. */
typedef struct seq_geom {
    ch_dtype dt;
    int64_t N, NI, H, B, G;
    int64_t *off;
} seq_geom;

static ch_status seq_check(const char *fn, int cell, int T, const int64_t *batch, const ch_tensor *x,
                           const ch_tensor *wx, const ch_tensor *wh, seq_geom *g) {
    if (cell < CH_RNN_TANH || cell > CH_RNN_GRU) return ch_fail(CH_ERR_ARG, "%s: unknown cell kind %d", fn, cell);
    if (T < 1 || !batch) return ch_fail(CH_ERR_ARG, "%s: xs must hold at least one step", fn);
    CH_CHECK_CPU(x, fn, "x");
    CH_CHECK_CPU(wx, fn, "wx");
    CH_CHECK_CPU(wh, fn, "wh");
    ch_dtype dt = (ch_dtype)x->dt;
    if (dt != CH_FLOAT32 && dt != CH_FLOAT64)
        return ch_fail(CH_ERR_DTYPE, "%s: xs must be float32 or float64, got %s", fn, ch_dtype_name(dt));
    if (x->nd != 2) return ch_fail(CH_ERR_SHAPE, "%s: x must be 2-d (N, in_size), got %d-d", fn, x->nd);
    if (wh->nd != 2) return ch_fail(CH_ERR_SHAPE, "%s: wh must be 2-d, got %d-d", fn, wh->nd);
    int64_t G = rk_gates(cell), H = wh->dim[1];
    if (wh->dim[0] != G * H) return shape_err(fn, "wh", wh, 2, G * H, H);
    int64_t N = 0;
    for (int t = 0; t < T; t++) {
        if (batch[t] < 0 || (t > 0 && batch[t] > batch[t - 1]))
            return ch_fail(CH_ERR_SHAPE, "%s: batch sizes must not grow along the sequence (step %d has %lld rows, "
                           "step %d has %lld); sort the sequences by length, longest first", fn, t,
                           (long long)batch[t], t - 1, (long long)(t > 0 ? batch[t - 1] : 0));
        N += batch[t];
    }
    if (x->dim[0] != N)
        return ch_fail(CH_ERR_SHAPE, "%s: x has %lld rows but the batch sizes add up to %lld", fn,
                       (long long)x->dim[0], (long long)N);
    int64_t NI = x->dim[1];
    if (!has_shape(wx, 2, G * H, NI)) return shape_err(fn, "wx", wx, 2, G * H, NI);
    g->off = malloc(sizeof(int64_t) * (size_t)T);
    if (!g->off) return ch_fail(CH_ERR_MEMORY, "%s: out of memory", fn);
    int64_t o = 0;
    for (int t = 0; t < T; t++) {
        g->off[t] = o;
        o += batch[t];
    }
    g->dt = dt, g->N = N, g->NI = NI, g->H = H, g->B = batch[0], g->G = G;
    return CH_OK;
}

static void release_all(ch_tensor **ts, int n) {
    for (int i = 0; i < n; i++) ch_tensor_release(ts[i]);
}

ch_status ch_rnn_seq_forward(ch_rnn_cell cell, int reverse, int T, const int64_t *batch, const ch_tensor *x,
                             const ch_tensor *h0, const ch_tensor *c0, const ch_tensor *wx, const ch_tensor *wh,
                             const ch_tensor *bx, const ch_tensor *bh, ch_tensor **y, ch_tensor **hy, ch_tensor **cy,
                             ch_tensor **ws) {
    const char *fn = cell_name(cell);
    if (!y || !hy || !ws || (cell == CH_RNN_LSTM && !cy))
        return ch_fail(CH_ERR_ARG, "%s: result pointers must not be NULL", fn);
    seq_geom g;
    CH_TRY(seq_check(fn, cell, T, batch, x, wx, wh, &g));
    int64_t GH = g.G * g.H, W = rk_ws_width(cell, g.H);
    enum { XC, WXC, WHC, BXC, BHC, H0C, C0C, Y, HY, CY, WS, NT };
    ch_tensor *t[NT] = {NULL};
    ch_status st = ch_contiguous_as(x, g.dt, &t[XC]);
    if (st == CH_OK) st = ch_contiguous_as(wx, g.dt, &t[WXC]);
    if (st == CH_OK) st = arg_in(fn, "wh", wh, g.dt, 2, GH, g.H, &t[WHC]);
    if (st == CH_OK) st = arg_in(fn, "bx", bx, g.dt, 1, GH, 0, &t[BXC]);
    if (st == CH_OK) st = arg_in(fn, "bh", bh, g.dt, 1, GH, 0, &t[BHC]);
    if (st == CH_OK) st = arg_in(fn, "hx", h0, g.dt, 2, g.B, g.H, &t[H0C]);
    if (st == CH_OK && cell == CH_RNN_LSTM) st = arg_in(fn, "cx", c0, g.dt, 2, g.B, g.H, &t[C0C]);
    int64_t dy[2] = {g.N, g.H}, dh[2] = {g.B, g.H}, dw[2] = {g.N, W};
    if (st == CH_OK) st = ch_tensor_new(g.dt, 2, dy, CH_CPU, &t[Y]);
    if (st == CH_OK) st = ch_tensor_new(g.dt, 2, dh, CH_CPU, &t[HY]);
    if (st == CH_OK && cell == CH_RNN_LSTM) st = ch_tensor_new(g.dt, 2, dh, CH_CPU, &t[CY]);
    if (st == CH_OK) st = ch_tensor_new(g.dt, 2, dw, CH_CPU, &t[WS]);
    size_t esz = ch_dtype_size(g.dt);
    void *tmp = NULL;
    if (st == CH_OK && cell == CH_RNN_GRU) {
        tmp = malloc(esz * (size_t)(g.B * GH > 0 ? g.B * GH : 1));
        if (!tmp) st = ch_fail(CH_ERR_MEMORY, "%s: out of memory", fn);
    }
    if (st != CH_OK) {
        free(g.off);
        release_all(t, NT);
        return st;
    }
    memcpy(ch_base(t[HY]), ch_base(t[H0C]), esz * (size_t)(g.B * g.H));
    if (cell == CH_RNN_LSTM) memcpy(ch_base(t[CY]), ch_base(t[C0C]), esz * (size_t)(g.B * g.H));
#define P(k, TY) (t[k] ? (TY *)ch_base(t[k]) : NULL)
    if (g.dt == CH_FLOAT32)
        rk_forward_f32(cell, reverse, T, batch, g.off, g.N, g.NI, g.H, P(XC, float), P(WXC, float), P(WHC, float),
                       P(BXC, float), P(BHC, float), P(Y, float), P(HY, float), P(CY, float), P(WS, float), tmp);
    else
        rk_forward_f64(cell, reverse, T, batch, g.off, g.N, g.NI, g.H, P(XC, double), P(WXC, double), P(WHC, double),
                       P(BXC, double), P(BHC, double), P(Y, double), P(HY, double), P(CY, double), P(WS, double), tmp);
#undef P
    free(tmp);
    free(g.off);
    release_all(t, Y);
    *y = t[Y];
    *hy = t[HY];
    if (cy) *cy = t[CY];
    *ws = t[WS];
    return CH_OK;
}

ch_status ch_rnn_seq_backward(ch_rnn_cell cell, int reverse, int T, const int64_t *batch, const ch_tensor *x,
                              const ch_tensor *wx, const ch_tensor *wh, const ch_tensor *ws, const ch_tensor *gy,
                              const ch_tensor *ghy, const ch_tensor *gcy, ch_tensor **gx, ch_tensor **gh0,
                              ch_tensor **gc0, ch_tensor **gwx, ch_tensor **gwh, ch_tensor **gbx, ch_tensor **gbh) {
    const char *fn = cell_name(cell);
    seq_geom g;
    CH_TRY(seq_check(fn, cell, T, batch, x, wx, wh, &g));
    int64_t GH = g.G * g.H, W = rk_ws_width(cell, g.H), N = g.N, H = g.H, NI = g.NI;
    enum { XC, WXC, WHC, WSC, GYC, GHYC, GCYC, DGX, DGH, GX, GH0, GC0, GWX, GWH, GBX, GBH, NT };
    ch_tensor *t[NT] = {NULL};
    ch_status st = ch_contiguous_as(x, g.dt, &t[XC]);
    if (st == CH_OK) st = ch_contiguous_as(wx, g.dt, &t[WXC]);
    if (st == CH_OK) st = arg_in(fn, "wh", wh, g.dt, 2, GH, H, &t[WHC]);
    if (st == CH_OK) st = arg_in(fn, "workspace", ws, g.dt, 2, N, W, &t[WSC]);
    if (st == CH_OK && gy) st = arg_in(fn, "gy", gy, g.dt, 2, N, H, &t[GYC]);
    if (st == CH_OK && ghy) st = arg_in(fn, "ghy", ghy, g.dt, 2, g.B, H, &t[GHYC]);
    if (st == CH_OK && gcy && cell == CH_RNN_LSTM) st = arg_in(fn, "gcy", gcy, g.dt, 2, g.B, H, &t[GCYC]);
    int64_t dg[2] = {N, GH}, dh[2] = {g.B, H};
    if (st == CH_OK) st = ch_tensor_new(g.dt, 2, dg, CH_CPU, &t[DGX]);
    if (st == CH_OK && cell == CH_RNN_GRU) st = ch_tensor_new(g.dt, 2, dg, CH_CPU, &t[DGH]);
    /* the running state gradients become gh0/gc0 */
    if (st == CH_OK) st = ch_tensor_new(g.dt, 2, dh, CH_CPU, &t[GH0]);
    if (st == CH_OK && cell == CH_RNN_LSTM) st = ch_tensor_new(g.dt, 2, dh, CH_CPU, &t[GC0]);
    if (st == CH_OK && gx) st = ch_tensor_new(g.dt, 2, x->dim, CH_CPU, &t[GX]);
    if (st == CH_OK && gwx) st = ch_tensor_new(g.dt, 2, wx->dim, CH_CPU, &t[GWX]);
    if (st == CH_OK && gwh) st = ch_tensor_new(g.dt, 2, wh->dim, CH_CPU, &t[GWH]);
    if (st == CH_OK && gbx) st = ch_tensor_new(g.dt, 1, &GH, CH_CPU, &t[GBX]);
    if (st == CH_OK && gbh) st = ch_tensor_new(g.dt, 1, &GH, CH_CPU, &t[GBH]);
    if (st != CH_OK) {
        free(g.off);
        release_all(t, NT);
        return st;
    }
    size_t esz = ch_dtype_size(g.dt), hb = esz * (size_t)(g.B * H);
    if (t[GHYC]) memcpy(ch_base(t[GH0]), ch_base(t[GHYC]), hb);
    else memset(ch_base(t[GH0]), 0, hb);
    if (t[GC0]) {
        if (t[GCYC]) memcpy(ch_base(t[GC0]), ch_base(t[GCYC]), hb);
        else memset(ch_base(t[GC0]), 0, hb);
    }
    int dgh_k = cell == CH_RNN_GRU ? DGH : DGX;
#define P(k, TY) (t[k] ? (TY *)ch_base(t[k]) : NULL)
#define RUN(TY, SFX)                                                                                                \
    do {                                                                                                            \
        rk_backward_steps_##SFX(cell, reverse, T, batch, g.off, H, P(WHC, TY), P(WSC, TY), P(GYC, TY), P(GH0, TY),  \
                                P(GC0, TY), P(DGX, TY), P(dgh_k, TY));                                              \
        const TY *dgx = P(DGX, TY), *dgh = P(dgh_k, TY);                                                            \
        if (t[GX]) rk_gemm_##SFX(0, 0, N, NI, GH, dgx, GH, P(WXC, TY), NI, 0, P(GX, TY), NI);                          \
        if (t[GWX]) rk_gemm_##SFX(1, 0, GH, NI, N, dgx, GH, P(XC, TY), NI, 0, P(GWX, TY), NI);                         \
        if (t[GWH]) rk_gemm_##SFX(1, 0, GH, H, N, dgh, GH, P(WSC, TY) + (W - H), W, 0, P(GWH, TY), H);              \
        if (t[GBX]) rk_colsum_##SFX(dgx, N, GH, P(GBX, TY));                                                        \
        if (t[GBH]) rk_colsum_##SFX(dgh, N, GH, P(GBH, TY));                                                        \
    } while (0)
    if (g.dt == CH_FLOAT32)
        RUN(float, f32);
    else
        RUN(double, f64);
#undef RUN
#undef P
    free(g.off);
    release_all(t, GX);
    if (gh0) *gh0 = t[GH0];
    else ch_tensor_release(t[GH0]);
    if (gc0) *gc0 = t[GC0];
    else ch_tensor_release(t[GC0]);
    if (gx) *gx = t[GX];
    if (gwx) *gwx = t[GWX];
    if (gwh) *gwh = t[GWH];
    if (gbx) *gbx = t[GBX];
    if (gbh) *gbh = t[GBH];
    return CH_OK;
}

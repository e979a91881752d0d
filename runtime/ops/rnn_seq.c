/*
 * rnn_seq.c -- front doors of one layer and direction of
 * F.n_step_rnn/lstm/gru over a whole batch of variable-length sequences
 * (kernels: runtime/cpu/rnn_seq.c).  They check the arguments, work out
 * the row offsets of the steps, make the operands contiguous and allocate
 * the outputs (and the forward's gate workspace) on x's device.
 */
#include "prologue.h"

#include <stdlib.h>

static inline int64_t rk_gates(int cell) { return cell == CH_RNN_LSTM ? 4 : cell == CH_RNN_GRU ? 3 : 1; }
static inline int64_t rk_ws_width(int cell, int64_t H) {
    return cell == CH_RNN_LSTM ? 7 * H : cell == CH_RNN_GRU ? 5 * H : 2 * H;
}

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

/* Checks a tensor argument's device (x's), dtype and shape and returns it
 * contiguous (retained). */
static ch_status arg_in(const char *fn, const char *arg, const ch_tensor *t, const ch_tensor *x, int nd, int64_t d0,
                        int64_t d1, ch_tensor **out) {
    ch_dtype dt = (ch_dtype)x->dt;
    CH_CHECK_ARG(t, fn, arg);
    CH_TRY(ch_same_device(fn, "x", x, arg, t));
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
    CH_CHECK_ARG(x, fn, "x");
    CH_CHECK_ARG(wx, fn, "wx");
    CH_CHECK_ARG(wh, fn, "wh");
    CH_TRY(ch_same_device(fn, "x", x, "wx", wx));
    CH_TRY(ch_same_device(fn, "x", x, "wh", wh));
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

static void args_init(ch_rnn_seq_args *a, const char *fn, int cell, int reverse, int T, const int64_t *batch,
                      const seq_geom *g) {
    memset(a, 0, sizeof *a);
    a->name = fn;
    a->cell = cell;
    a->reverse = reverse;
    a->T = T;
    a->batch = batch;
    a->off = g->off;
    a->N = g->N;
    a->NI = g->NI;
    a->H = g->H;
}

/* The end of both passes: t[0, n_in) are the contiguous inputs, released
 * here, and t[n_in, n) the outputs, released too on failure; g's offsets
 * are freed.  Returns st. */
static ch_status finish(ch_status st, seq_geom *g, ch_tensor **t, int n_in, int n) {
    free(g->off);
    ch_release_all(t, st == CH_OK ? n_in : n);
    return st;
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
    ch_rnn_seq_forward_kernel *kernel = ch_kernels(x->dev)->rnn_seq_forward;
    if (!kernel) {
        free(g.off);
        return ch_no_kernel(fn, x->dev);
    }
    int64_t GH = g.G * g.H, W = rk_ws_width(cell, g.H);
    enum { XC, WXC, WHC, BXC, BHC, H0C, C0C, Y, HY, CY, WS, NT };
    ch_tensor *t[NT] = {NULL};
    ch_status st = ch_contiguous_as(x, g.dt, &t[XC]);
    if (st == CH_OK) st = ch_contiguous_as(wx, g.dt, &t[WXC]);
    if (st == CH_OK) st = arg_in(fn, "wh", wh, x, 2, GH, g.H, &t[WHC]);
    if (st == CH_OK) st = arg_in(fn, "bx", bx, x, 1, GH, 0, &t[BXC]);
    if (st == CH_OK) st = arg_in(fn, "bh", bh, x, 1, GH, 0, &t[BHC]);
    if (st == CH_OK) st = arg_in(fn, "hx", h0, x, 2, g.B, g.H, &t[H0C]);
    if (st == CH_OK && cell == CH_RNN_LSTM) st = arg_in(fn, "cx", c0, x, 2, g.B, g.H, &t[C0C]);
    int64_t dy[2] = {g.N, g.H}, dh[2] = {g.B, g.H}, dw[2] = {g.N, W};
    if (st == CH_OK) st = ch_tensor_new(g.dt, 2, dy, x->dev, &t[Y]);
    if (st == CH_OK) st = ch_tensor_new(g.dt, 2, dh, x->dev, &t[HY]);
    if (st == CH_OK && cell == CH_RNN_LSTM) st = ch_tensor_new(g.dt, 2, dh, x->dev, &t[CY]);
    if (st == CH_OK) st = ch_tensor_new(g.dt, 2, dw, x->dev, &t[WS]);
    if (st == CH_OK) {
        ch_rnn_seq_args a;
        args_init(&a, fn, cell, reverse, T, batch, &g);
        a.x = t[XC], a.wx = t[WXC], a.wh = t[WHC], a.bx = t[BXC], a.bh = t[BHC], a.h0 = t[H0C], a.c0 = t[C0C];
        a.y = t[Y], a.hy = t[HY], a.cy = t[CY], a.ws = t[WS];
        st = kernel(&a);
    }
    CH_TRY(finish(st, &g, t, Y, NT));
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
    ch_rnn_seq_backward_kernel *kernel = ch_kernels(x->dev)->rnn_seq_backward;
    if (!kernel) {
        free(g.off);
        return ch_no_kernel(fn, x->dev);
    }
    int64_t GH = g.G * g.H, W = rk_ws_width(cell, g.H), N = g.N, H = g.H;
    enum { XC, WXC, WHC, WSC, GYC, GHYC, GCYC, GX, GH0, GC0, GWX, GWH, GBX, GBH, NT };
    ch_tensor *t[NT] = {NULL};
    ch_status st = ch_contiguous_as(x, g.dt, &t[XC]);
    if (st == CH_OK) st = ch_contiguous_as(wx, g.dt, &t[WXC]);
    if (st == CH_OK) st = arg_in(fn, "wh", wh, x, 2, GH, H, &t[WHC]);
    if (st == CH_OK) st = arg_in(fn, "workspace", ws, x, 2, N, W, &t[WSC]);
    if (st == CH_OK && gy) st = arg_in(fn, "gy", gy, x, 2, N, H, &t[GYC]);
    if (st == CH_OK && ghy) st = arg_in(fn, "ghy", ghy, x, 2, g.B, H, &t[GHYC]);
    if (st == CH_OK && gcy && cell == CH_RNN_LSTM) st = arg_in(fn, "gcy", gcy, x, 2, g.B, H, &t[GCYC]);
    int64_t dh[2] = {g.B, H};
    /* the kernel runs the state gradients in gh0/gc0: made even when unwanted */
    if (st == CH_OK) st = ch_tensor_new(g.dt, 2, dh, x->dev, &t[GH0]);
    if (st == CH_OK && cell == CH_RNN_LSTM) st = ch_tensor_new(g.dt, 2, dh, x->dev, &t[GC0]);
    if (st == CH_OK && gx) st = ch_tensor_new(g.dt, 2, x->dim, x->dev, &t[GX]);
    if (st == CH_OK && gwx) st = ch_tensor_new(g.dt, 2, wx->dim, x->dev, &t[GWX]);
    if (st == CH_OK && gwh) st = ch_tensor_new(g.dt, 2, wh->dim, x->dev, &t[GWH]);
    if (st == CH_OK && gbx) st = ch_tensor_new(g.dt, 1, &GH, x->dev, &t[GBX]);
    if (st == CH_OK && gbh) st = ch_tensor_new(g.dt, 1, &GH, x->dev, &t[GBH]);
    if (st == CH_OK) {
        ch_rnn_seq_args a;
        args_init(&a, fn, cell, reverse, T, batch, &g);
        a.x = t[XC], a.wx = t[WXC], a.wh = t[WHC], a.ws_in = t[WSC], a.gy = t[GYC], a.ghy = t[GHYC], a.gcy = t[GCYC];
        a.gx = t[GX], a.gh0 = t[GH0], a.gc0 = t[GC0], a.gwx = t[GWX], a.gwh = t[GWH], a.gbx = t[GBX], a.gbh = t[GBH];
        st = kernel(&a);
    }
    CH_TRY(finish(st, &g, t, GX, NT));
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

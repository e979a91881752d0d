/*
 * rnn_seq_kernels.h -- typed whole-sequence RNN/LSTM/GRU layers, included
 * by rnn_seq.c once per element type with RK_T, RK_NAME, RK_TANH, RK_SIG,
 * RK_GEMM (small per-step products) and RK_GEMM_ROWS (the whole-sequence ones,
 * cpu/gemm.h).
 *
 * Workspace rows (one per row of x), RK_WS(cell, H) wide:
 *   LSTM  [a i f o] activated gates (4H) | tanh(c) (H) | c_prev (H) | h_prev (H)
 *   GRU   [r z h~] activated (3H) | Wh_h h + bh_h (H) | h_prev (H)
 *   RNN   y (H) | h_prev (H)
 * h_prev is kept so that the recurrent weight gradient is one GEMM over
 * all steps in the backward.
 */

/* C (M, Nn) = alpha A B + beta C, row-major, with A/B optionally transposed. */
static inline void RK_NAME(rk_gemm)(int ta, int tb, int64_t M, int64_t Nn, int64_t K, const RK_T *A, int64_t lda,
                                    const RK_T *Bm, int64_t ldb, RK_T beta, RK_T *Cm, int64_t ldc) {
    if (M <= 0 || Nn <= 0) return;
    if (K <= 0) {
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < Nn; j++) Cm[i * ldc + j] = beta == 0 ? 0 : beta * Cm[i * ldc + j];
        return;
    }
    if (M * Nn * K >= RK_SERIAL_MAX_MNK) {
        /* the whole-sequence products (input projection, gx, gWx, gWh):
         * chainlua's row-blocked threads, not OpenBLAS's, whose spin-waits
         * stall on a descheduled worker when a neighbour keeps a core busy */
        RK_GEMM_ROWS(ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, M, Nn, K, 1, A, lda, Bm, ldb, beta, Cm,
                     ldc);
        return;
    }
    RK_GEMM(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (blasint)M, (blasint)Nn,
            (blasint)K, (RK_T)1, A, (blasint)lda, Bm, (blasint)ldb, beta, Cm, (blasint)ldc);
}

/* One row of a step, gate pointers split so that the loops vectorise. */
static void RK_NAME(rk_lstm_row)(RK_T *restrict ga, RK_T *restrict gi, RK_T *restrict gf, RK_T *restrict go,
                                 RK_T *restrict gco, RK_T *restrict cp, RK_T *restrict c, RK_T *restrict h,
                                 RK_T *restrict y, int64_t H) {
    for (int64_t j = 0; j < H; j++) {
        RK_T a = RK_TANH(ga[j]), i = RK_SIG(gi[j]), f = RK_SIG(gf[j]), o = RK_SIG(go[j]);
        RK_T cpv = c[j];
        RK_T cv = a * i + f * cpv;
        RK_T co = RK_TANH(cv);
        ga[j] = a, gi[j] = i, gf[j] = f, go[j] = o, gco[j] = co;
        cp[j] = cpv;
        c[j] = cv;
        RK_T hv = o * co;
        h[j] = hv;
        y[j] = hv;
    }
}

static void RK_NAME(rk_gru_row)(RK_T *restrict gr, RK_T *restrict gz, RK_T *restrict gh, RK_T *restrict ghh,
                                const RK_T *restrict q, const RK_T *restrict bh, RK_T *restrict h,
                                RK_T *restrict y, int64_t H) {
    for (int64_t j = 0; j < H; j++) {
        RK_T r = RK_SIG(gr[j] + q[j] + bh[j]);
        RK_T z = RK_SIG(gz[j] + q[H + j] + bh[H + j]);
        RK_T hh = q[2 * H + j] + bh[2 * H + j];
        RK_T hbar = RK_TANH(gh[j] + r * hh);
        gr[j] = r, gz[j] = z, gh[j] = hbar, ghh[j] = hh;
        RK_T hv = (1 - z) * hbar + z * h[j];
        h[j] = hv;
        y[j] = hv;
    }
}

static void RK_NAME(rk_rnn_row)(int relu, RK_T *restrict g, RK_T *restrict h, RK_T *restrict y, int64_t H) {
    if (relu) {
        for (int64_t j = 0; j < H; j++) {
            RK_T v = g[j] > 0 ? g[j] : 0;
            g[j] = v, h[j] = v, y[j] = v;
        }
    } else {
        for (int64_t j = 0; j < H; j++) {
            RK_T v = RK_TANH(g[j]);
            g[j] = v, h[j] = v, y[j] = v;
        }
    }
}

static void RK_NAME(rk_lstm_row_back)(const RK_T *restrict ga, const RK_T *restrict gi, const RK_T *restrict gf,
                                      const RK_T *restrict go, const RK_T *restrict gco, const RK_T *restrict cp,
                                      const RK_T *restrict gyv, RK_T *restrict gh, RK_T *restrict gc,
                                      RK_T *restrict da, RK_T *restrict di, RK_T *restrict df, RK_T *restrict dO,
                                      int64_t H) {
    for (int64_t j = 0; j < H; j++) {
        RK_T a = ga[j], i = gi[j], f = gf[j], o = go[j], co = gco[j];
        RK_T ghv = gh[j] + (gyv ? gyv[j] : 0);
        RK_T gt = ghv * o * (1 - co * co) + gc[j];
        da[j] = gt * i * (1 - a * a);
        di[j] = gt * a * i * (1 - i);
        df[j] = gt * cp[j] * f * (1 - f);
        dO[j] = ghv * co * o * (1 - o);
        gc[j] = gt * f;
    }
}

static void RK_NAME(rk_gru_row_back)(const RK_T *restrict g, const RK_T *restrict gyv, RK_T *restrict gh,
                                     RK_T *restrict dx, RK_T *restrict dh, int64_t H) {
    const RK_T *gr = g, *gz = g + H, *ghb = g + 2 * H, *ghh = g + 3 * H, *hp = g + 4 * H;
    for (int64_t j = 0; j < H; j++) {
        RK_T r = gr[j], z = gz[j], hbar = ghb[j], hh = ghh[j];
        RK_T gv = gh[j] + (gyv ? gyv[j] : 0);
        RK_T dpre_h = gv * (1 - z) * (1 - hbar * hbar);
        RK_T dpre_z = gv * (hp[j] - hbar) * z * (1 - z);
        RK_T dpre_r = dpre_h * hh * r * (1 - r);
        dx[j] = dpre_r, dx[H + j] = dpre_z, dx[2 * H + j] = dpre_h;
        dh[j] = dpre_r, dh[H + j] = dpre_z, dh[2 * H + j] = dpre_h * r;
        gh[j] = gv * z; /* the direct path; the step's GEMM adds the rest */
    }
}

static void RK_NAME(rk_rnn_row_back)(int relu, const RK_T *restrict yv, const RK_T *restrict gyv,
                                     const RK_T *restrict gh, RK_T *restrict dx, int64_t H) {
    for (int64_t j = 0; j < H; j++) {
        RK_T gv = gh[j] + (gyv ? gyv[j] : 0), v = yv[j];
        dx[j] = relu ? (v > 0 ? gv : 0) : gv * (1 - v * v);
    }
}

/* h, c (B, H) enter holding h0, c0 and leave holding hy, cy.  tmp: B x 3H
 * (GRU). */
static void RK_NAME(rk_forward)(int cell, int reverse, int T, const int64_t *batch, const int64_t *off, int64_t N,
                                int64_t NI, int64_t H, const RK_T *x, const RK_T *wx, const RK_T *wh, const RK_T *bx,
                                const RK_T *bh, RK_T *y, RK_T *h, RK_T *c, RK_T *ws, RK_T *tmp) {
    int64_t G = rk_gates(cell), GH = G * H, W = rk_ws_width(cell, H);
    int64_t hp = W - H; /* h_prev column */
    /* the input projections of all steps at once */
    RK_NAME(rk_gemm)(0, 1, N, GH, NI, x, NI, wx, NI, 0, ws, W);
    for (int64_t r = 0; r < N; r++) {
        RK_T *g = ws + r * W;
        if (cell == CH_RNN_GRU)
            for (int64_t j = 0; j < GH; j++) g[j] += bx[j];
        else
            for (int64_t j = 0; j < GH; j++) g[j] += bx[j] + bh[j];
    }
    int nt = rk_serial_begin(batch[0] * GH * H);
    for (int k = 0; k < T; k++) {
        int t = reverse ? T - 1 - k : k;
        int64_t Bt = batch[t], o = off[t];
        if (Bt == 0) continue;
        RK_T *wsr = ws + o * W;
        for (int64_t b = 0; b < Bt; b++) memcpy(wsr + b * W + hp, h + b * H, sizeof(RK_T) * (size_t)H);
        if (cell == CH_RNN_GRU)
            RK_NAME(rk_gemm)(0, 1, Bt, GH, H, h, H, wh, H, 0, tmp, GH);
        else
            RK_NAME(rk_gemm)(0, 1, Bt, GH, H, h, H, wh, H, 1, wsr, W);
        for (int64_t b = 0; b < Bt; b++) {
            RK_T *g = wsr + b * W, *hb = h + b * H, *yb = y + (o + b) * H;
            if (cell == CH_RNN_LSTM)
                RK_NAME(rk_lstm_row)(g, g + H, g + 2 * H, g + 3 * H, g + 4 * H, g + 5 * H, c + b * H, hb, yb, H);
            else if (cell == CH_RNN_GRU)
                RK_NAME(rk_gru_row)(g, g + H, g + 2 * H, g + 3 * H, tmp + b * GH, bh, hb, yb, H);
            else
                RK_NAME(rk_rnn_row)(cell == CH_RNN_RELU, g, hb, yb, H);
        }
    }
    rk_serial_end(nt);
}

/* gh, gc (B, H) enter holding ghy, gcy and leave holding gh0, gc0.  dgx
 * (N, GH) and dgh (N, GH; may alias dgx but for GRU) get the gate
 * pre-activation gradients. */
static void RK_NAME(rk_backward_steps)(int cell, int reverse, int T, const int64_t *batch, const int64_t *off,
                                       int64_t H, const RK_T *wh, const RK_T *ws, const RK_T *gy, RK_T *gh, RK_T *gc,
                                       RK_T *dgx, RK_T *dgh) {
    int64_t G = rk_gates(cell), GH = G * H, W = rk_ws_width(cell, H);
    int nt = rk_serial_begin(batch[0] * GH * H);
    for (int k = 0; k < T; k++) {
        int t = reverse ? k : T - 1 - k;
        int64_t Bt = batch[t], o = off[t];
        if (Bt == 0) continue;
        for (int64_t b = 0; b < Bt; b++) {
            const RK_T *g = ws + (o + b) * W, *gyb = gy ? gy + (o + b) * H : NULL;
            RK_T *ghb = gh + b * H, *dx = dgx + (o + b) * GH, *dh = dgh + (o + b) * GH;
            if (cell == CH_RNN_LSTM)
                RK_NAME(rk_lstm_row_back)(g, g + H, g + 2 * H, g + 3 * H, g + 4 * H, g + 5 * H, gyb, ghb, gc + b * H,
                                          dx, dx + H, dx + 2 * H, dx + 3 * H, H);
            else if (cell == CH_RNN_GRU)
                RK_NAME(rk_gru_row_back)(g, gyb, ghb, dx, dh, H);
            else
                RK_NAME(rk_rnn_row_back)(cell == CH_RNN_RELU, g, gyb, ghb, dx, H);
        }
        RK_NAME(rk_gemm)(0, 0, Bt, H, GH, dgh + o * GH, GH, wh, H, cell == CH_RNN_GRU ? 1 : 0, gh, H);
    }
    rk_serial_end(nt);
}

/* Column sums of a (N, GH) matrix in double, rows in order (no dependence
 * on the thread count). */
static void RK_NAME(rk_colsum)(const RK_T *a, int64_t N, int64_t GH, RK_T *out) {
    double *acc = calloc((size_t)(GH > 0 ? GH : 1), sizeof(double));
    if (!acc) {
        for (int64_t j = 0; j < GH; j++) {
            double s = 0;
            for (int64_t r = 0; r < N; r++) s += a[r * GH + j];
            out[j] = (RK_T)s;
        }
        return;
    }
    for (int64_t r = 0; r < N; r++)
        for (int64_t j = 0; j < GH; j++) acc[j] += a[r * GH + j];
    for (int64_t j = 0; j < GH; j++) out[j] = (RK_T)acc[j];
    free(acc);
}

#undef RK_T
#undef RK_NAME
#undef RK_TANH
#undef RK_SIG
#undef RK_GEMM
#undef RK_GEMM_ROWS

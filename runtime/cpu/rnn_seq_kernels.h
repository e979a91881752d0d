/*
 * rnn_seq_kernels.h -- typed whole-sequence RNN/LSTM/GRU layers, included
 * by rnn_seq.c once per element type with RK_T, RK_NAME, RK_TANH, RK_GEMM.
 *
 * Workspace rows (one per row of x), RK_WS(cell, H) wide:
 *   LSTM  [a i f o] activated gates (4H) | c (H) | c_prev (H) | h_prev (H)
 *   GRU   [r z h~] activated (3H) | Wh_h h + bh_h (H) | h_prev (H)
 *   RNN   y (H) | h_prev (H)
 * h_prev is kept so that the recurrent weight gradient is one GEMM over
 * all steps in the backward.
 */

static inline RK_T RK_NAME(rk_sig)(RK_T x) { return (RK_T)0.5 * RK_TANH((RK_T)0.5 * x) + (RK_T)0.5; }

/* C (M, Nn) = alpha A B + beta C, row-major, with A/B optionally transposed. */
static inline void RK_NAME(rk_gemm)(int ta, int tb, int64_t M, int64_t Nn, int64_t K, const RK_T *A, int64_t lda,
                                    const RK_T *Bm, int64_t ldb, RK_T beta, RK_T *Cm, int64_t ldc) {
    if (M <= 0 || Nn <= 0) return;
    if (K <= 0) {
        for (int64_t i = 0; i < M; i++)
            for (int64_t j = 0; j < Nn; j++) Cm[i * ldc + j] = beta == 0 ? 0 : beta * Cm[i * ldc + j];
        return;
    }
    RK_GEMM(CblasRowMajor, ta ? CblasTrans : CblasNoTrans, tb ? CblasTrans : CblasNoTrans, (blasint)M, (blasint)Nn,
            (blasint)K, (RK_T)1, A, (blasint)lda, Bm, (blasint)ldb, beta, Cm, (blasint)ldc);
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
    for (int k = 0; k < T; k++) {
        int t = reverse ? T - 1 - k : k;
        int64_t Bt = batch[t], o = off[t];
        if (Bt == 0) continue;
        RK_T *wsr = ws + o * W;
        for (int64_t b = 0; b < Bt; b++) {
            memcpy(wsr + b * W + hp, h + b * H, sizeof(RK_T) * (size_t)H);
            if (cell == CH_RNN_LSTM) memcpy(wsr + b * W + 5 * H, c + b * H, sizeof(RK_T) * (size_t)H);
        }
        if (cell == CH_RNN_GRU) {
            RK_NAME(rk_gemm)(0, 1, Bt, GH, H, h, H, wh, H, 0, tmp, GH);
        } else {
            RK_NAME(rk_gemm)(0, 1, Bt, GH, H, h, H, wh, H, 1, wsr, W);
        }
        for (int64_t b = 0; b < Bt; b++) {
            RK_T *g = wsr + b * W, *hb = h + b * H, *yb = y + (o + b) * H;
            if (cell == CH_RNN_LSTM) {
                RK_T *cb = c + b * H;
                for (int64_t j = 0; j < H; j++) {
                    RK_T a = RK_TANH(g[j]), i = RK_NAME(rk_sig)(g[H + j]);
                    RK_T f = RK_NAME(rk_sig)(g[2 * H + j]), og = RK_NAME(rk_sig)(g[3 * H + j]);
                    RK_T cv = a * i + f * cb[j];
                    g[j] = a, g[H + j] = i, g[2 * H + j] = f, g[3 * H + j] = og;
                    g[4 * H + j] = cv;
                    cb[j] = cv;
                    RK_T hv = og * RK_TANH(cv);
                    hb[j] = hv;
                    yb[j] = hv;
                }
            } else if (cell == CH_RNN_GRU) {
                const RK_T *q = tmp + b * GH;
                for (int64_t j = 0; j < H; j++) {
                    RK_T r = RK_NAME(rk_sig)(g[j] + q[j] + bh[j]);
                    RK_T z = RK_NAME(rk_sig)(g[H + j] + q[H + j] + bh[H + j]);
                    RK_T hh = q[2 * H + j] + bh[2 * H + j];
                    RK_T hbar = RK_TANH(g[2 * H + j] + r * hh);
                    g[j] = r, g[H + j] = z, g[2 * H + j] = hbar, g[3 * H + j] = hh;
                    RK_T hv = (1 - z) * hbar + z * hb[j];
                    hb[j] = hv;
                    yb[j] = hv;
                }
            } else {
                for (int64_t j = 0; j < H; j++) {
                    RK_T v = cell == CH_RNN_TANH ? RK_TANH(g[j]) : (g[j] > 0 ? g[j] : 0);
                    g[j] = v;
                    hb[j] = v;
                    yb[j] = v;
                }
            }
        }
    }
}

/* gh, gc (B, H) enter holding ghy, gcy and leave holding gh0, gc0.  dgx
 * (N, GH) and dgh (N, GH; may alias dgx but for GRU) get the gate
 * pre-activation gradients. */
static void RK_NAME(rk_backward_steps)(int cell, int reverse, int T, const int64_t *batch, const int64_t *off,
                                       int64_t H, const RK_T *wh, const RK_T *ws, const RK_T *gy, RK_T *gh, RK_T *gc,
                                       RK_T *dgx, RK_T *dgh) {
    int64_t G = rk_gates(cell), GH = G * H, W = rk_ws_width(cell, H);
    for (int k = 0; k < T; k++) {
        int t = reverse ? k : T - 1 - k;
        int64_t Bt = batch[t], o = off[t];
        if (Bt == 0) continue;
        for (int64_t b = 0; b < Bt; b++) {
            const RK_T *g = ws + (o + b) * W;
            RK_T *ghb = gh + b * H, *dx = dgx + (o + b) * GH, *dh = dgh + (o + b) * GH;
            if (gy) {
                const RK_T *gyb = gy + (o + b) * H;
                for (int64_t j = 0; j < H; j++) ghb[j] += gyb[j];
            }
            if (cell == CH_RNN_LSTM) {
                RK_T *gcb = gc + b * H;
                for (int64_t j = 0; j < H; j++) {
                    RK_T a = g[j], i = g[H + j], f = g[2 * H + j], og = g[3 * H + j];
                    RK_T co = RK_TANH(g[4 * H + j]), cp = g[5 * H + j];
                    RK_T gt = ghb[j] * og * (1 - co * co) + gcb[j];
                    dx[j] = gt * i * (1 - a * a);
                    dx[H + j] = gt * a * i * (1 - i);
                    dx[2 * H + j] = gt * cp * f * (1 - f);
                    dx[3 * H + j] = ghb[j] * co * og * (1 - og);
                    gcb[j] = gt * f;
                }
            } else if (cell == CH_RNN_GRU) {
                const RK_T *hpv = g + 4 * H;
                for (int64_t j = 0; j < H; j++) {
                    RK_T r = g[j], z = g[H + j], hbar = g[2 * H + j], hh = g[3 * H + j];
                    RK_T gv = ghb[j];
                    RK_T dpre_h = gv * (1 - z) * (1 - hbar * hbar);
                    RK_T dpre_z = gv * (hpv[j] - hbar) * z * (1 - z);
                    RK_T dpre_r = dpre_h * hh * r * (1 - r);
                    dx[j] = dpre_r, dx[H + j] = dpre_z, dx[2 * H + j] = dpre_h;
                    dh[j] = dpre_r, dh[H + j] = dpre_z, dh[2 * H + j] = dpre_h * r;
                    ghb[j] = gv * z; /* the direct path; the GEMM below adds the rest */
                }
            } else {
                for (int64_t j = 0; j < H; j++) {
                    RK_T v = g[j];
                    dx[j] = cell == CH_RNN_TANH ? ghb[j] * (1 - v * v) : (v > 0 ? ghb[j] : 0);
                }
            }
        }
        RK_NAME(rk_gemm)(0, 0, Bt, H, GH, dgh + o * GH, GH, wh, H, cell == CH_RNN_GRU ? 1 : 0, gh, H);
    }
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
#undef RK_GEMM

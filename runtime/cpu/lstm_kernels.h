/*
 * lstm_kernels.h -- typed LSTM cell kernels (F.lstm), included by lstm.c
 * once per element type with LK_T, LK_NAME, LK_TANH, LK_SIG set.
 *
 * Layout: row b of x holds 4*US gate values, unit j = u*S + s has its gate
 * k at u*4S + k*S + s (Chainer's x.reshape(B, U, 4, *S)); c rows hold US.
 */

static void LK_NAME(lk_forward)(const LK_T *cp, const LK_T *x, LK_T *c, LK_T *h, int64_t B, int64_t Bc,
                                int64_t U, int64_t S) {
    int64_t US = U * S;
    CH_PAR_FOR(B * US * 4 >= CH_PARALLEL_GRAIN, int64_t b = 0; b < B; b++, {
        const LK_T *xr = x + b * 4 * US;
        const LK_T *cpr = cp + b * US;
        LK_T *cr = c + b * US, *hr = h + b * US;
        for (int64_t u = 0; u < U; u++) {
            const LK_T *g = xr + u * 4 * S;
            for (int64_t s = 0; s < S; s++) {
                LK_T a = LK_TANH(g[s]), i = LK_SIG(g[S + s]);
                LK_T f = LK_SIG(g[2 * S + s]), o = LK_SIG(g[3 * S + s]);
                int64_t j = u * S + s;
                LK_T cv = a * i + f * cpr[j];
                cr[j] = cv;
                hr[j] = o * LK_TANH(cv);
            }
        }
    });
    if (Bc > B) memcpy(c + B * US, cp + B * US, sizeof(LK_T) * (size_t)((Bc - B) * US));
}

/* gc, gh may be NULL (zero). */
static void LK_NAME(lk_backward)(const LK_T *cp, const LK_T *x, const LK_T *gc, const LK_T *gh, LK_T *gcp, LK_T *gx,
                                 int64_t B, int64_t Bc, int64_t U, int64_t S) {
    int64_t US = U * S;
    CH_PAR_FOR(B * US * 4 >= CH_PARALLEL_GRAIN, int64_t b = 0; b < B; b++, {
        const LK_T *xr = x + b * 4 * US;
        LK_T *gxr = gx + b * 4 * US;
        for (int64_t u = 0; u < U; u++) {
            const LK_T *g = xr + u * 4 * S;
            LK_T *gg = gxr + u * 4 * S;
            for (int64_t s = 0; s < S; s++) {
                int64_t j = b * US + u * S + s;
                LK_T a = LK_TANH(g[s]), i = LK_SIG(g[S + s]);
                LK_T f = LK_SIG(g[2 * S + s]), o = LK_SIG(g[3 * S + s]);
                LK_T cpv = cp[j];
                LK_T co = LK_TANH(a * i + f * cpv);
                LK_T ghv = gh ? gh[j] : 0, gcv = gc ? gc[j] : 0;
                LK_T gt = ghv * o * (1 - co * co) + gcv; /* total gradient of c */
                gcp[j] = gt * f;
                gg[s] = gt * i * (1 - a * a);
                gg[S + s] = gt * a * i * (1 - i);
                gg[2 * S + s] = gt * cpv * f * (1 - f);
                gg[3 * S + s] = ghv * co * o * (1 - o);
            }
        }
    });
    /* rows beyond x's batch pass c_prev straight through */
    for (int64_t j = B * US; j < Bc * US; j++) gcp[j] = gc ? gc[j] : 0;
}

/* Gradients of <ggcp, gcp> + <ggx, gx> with respect to (cp, x, gc, gh);
 * ggcp/ggx may be NULL (zero). */
static void LK_NAME(lk_grad_grad)(const LK_T *cp, const LK_T *x, const LK_T *gc, const LK_T *gh, const LK_T *ggcp,
                                  const LK_T *ggx, LK_T *o_cp, LK_T *o_x, LK_T *o_gc, LK_T *o_gh, int64_t B,
                                  int64_t Bc, int64_t U, int64_t S) {
    int64_t US = U * S;
    CH_PAR_FOR(B * US * 4 >= CH_PARALLEL_GRAIN, int64_t b = 0; b < B; b++, {
        const LK_T *xr = x + b * 4 * US;
        const LK_T *ggr = ggx ? ggx + b * 4 * US : NULL;
        LK_T *oxr = o_x + b * 4 * US;
        for (int64_t u = 0; u < U; u++) {
            const LK_T *g = xr + u * 4 * S;
            LK_T *ox = oxr + u * 4 * S;
            for (int64_t s = 0; s < S; s++) {
                int64_t j = b * US + u * S + s;
                LK_T a = LK_TANH(g[s]), i = LK_SIG(g[S + s]);
                LK_T f = LK_SIG(g[2 * S + s]), o = LK_SIG(g[3 * S + s]);
                LK_T cpv = cp[j];
                LK_T co = LK_TANH(a * i + f * cpv);
                LK_T ghv = gh ? gh[j] : 0, gcv = gc ? gc[j] : 0;
                LK_T gA = 0, gI = 0, gF = 0, gO = 0;
                if (ggr) {
                    const LK_T *q = ggr + u * 4 * S;
                    gA = q[s], gI = q[S + s], gF = q[2 * S + s], gO = q[3 * S + s];
                }
                LK_T gCP = ggcp ? ggcp[j] : 0;
                LK_T dco2 = 1 - co * co, da2 = 1 - a * a, di = i * (1 - i), df = f * (1 - f), dO = o * (1 - o);
                LK_T gt = ghv * o * dco2 + gcv;
                /* coefficient of gt in the upstream product */
                LK_T Sg = gCP * f + gA * i * da2 + gI * a * di + gF * cpv * df;
                o_gc[j] = Sg;
                o_gh[j] = Sg * o * dco2 + gO * co * dO;
                LK_T dc = (Sg * ghv * o * (-2 * co) + gO * ghv * dO) * dco2;
                LK_T d_o = Sg * ghv * dco2 + gO * ghv * co * (1 - 2 * o);
                LK_T d_a = gt * (-2 * gA * i * a + gI * di) + dc * i;
                LK_T d_i = gt * (gA * da2 + gI * a * (1 - 2 * i)) + dc * a;
                LK_T d_f = gt * (gCP + gF * cpv * (1 - 2 * f)) + dc * cpv;
                o_cp[j] = gt * gF * df + dc * f;
                ox[s] = d_a * da2;
                ox[S + s] = d_i * di;
                ox[2 * S + s] = d_f * df;
                ox[3 * S + s] = d_o * dO;
            }
        }
    });
    for (int64_t j = B * US; j < Bc * US; j++) {
        o_cp[j] = 0;
        o_gc[j] = ggcp ? ggcp[j] : 0;
    }
}

#undef LK_T
#undef LK_NAME
#undef LK_TANH
#undef LK_SIG

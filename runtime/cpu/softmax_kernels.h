/*
 * softmax_kernels.h -- typed (O, N, I) softmax kernels, included by
 * softmax.c once per element type with SM_T, SM_NAME, SM_EXP, SM_LOG set.
 */

#ifndef SM_FOR_EACH_ITEM
/* Runs the statements for every item of an (O, N, I) softmax: an outer
 * position and a tile of up to SM_TILE inner columns, bound as base (its
 * offset, o N I + i0) and w (its width); in parallel when the work is large. */
#define SM_FOR_EACH_ITEM(O, N, I, ...)                                          \
    do {                                                                        \
        int64_t tiles_ = ((I) + SM_TILE - 1) / SM_TILE, items_ = (O) * tiles_;  \
        if ((N) == 0 || items_ == 0)                                            \
            break;                                                              \
        int par_ = (O) * (N) * (I) > CH_PARALLEL_GRAIN && items_ > 1;           \
        CH_PAR_FOR(par_, int64_t k = 0; k < items_; k++, {                      \
            int64_t i0 = (k % tiles_) * SM_TILE;                                \
            int64_t w = (I) - i0 < SM_TILE ? (I) - i0 : SM_TILE;                \
            int64_t base = (k / tiles_) * (N) * (I) + i0;                       \
            __VA_ARGS__                                                         \
        });                                                                     \
    } while (0)
#endif

/* One item: outer position o, columns [i0, i0 + w). */
static void SM_NAME(sm_item)(const SM_T *x, SM_T *y, int64_t N, int64_t I, int64_t w, int lg) {
    if (w == 1 && I == 1) {
        /* a contiguous row; four independent lanes break the dependency
         * chains of the max and the sum.  A NaN need not win the max: it
         * turns the sum, hence the whole row, into NaN anyway (as NumPy). */
        SM_T m4[4] = {-INFINITY, -INFINITY, -INFINITY, -INFINITY};
        int64_t j = 0;
        for (; j + 4 <= N; j += 4)
            for (int k = 0; k < 4; k++) m4[k] = x[j + k] > m4[k] ? x[j + k] : m4[k];
        for (; j < N; j++) m4[0] = x[j] > m4[0] ? x[j] : m4[0];
        SM_T m = m4[0];
        for (int k = 1; k < 4; k++) m = m4[k] > m ? m4[k] : m;
        double s4[4] = {0, 0, 0, 0};
        j = 0;
        if (lg) {
            for (; j + 4 <= N; j += 4)
                for (int k = 0; k < 4; k++) s4[k] += SM_EXP(x[j + k] - m);
            for (; j < N; j++) s4[0] += SM_EXP(x[j] - m);
            /* (x - m) - log(s): x - m is exact, m + log(s) would round */
            SM_T ls = (SM_T)SM_LOG((s4[0] + s4[1]) + (s4[2] + s4[3]));
            for (j = 0; j < N; j++) y[j] = (x[j] - m) - ls;
        } else {
            for (; j + 4 <= N; j += 4)
                for (int k = 0; k < 4; k++) {
                    SM_T e = SM_EXP(x[j + k] - m);
                    y[j + k] = e;
                    s4[k] += e;
                }
            for (; j < N; j++) {
                SM_T e = SM_EXP(x[j] - m);
                y[j] = e;
                s4[0] += e;
            }
            SM_T inv = (SM_T)(1.0 / ((s4[0] + s4[1]) + (s4[2] + s4[3])));
            for (j = 0; j < N; j++) y[j] *= inv;
        }
        return;
    }
    SM_T m[SM_TILE];
    double s[SM_TILE];
    for (int64_t i = 0; i < w; i++) {
        m[i] = -INFINITY;
        s[i] = 0;
    }
    for (int64_t j = 0; j < N; j++) {
        const SM_T *r = x + j * I;
        for (int64_t i = 0; i < w; i++)
            if (r[i] > m[i] || r[i] != r[i]) m[i] = r[i];
    }
    for (int64_t j = 0; j < N; j++) {
        const SM_T *r = x + j * I;
        SM_T *o = y + j * I;
        for (int64_t i = 0; i < w; i++) {
            SM_T e = SM_EXP(r[i] - m[i]);
            if (!lg) o[i] = e;
            s[i] += e;
        }
    }
    if (lg) {
        SM_T ls[SM_TILE];
        for (int64_t i = 0; i < w; i++) ls[i] = (SM_T)SM_LOG(s[i]);
        for (int64_t j = 0; j < N; j++) {
            const SM_T *r = x + j * I;
            SM_T *o = y + j * I;
            for (int64_t i = 0; i < w; i++) o[i] = (r[i] - m[i]) - ls[i];
        }
    } else {
        SM_T inv[SM_TILE];
        for (int64_t i = 0; i < w; i++) inv[i] = (SM_T)(1.0 / s[i]);
        for (int64_t j = 0; j < N; j++) {
            SM_T *o = y + j * I;
            for (int64_t i = 0; i < w; i++) o[i] *= inv[i];
        }
    }
}

static void SM_NAME(softmax_fwd)(const SM_T *x, SM_T *y, int64_t O, int64_t N, int64_t I, int lg) {
    SM_FOR_EACH_ITEM(O, N, I, SM_NAME(sm_item)(x + base, y + base, N, I, w, lg););
}

/* Gradient of one item. */
static void SM_NAME(sm_grad_item)(const SM_T *y, const SM_T *gy, SM_T *gx, int64_t N, int64_t I, int64_t w,
                                  int lg) {
    double s[SM_TILE];
    for (int64_t i = 0; i < w; i++) s[i] = 0;
    for (int64_t j = 0; j < N; j++) {
        const SM_T *a = y + j * I, *g = gy + j * I;
        if (lg)
            for (int64_t i = 0; i < w; i++) s[i] += g[i];
        else
            for (int64_t i = 0; i < w; i++) s[i] += (double)g[i] * a[i];
    }
    SM_T st[SM_TILE];
    for (int64_t i = 0; i < w; i++) st[i] = (SM_T)s[i];
    for (int64_t j = 0; j < N; j++) {
        const SM_T *a = y + j * I, *g = gy + j * I;
        SM_T *o = gx + j * I;
        if (lg)
            for (int64_t i = 0; i < w; i++) o[i] = g[i] - SM_EXP(a[i]) * st[i];
        else
            for (int64_t i = 0; i < w; i++) o[i] = a[i] * (g[i] - st[i]);
    }
}

static void SM_NAME(softmax_bwd)(const SM_T *y, const SM_T *gy, SM_T *gx, int64_t O, int64_t N, int64_t I,
                                 int lg) {
    SM_FOR_EACH_ITEM(O, N, I, SM_NAME(sm_grad_item)(y + base, gy + base, gx + base, N, I, w, lg););
}

#undef SM_T
#undef SM_NAME
#undef SM_EXP
#undef SM_LOG

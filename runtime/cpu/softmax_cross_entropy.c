/* softmax_cross_entropy.c -- the CPU kernel of the fused softmax
 * cross-entropy over axis 1 (front door, with the label checks:
 * runtime/ops/softmax_cross_entropy.c).
 *
 * One pass per label position reads the C logits of that position three
 * times (max, sum of exponentials, outputs) and writes the loss, and, when
 * asked, the gradient (softmax - onehot) * weight and the softmax itself.
 * Computing the gradient here saves a second walk over the logits in
 * backward, which is where most of the time of a classifier's loss goes.
 * x is viewed as (N, C, S) with S the product of the spatial axes.
 *
 * float32 rows (S = 1, the classifier case) take sce_row_f32: one
 * vectorised exp per logit (rnn_math.h) instead of two libm calls in
 * double; the exponentials are kept in the gradient (or softmax) buffer
 * and scaled by 1/sum.  A language model's (20, 10000) loss spent most of
 * its time in exp.
 */
#include "../core/internal.h"
#include "../core/kernels.h"

#include <math.h>
#include <stdlib.h>

#include "rnn_math.h"

/* The per-position kernel for one working type. */
#define DEFINE_SCE(NAME, T, EXP, LOG)                                                          \
    static void NAME(const T *x, const int64_t *tl, const T *w, int64_t ignore, int64_t N,      \
                     int64_t C, int64_t S, T *loss, T *grad, T *y) {                            \
        int64_t P = N * S;                                                                      \
        int par = P * C >= CH_PARALLEL_GRAIN;                                                   \
        CH_PAR_FOR(par, int64_t p = 0; p < P; p++, {                                            \
            int64_t n = p / S, s = p % S;                                                       \
            const T *xp = x + n * C * S + s;                                                    \
            double m = -INFINITY;                                                               \
            for (int64_t c = 0; c < C; c++) {                                                   \
                double v = (double)xp[c * S];                                                   \
                if (v > m) m = v;                                                               \
            }                                                                                   \
            double sum = 0.0;                                                                   \
            for (int64_t c = 0; c < C; c++) sum += EXP((double)xp[c * S] - m);                  \
            double lse = m + LOG(sum);                                                          \
            int64_t lab = tl[p];                                                                \
            int valid = lab != ignore;                                                          \
            double wt = valid ? (w ? (double)w[lab] : 1.0) : 0.0;                               \
            loss[p] = valid ? (T)(-((double)xp[lab * S] - lse) * wt) : (T)0;                    \
            if (grad || y) {                                                                    \
                T *gp = grad ? grad + n * C * S + s : NULL;                                     \
                T *yp = y ? y + n * C * S + s : NULL;                                           \
                for (int64_t c = 0; c < C; c++) {                                               \
                    double pc = EXP((double)xp[c * S] - lse);                                   \
                    if (yp) yp[c * S] = (T)pc;                                                  \
                    if (gp) gp[c * S] = (T)((pc - (c == lab ? 1.0 : 0.0)) * wt);                \
                }                                                                               \
            }                                                                                   \
        });                                                                                     \
    }

DEFINE_SCE(sce_f32, float, exp, log)

/* One float32 row of C contiguous logits; lab < 0 marks an ignored row
 * (weight 0).  The exponentials go to grad, else y, else nowhere.  Sums run in 8 double lanes (independent chains, and no
 * float rounding over 10^4 terms). */
#define SCE_ROW_LANES 8
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
__attribute__((target_clones("avx2", "default")))
#endif
static void sce_row_f32(const float *x, int64_t C, int64_t lab, double wt, float *loss, float *grad, float *y) {
    float mv[SCE_ROW_LANES];
    for (int k = 0; k < SCE_ROW_LANES; k++) mv[k] = -INFINITY;
    int64_t c = 0;
    for (; c + SCE_ROW_LANES <= C; c += SCE_ROW_LANES)
        for (int k = 0; k < SCE_ROW_LANES; k++) mv[k] = x[c + k] > mv[k] ? x[c + k] : mv[k];
    float m = -INFINITY;
    for (; c < C; c++) m = x[c] > m ? x[c] : m;
    for (int k = 0; k < SCE_ROW_LANES; k++) m = mv[k] > m ? mv[k] : m;
    float *e = grad ? grad : y;
    double sv[SCE_ROW_LANES] = {0};
    for (c = 0; c + SCE_ROW_LANES <= C; c += SCE_ROW_LANES)
        for (int k = 0; k < SCE_ROW_LANES; k++) {
            float d = x[c + k] - m;
            float v = d < -87.0f ? 0.0f : rnn_expf(d); /* below e^-87 the sum cannot tell */
            if (e) e[c + k] = v;
            sv[k] += (double)v;
        }
    double sum = 0.0;
    for (; c < C; c++) {
        float d = x[c] - m;
        float v = d < -87.0f ? 0.0f : rnn_expf(d);
        if (e) e[c] = v;
        sum += (double)v;
    }
    for (int k = 0; k < SCE_ROW_LANES; k++) sum += sv[k];
    double lse = (double)m + log(sum);
    *loss = lab >= 0 ? (float)(-((double)x[lab] - lse) * wt) : 0.0f;
    float inv = (float)(1.0 / sum);
    if (y) {
        if (y != e) memcpy(y, e, (size_t)C * sizeof *y);
        for (c = 0; c < C; c++) y[c] *= inv;
    }
    if (grad) {
        float gs = (float)(wt / sum);
        for (c = 0; c < C; c++) grad[c] *= gs;
        if (lab >= 0) grad[lab] -= (float)wt;
    }
}

/* float32 with S = 1: rows in parallel above the grain. */
static void sce_rows_f32(const float *x, const int64_t *tl, const float *w, int64_t ignore, int64_t N, int64_t C,
                         float *loss, float *grad, float *y) {
    int par = N * C >= CH_PARALLEL_GRAIN && N > 1;
    CH_PAR_FOR(par, int64_t n = 0; n < N; n++, {
        int64_t lab = tl[n];
        int valid = lab != ignore;
        double wt = valid ? (w ? (double)w[lab] : 1.0) : 0.0;
        sce_row_f32(x + n * C, C, valid ? lab : -1, wt, loss + n, grad ? grad + n * C : NULL, y ? y + n * C : NULL);
    });
}
DEFINE_SCE(sce_f64, double, exp, log)

/* The kernel (core/kernels.h): s->x (N, C, S) = (O, N, I) contiguous
 * float32/float64, labels checked, loss/grad/prob allocated. */
ch_status ch_cpu_softmax_cross_entropy(const ch_softmax_args *s) {
    int64_t N = s->O, C = s->N, S = s->I;
    const int64_t *tl = (const int64_t *)ch_base(s->labels);
    const ch_tensor *wc = s->weight;
    ch_tensor *go = s->grad, *yo = s->prob;
    if (s->x->dt == CH_FLOAT64)
        sce_f64((const double *)ch_base(s->x), tl, wc ? (const double *)ch_base(wc) : NULL, s->ignore_label, N, C, S,
                (double *)ch_base(s->out), go ? (double *)ch_base(go) : NULL, yo ? (double *)ch_base(yo) : NULL);
    else if (S == 1)
        sce_rows_f32((const float *)ch_base(s->x), tl, wc ? (const float *)ch_base(wc) : NULL, s->ignore_label, N, C,
                     (float *)ch_base(s->out), go ? (float *)ch_base(go) : NULL, yo ? (float *)ch_base(yo) : NULL);
    else
        sce_f32((const float *)ch_base(s->x), tl, wc ? (const float *)ch_base(wc) : NULL, s->ignore_label, N, C, S,
                (float *)ch_base(s->out), go ? (float *)ch_base(go) : NULL, yo ? (float *)ch_base(yo) : NULL);
    return CH_OK;
}

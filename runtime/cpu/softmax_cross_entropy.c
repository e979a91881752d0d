/* softmax_cross_entropy.c -- fused softmax cross-entropy over axis 1.
 *
 * One pass per label position reads the C logits of that position three
 * times (max, sum of exponentials, outputs) and writes the loss, and, when
 * asked, the gradient (softmax - onehot) * weight and the softmax itself.
 * Computing the gradient here saves a second walk over the logits in
 * backward, which is where most of the time of a classifier's loss goes.
 * x is viewed as (N, C, S) with S the product of the spatial axes; labels
 * are checked before anything is computed so that a bad label never
 * produces numbers.
 *
 * float32 rows (S = 1, the classifier case) take sce_row_f32: one
 * vectorised exp per logit (rnn_math.h) instead of two libm calls in
 * double; the exponentials are kept in the gradient (or softmax) buffer
 * and scaled by 1/sum.  A language model's (20, 10000) loss spent most of
 * its time in exp.
 *
 * On CUDA tensors the labels are checked on a host copy first (the same
 * errors, before any work), then one block per label position computes
 * loss, gradient and softmax in double (runtime/cuda/softmax.cu).
 */
#include "../core/internal.h"
#include "../core/device_ops.h"

#include <math.h>
#include <stdlib.h>

#include "rnn_math.h"

#define SCE_FN "softmax_cross_entropy"

/* Label checks: shape (N, d1, ...) and values in 0..C-1 or ignore_label. */
static ch_status check_labels(const ch_tensor *x, const ch_tensor *t, const int64_t *tl, int64_t n,
                              int64_t C, int64_t ignore, int64_t *count) {
    int64_t cnt = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t v = tl[i];
        if (v == ignore) continue;
        if (v < 0 || v >= C) {
            char buf[CH_SHAPE_BUF];
            return ch_fail(CH_ERR_ARG,
                           SCE_FN ": label t[%lld] (flat position in t of shape %s) is %lld, out of range for "
                           "%lld classes (expected 0..%lld, or ignore_label %lld)",
                           (long long)i, ch_shape_str(buf, sizeof buf, t->nd, t->dim), (long long)v,
                           (long long)C, (long long)(C - 1), (long long)ignore);
        }
        cnt++;
    }
    CH_UNUSED(x);
    *count = cnt;
    return CH_OK;
}

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

/* Replaces *t (a working-dtype result) by a copy of dtype dt. */
static ch_status cast_result(ch_tensor **t, ch_dtype dt) {
    if (!*t || (*t)->dt == (int32_t)dt) return CH_OK;
    ch_tensor *o = NULL;
    ch_status st;
    if ((*t)->dev != CH_CPU) {
        st = ch_astype(*t, dt, &o);
    } else {
        CH_TRY(ch_tensor_new_like(*t, dt, &o));
        st = ch_cpu_copy(o, *t);
    }
    ch_tensor_release(*t);
    *t = o;
    if (st != CH_OK) {
        ch_tensor_release(o);
        *t = NULL;
    }
    return st;
}

ch_status ch_softmax_cross_entropy(const ch_tensor *x, const ch_tensor *t, const ch_tensor *class_weight,
                                   int64_t ignore_label, ch_tensor **loss, ch_tensor **grad, ch_tensor **y,
                                   int64_t *count) {
    CH_CHECK_ARG(x, SCE_FN, "x");
    CH_CHECK_ARG(t, SCE_FN, "t");
    if (x->dev != t->dev)
        return ch_same_device(SCE_FN, "x", x, "t", t);
    if (!loss) return ch_fail(CH_ERR_ARG, SCE_FN ": loss result pointer is NULL");
    if (!ch_dtype_is_float((ch_dtype)x->dt))
        return ch_fail(CH_ERR_DTYPE, SCE_FN ": x must be a float tensor (got %s)", ch_dtype_name((ch_dtype)x->dt));
    if (ch_dtype_is_float((ch_dtype)t->dt) || t->dt == CH_BOOL)
        return ch_fail(CH_ERR_DTYPE, SCE_FN ": labels t must be an integer tensor (int32 or int64), got %s",
                       ch_dtype_name((ch_dtype)t->dt));
    char b1[CH_SHAPE_BUF], b2[CH_SHAPE_BUF];
    if (x->nd < 2)
        return ch_fail(CH_ERR_SHAPE, SCE_FN ": x must have at least 2 dimensions (N, C, ...), got shape %s",
                       ch_shape_str(b1, sizeof b1, x->nd, x->dim));
    int ok = t->nd == x->nd - 1 && t->dim[0] == x->dim[0];
    for (int i = 2; ok && i < x->nd; i++) ok = t->dim[i - 1] == x->dim[i];
    if (!ok)
        return ch_fail(CH_ERR_SHAPE, SCE_FN ": labels t of shape %s do not fit x of shape %s (expected x's shape "
                       "without axis 1)", ch_shape_str(b1, sizeof b1, t->nd, t->dim),
                       ch_shape_str(b2, sizeof b2, x->nd, x->dim));
    int64_t N = x->dim[0], C = x->dim[1], S = 1;
    for (int i = 2; i < x->nd; i++) S *= x->dim[i];
    if (class_weight) {
        CH_CHECK_ARG(class_weight, SCE_FN, "class_weight");
        if (class_weight->dev != x->dev)
            return ch_same_device(SCE_FN, "x", x, "class_weight", class_weight);
        if (class_weight->nd != 1 || class_weight->dim[0] != C)
            return ch_fail(CH_ERR_SHAPE, SCE_FN ": class_weight must have shape (%lld,) (one weight per class), got %s",
                           (long long)C, ch_shape_str(b1, sizeof b1, class_weight->nd, class_weight->dim));
    }
    ch_dtype wt = x->dt == CH_FLOAT64 ? CH_FLOAT64 : CH_FLOAT32;
    ch_tensor *xc = NULL, *tc = NULL, *wc = NULL, *lo = NULL, *go = NULL, *yo = NULL;
    ch_status st = ch_contiguous_as(t, CH_INT64, &tc);
    int64_t cnt = 0;
    bool gpu = x->dev != CH_CPU;
    if (st == CH_OK && gpu) {
        ch_tensor *th = NULL;
        st = ch_to_device(tc, CH_CPU, &th);
        if (st == CH_OK) st = check_labels(x, t, (const int64_t *)ch_base(th), th->numel, C, ignore_label, &cnt);
        ch_tensor_release(th);
    } else if (st == CH_OK) {
        st = check_labels(x, t, (const int64_t *)ch_base(tc), tc->numel, C, ignore_label, &cnt);
    }
    if (st == CH_OK) st = ch_contiguous_as(x, wt, &xc);
    if (st == CH_OK && class_weight) st = ch_contiguous_as(class_weight, wt, &wc);
    if (st == CH_OK) st = ch_tensor_new(wt, t->nd, t->dim, x->dev, &lo);
    if (st == CH_OK && grad) st = ch_tensor_new(wt, x->nd, x->dim, x->dev, &go);
    if (st == CH_OK && y) st = ch_tensor_new(wt, x->nd, x->dim, x->dev, &yo);
    if (st == CH_OK && gpu) {
        ch_cuda_softmax d = {.kind = CH_CUDA_SOFTMAX_SCE, .O = N, .N = C, .I = S, .x = xc, .out = lo, .labels = tc,
                             .weight = wc, .ignore_label = ignore_label, .grad = go, .prob = yo};
        if (N * S > 0)
            st = ch_device_softmax(SCE_FN, &d);
        else if (go)
            st = ch_fill(go, 0);
    } else if (st == CH_OK && N * S > 0) {
        const int64_t *tl = (const int64_t *)ch_base(tc);
        if (wt == CH_FLOAT64)
            sce_f64((const double *)ch_base(xc), tl, wc ? (const double *)ch_base(wc) : NULL, ignore_label, N, C, S,
                    (double *)ch_base(lo), go ? (double *)ch_base(go) : NULL, yo ? (double *)ch_base(yo) : NULL);
        else if (S == 1)
            sce_rows_f32((const float *)ch_base(xc), tl, wc ? (const float *)ch_base(wc) : NULL, ignore_label, N, C,
                         (float *)ch_base(lo), go ? (float *)ch_base(go) : NULL, yo ? (float *)ch_base(yo) : NULL);
        else
            sce_f32((const float *)ch_base(xc), tl, wc ? (const float *)ch_base(wc) : NULL, ignore_label, N, C, S,
                    (float *)ch_base(lo), go ? (float *)ch_base(go) : NULL, yo ? (float *)ch_base(yo) : NULL);
    }
    if (st == CH_OK && !gpu && go && N * S == 0) memset(ch_base(go), 0, (size_t)go->numel * ch_dtype_size(wt));
    if (st == CH_OK) st = cast_result(&lo, (ch_dtype)x->dt);
    if (st == CH_OK) st = cast_result(&go, (ch_dtype)x->dt);
    if (st == CH_OK) st = cast_result(&yo, (ch_dtype)x->dt);
    ch_tensor_release(xc);
    ch_tensor_release(tc);
    ch_tensor_release(wc);
    if (st != CH_OK) {
        ch_tensor_release(lo);
        ch_tensor_release(go);
        ch_tensor_release(yo);
        return st;
    }
    *loss = lo;
    if (grad) *grad = go;
    if (y) *y = yo;
    if (count) *count = cnt;
    return CH_OK;
}

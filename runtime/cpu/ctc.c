/* ctc.c -- connectionist temporal classification (Graves et al. 2006).
 *
 * The label sequence l (length L) is extended with blanks to the path
 * b l1 b l2 ... lL b (length 2L+1).  alpha (forward) and beta (backward)
 * are computed in log space, both including the emission of their own
 * step, so the posterior of path position s at time t is
 * alpha+beta-logp(emission)-logZ.  The gradient with respect to the logits
 * of a softmax output is softmax - posterior summed per symbol.  Sequences
 * of a batch are independent and run in parallel; each works in double.
 */
#include "../core/internal.h"

#include <math.h>
#include <stdlib.h>

#define CTC_FN "connectionist_temporal_classification"

static inline double lse2(double a, double b) {
    if (a == -INFINITY) return b;
    if (b == -INFINITY) return a;
    double m = a > b ? a : b;
    return m + log(exp(a - m) + exp(b - m));
}

/* Reads an optional (B,) integer length vector into out (default dflt). */
static ch_status read_lengths(const ch_tensor *v, int64_t B, int64_t dflt, int64_t lo, const char *arg,
                              int64_t *out) {
    if (!v) {
        for (int64_t b = 0; b < B; b++) out[b] = dflt;
        return CH_OK;
    }
    CH_CHECK_CPU(v, CTC_FN, arg);
    if (ch_dtype_is_float((ch_dtype)v->dt) || v->dt == CH_BOOL)
        return ch_fail(CH_ERR_DTYPE, CTC_FN ": %s must be an integer tensor, got %s", arg,
                       ch_dtype_name((ch_dtype)v->dt));
    if (v->nd != 1 || v->dim[0] != B) {
        char buf[CH_SHAPE_BUF];
        return ch_fail(CH_ERR_SHAPE, CTC_FN ": %s must have shape (%lld,), got %s", arg, (long long)B,
                       ch_shape_str(buf, sizeof buf, v->nd, v->dim));
    }
    ch_tensor *c = NULL;
    CH_TRY(ch_contiguous_as(v, CH_INT64, &c));
    const int64_t *p = (const int64_t *)ch_base(c);
    for (int64_t b = 0; b < B; b++) {
        if (p[b] < lo || p[b] > dflt) {
            ch_status st = ch_fail(CH_ERR_ARG, CTC_FN ": %s[%lld] = %lld is out of range (expected %lld..%lld)", arg,
                                   (long long)b, (long long)p[b], (long long)lo, (long long)dflt);
            ch_tensor_release(c);
            return st;
        }
        out[b] = p[b];
    }
    ch_tensor_release(c);
    return CH_OK;
}

/* One sequence: x (T, B, V) contiguous double, returns -logZ; g (T,B,V) or NULL. */
static double ctc_one(const double *x, int64_t B, int64_t V, int64_t b, int64_t Tb, const int64_t *lab,
                      int64_t Lb, int64_t blank, double *g, int *oom) {
    /* Tb >= 1 (read_lengths): said here so that GCC does not warn about a
     * path where lp's first step is read but never written */
    if (Tb < 1) __builtin_unreachable();
    int64_t S = 2 * Lb + 1;
    double *lp = malloc(sizeof(double) * (size_t)(Tb * V));
    double *al = malloc(sizeof(double) * (size_t)(Tb * S));
    double *be = g ? malloc(sizeof(double) * (size_t)(Tb * S)) : NULL;
    int64_t *path = malloc(sizeof(int64_t) * (size_t)S);
    if (!lp || !al || !path || (g && !be)) {
        free(lp), free(al), free(be), free(path);
        *oom = 1;
        return 0;
    }
    for (int64_t s = 0; s < S; s++) path[s] = (s & 1) ? lab[s / 2] : blank;
    /* log_softmax per step */
    for (int64_t t = 0; t < Tb; t++) {
        const double *xt = x + (t * B + b) * V;
        double m = -INFINITY, sum = 0;
        for (int64_t k = 0; k < V; k++) if (xt[k] > m) m = xt[k];
        for (int64_t k = 0; k < V; k++) sum += exp(xt[k] - m);
        double lse = m + log(sum);
        for (int64_t k = 0; k < V; k++) lp[t * V + k] = xt[k] - lse;
    }
    /* forward */
    for (int64_t s = 0; s < S; s++) al[s] = -INFINITY;
    al[0] = lp[blank];
    if (S > 1) al[1] = lp[path[1]];
    for (int64_t t = 1; t < Tb; t++) {
        const double *prev = al + (t - 1) * S;
        double *cur = al + t * S;
        for (int64_t s = 0; s < S; s++) {
            double a = prev[s];
            if (s >= 1) a = lse2(a, prev[s - 1]);
            if (s >= 2 && path[s] != blank && path[s] != path[s - 2]) a = lse2(a, prev[s - 2]);
            cur[s] = a == -INFINITY ? -INFINITY : a + lp[t * V + path[s]];
        }
    }
    const double *last = al + (Tb - 1) * S;
    double logz = last[S - 1];
    if (S > 1) logz = lse2(logz, last[S - 2]);
    if (g) {
        /* backward */
        for (int64_t s = 0; s < S; s++) be[(Tb - 1) * S + s] = -INFINITY;
        be[(Tb - 1) * S + S - 1] = lp[(Tb - 1) * V + blank];
        if (S > 1) be[(Tb - 1) * S + S - 2] = lp[(Tb - 1) * V + path[S - 2]];
        for (int64_t t = Tb - 2; t >= 0; t--) {
            const double *nxt = be + (t + 1) * S;
            double *cur = be + t * S;
            for (int64_t s = 0; s < S; s++) {
                double a = nxt[s];
                if (s + 1 < S) a = lse2(a, nxt[s + 1]);
                if (s + 2 < S && path[s + 2] != blank && path[s + 2] != path[s]) a = lse2(a, nxt[s + 2]);
                cur[s] = a == -INFINITY ? -INFINITY : a + lp[t * V + path[s]];
            }
        }
        for (int64_t t = 0; t < Tb; t++) {
            double *gt = g + (t * B + b) * V;
            if (logz == -INFINITY) { /* impossible alignment: no gradient */
                for (int64_t k = 0; k < V; k++) gt[k] = 0;
                continue;
            }
            for (int64_t k = 0; k < V; k++) gt[k] = exp(lp[t * V + k]);
            for (int64_t s = 0; s < S; s++) {
                double v = al[t * S + s] + be[t * S + s];
                if (v == -INFINITY) continue;
                gt[path[s]] -= exp(v - lp[t * V + path[s]] - logz);
            }
        }
    }
    free(lp), free(al), free(be), free(path);
    return -logz;
}

/* Sequence b of the batch: lp[b], its gradient into g (when given); sets
 * *oom (atomically) when its tables cannot be allocated. */
static void ctc_sequence(const double *x, int64_t B, int64_t V, int64_t b, const int64_t *tlen, const int64_t *tl,
                         int64_t L, const int64_t *llen, int64_t blank, double *g, double *lp, int *oom) {
    int o = 0;
    lp[b] = ctc_one(x, B, V, b, tlen[b], tl + b * L, llen[b], blank, g, &o);
    if (o) ch_flag_set(oom);
}

ch_status ch_ctc_loss(int T, ch_tensor *const *xs, const ch_tensor *t, const ch_tensor *input_length,
                      const ch_tensor *label_length, int64_t blank, ch_tensor **loss, ch_tensor **grad) {
    char b1[CH_SHAPE_BUF], b2[CH_SHAPE_BUF];
    if (T < 1 || !xs) return ch_fail(CH_ERR_ARG, CTC_FN ": x must be a non-empty list of (B, V) arrays");
    if (!loss) return ch_fail(CH_ERR_ARG, CTC_FN ": loss result pointer is NULL");
    for (int i = 0; i < T; i++) {
        CH_CHECK_CPU(xs[i], CTC_FN, "x");
        if (!ch_dtype_is_float((ch_dtype)xs[i]->dt))
            return ch_fail(CH_ERR_DTYPE, CTC_FN ": x[%d] must be a float tensor, got %s", i,
                           ch_dtype_name((ch_dtype)xs[i]->dt));
        if (xs[i]->nd != 2)
            return ch_fail(CH_ERR_SHAPE, CTC_FN ": x[%d] must be 2-d (B, V), got shape %s", i,
                           ch_shape_str(b1, sizeof b1, xs[i]->nd, xs[i]->dim));
        if (xs[i]->dt != xs[0]->dt || !ch_same_shape(xs[i], xs[0]))
            return ch_fail(CH_ERR_SHAPE, CTC_FN ": x[%d] is %s %s but x[0] is %s %s (all steps must match)", i,
                           ch_dtype_name((ch_dtype)xs[i]->dt), ch_shape_str(b1, sizeof b1, xs[i]->nd, xs[i]->dim),
                           ch_dtype_name((ch_dtype)xs[0]->dt), ch_shape_str(b2, sizeof b2, xs[0]->nd, xs[0]->dim));
    }
    int64_t B = xs[0]->dim[0], V = xs[0]->dim[1];
    CH_CHECK_CPU(t, CTC_FN, "t");
    if (ch_dtype_is_float((ch_dtype)t->dt) || t->dt == CH_BOOL)
        return ch_fail(CH_ERR_DTYPE, CTC_FN ": labels t must be an integer tensor (int32), got %s",
                       ch_dtype_name((ch_dtype)t->dt));
    if (t->nd != 2 || t->dim[0] != B)
        return ch_fail(CH_ERR_SHAPE, CTC_FN ": labels t must have shape (%lld, L), got %s", (long long)B,
                       ch_shape_str(b1, sizeof b1, t->nd, t->dim));
    if (blank < 0 || blank >= V)
        return ch_fail(CH_ERR_ARG, CTC_FN ": blank_symbol %lld is out of range for %lld symbols (expected 0..%lld)",
                       (long long)blank, (long long)V, (long long)(V - 1));
    int64_t L = t->dim[1];
    int64_t *lens = malloc(sizeof(int64_t) * (size_t)(2 * (B > 0 ? B : 1)));
    if (!lens) return ch_fail(CH_ERR_MEMORY, CTC_FN ": out of memory");
    int64_t *tlen = lens, *llen = lens + B;
    ch_status st = read_lengths(input_length, B, T, 1, "input_length", tlen);
    if (st == CH_OK) st = read_lengths(label_length, B, L, 0, "label_length", llen);
    ch_tensor *tc = NULL, *xc = NULL, *lo = NULL, *go = NULL, *lo64 = NULL, *go64 = NULL;
    if (st == CH_OK) st = ch_contiguous_as(t, CH_INT64, &tc);
    if (st == CH_OK) {
        const int64_t *tl = (const int64_t *)ch_base(tc);
        for (int64_t b = 0; b < B && st == CH_OK; b++)
            for (int64_t j = 0; j < llen[b]; j++) {
                int64_t v = tl[b * L + j];
                if (v < 0 || v >= V) {
                    st = ch_fail(CH_ERR_ARG, CTC_FN ": label t[%lld, %lld] = %lld is out of range for %lld symbols "
                                 "(expected 0..%lld)", (long long)b, (long long)j, (long long)v, (long long)V,
                                 (long long)(V - 1));
                    break;
                }
            }
    }
    /* stack the steps into one (T, B, V) double buffer */
    int64_t dim3[3] = {T, B, V};
    if (st == CH_OK) st = ch_tensor_new(CH_FLOAT64, 3, dim3, CH_CPU, &xc);
    for (int i = 0; i < T && st == CH_OK; i++) {
        ch_tensor *v = NULL;
        int64_t d2[2] = {B, V}, s2[2] = {V, 1};
        st = ch_view_of(xc, 2, d2, s2, xc->offset + (int64_t)i * B * V, &v);
        if (st == CH_OK) st = ch_cpu_copy(v, xs[i]);
        ch_tensor_release(v);
    }
    if (st == CH_OK) st = ch_tensor_new(CH_FLOAT64, 1, &B, CH_CPU, &lo64);
    if (st == CH_OK && grad) {
        st = ch_tensor_new(CH_FLOAT64, 3, dim3, CH_CPU, &go64);
        if (st == CH_OK) memset(ch_base(go64), 0, sizeof(double) * (size_t)go64->numel);
    }
    if (st == CH_OK) {
        const double *x = (const double *)ch_base(xc);
        const int64_t *tl = (const int64_t *)ch_base(tc);
        double *lp = (double *)ch_base(lo64);
        double *g = go64 ? (double *)ch_base(go64) : NULL;
        int oom = 0;
        /* sequences differ in length: dynamic schedule, and none of OpenMP for
         * a small batch (a region costs more than a short sequence) */
        if (B > 1 && (int64_t)T * V * B >= 4096) {
#pragma omp parallel for schedule(dynamic, 1)
            for (int64_t b = 0; b < B; b++)
                ctc_sequence(x, B, V, b, tlen, tl, L, llen, blank, g, lp, &oom);
        } else {
            for (int64_t b = 0; b < B; b++)
                ctc_sequence(x, B, V, b, tlen, tl, L, llen, blank, g, lp, &oom);
        }
        if (oom) st = ch_fail(CH_ERR_MEMORY, CTC_FN ": out of memory for the forward-backward tables");
    }
    ch_dtype dt = (ch_dtype)xs[0]->dt;
    if (st == CH_OK) st = ch_tensor_new(dt, 1, &B, CH_CPU, &lo);
    if (st == CH_OK) st = ch_cpu_copy(lo, lo64);
    if (st == CH_OK && grad) st = ch_tensor_new(dt, 3, dim3, CH_CPU, &go);
    if (st == CH_OK && grad) st = ch_cpu_copy(go, go64);
    free(lens);
    ch_tensor_release(tc);
    ch_tensor_release(xc);
    ch_tensor_release(lo64);
    ch_tensor_release(go64);
    if (st != CH_OK) {
        ch_tensor_release(lo);
        ch_tensor_release(go);
        return st;
    }
    *loss = lo;
    if (grad) *grad = go;
    return CH_OK;
}
